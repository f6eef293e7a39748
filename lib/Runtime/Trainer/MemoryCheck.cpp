//===- MemoryCheck.cpp - Will this rank's run fit in the machine? ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/MemoryCheck.h"
#include "loom/Support/InputLimits.h"

#include <algorithm>
#include <cmath>

namespace loom::runtime::trainer {

namespace {

/// InputLimits' spelling of a byte count; a hostile spec's sums can exceed
/// what int64_t (and formatBytes) holds.
std::string bytesText(double bytes) {
  if (bytes >= 9.2e18)
    return "more than 8 EiB";
  return support::formatBytes(static_cast<int64_t>(bytes));
}

double blockBytes(const harness::TensorSpec &tensor, int floatBytes) {
  double elements = 1;
  for (int64_t dim : tensor.localShape)
    elements *= static_cast<double>(dim);
  return elements * (tensor.isInteger ? 8 : floatBytes);
}

} // namespace

RankMemoryNeed rankMemoryNeed(const harness::ProgramSpec &spec, int64_t rank,
                              int floatBytes) {
  RankMemoryNeed need;
  for (size_t i = 0; i < spec.arguments.size(); ++i)
    if (spec.ownsArgument(rank, i))
      need.arguments += blockBytes(spec.arguments[i], floatBytes);
  for (size_t i = 0; i < spec.results.size(); ++i)
    if (spec.computesResult(rank, i))
      need.results += blockBytes(spec.results[i], floatBytes);
  if (!spec.hostArenaBytes.empty()) {
    int64_t stage = std::max<int64_t>(spec.stageOf(rank), 0);
    if (static_cast<size_t>(stage) < spec.hostArenaBytes.size())
      need.arena = static_cast<double>(
          spec.hostArenaBytes[stage][floatBytes == 8 ? 1 : 0]);
  }
  return need;
}

std::optional<std::string>
checkRankMemory(const RankMemoryNeed &need, int64_t rank, int ranksHere,
                const std::optional<support::AvailableMemory> &available) {
  if (!available)
    return std::nullopt;
  double share = static_cast<double>(available->bytes) / std::max(ranksHere, 1);
  if (need.total() <= share)
    return std::nullopt;
  std::string message =
      "rank " + std::to_string(rank) + " needs at least " +
      bytesText(need.total()) + " of host memory (arguments " +
      bytesText(need.arguments) + ", results " + bytesText(need.results);
  if (need.arena > 0)
    message += ", step arena " + bytesText(need.arena);
  message += "), but this machine has " + bytesText(available->bytes) +
             " available (" + available->source + ")";
  if (ranksHere > 1)
    message += " for its " + std::to_string(ranksHere) + " ranks, " +
               bytesText(share) + " each";
  message += ": run on more devices (a plan that splits the model further), "
             "shrink the model or the batch, or pass --skip-memory-check to "
             "try anyway";
  return message;
}

} // namespace loom::runtime::trainer

//===- MemoryCheck.h - Will this rank's run fit in the machine? -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Before it allocates anything, the trainer adds up what each rank is sure
// to hold — its blocks of the arguments (parameters, optimizer states, the
// batch) and of the results, and on the host its stage's step arena — and
// refuses to start when that exceeds the rank's share of the machine's
// available memory (loom/Support/AvailableMemory.h). A plan searched
// for a cluster was checked against the device's memory at compile time;
// a program emitted without one (`loomc --devices N`, `--mesh`) was not,
// and without this check a model that cannot fit ends in std::bad_alloc or
// the OOM killer in the first step (docs/Testing.md, "Bad input").
//
// The sum is a lower bound of the run's peak (the kernels' and MPI's own
// buffers, checkpoint staging and the program's code come on top), so the
// check refuses only runs that cannot work; `--skip-memory-check` turns it
// off for machines whose accounting it misreads.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_TRAINER_MEMORYCHECK_H
#define LOOM_RUNTIME_TRAINER_MEMORYCHECK_H

#include "loom/Runtime/Harness/Harness.h"
#include "loom/Support/AvailableMemory.h"

#include <cstdint>
#include <optional>
#include <string>

namespace loom::runtime::trainer {

/// The bytes one rank holds for sure, by kind. Doubles: a hostile spec's
/// sizes may exceed int64_t, and the comparison needs no exactness there.
struct RankMemoryNeed {
  /// Its blocks of the arguments it holds (model and optimizer state, the
  /// batch, step counters).
  double arguments = 0;
  /// Its blocks of the results its step computes.
  double results = 0;
  /// Its stage's step arena (host programs; 0 on CUDA, where it is on the
  /// device).
  double arena = 0;

  double total() const { return arguments + results + arena; }
};

/// What `rank` of `spec` holds in a run whose floats take `floatBytes`
/// (4: f32, 8: f64); integers take 8.
RankMemoryNeed rankMemoryNeed(const harness::ProgramSpec &spec, int64_t rank,
                              int floatBytes);

/// nullopt when `need` fits in the rank's share of `available` (divided
/// evenly among the `ranksHere` ranks that share the machine), else the
/// error message. Nothing is checked when `available` is unknown.
std::optional<std::string>
checkRankMemory(const RankMemoryNeed &need, int64_t rank, int ranksHere,
                const std::optional<support::AvailableMemory> &available);

} // namespace loom::runtime::trainer

#endif // LOOM_RUNTIME_TRAINER_MEMORYCHECK_H

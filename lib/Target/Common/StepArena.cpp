//===- StepArena.cpp - The static memory plan of one emitted step ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. On construction, apply the in-place rule (dist::InPlaceReuse): which
//    values are computed in the buffer of the argument they are carried
//    into, the rule the interpreter and dist::analyzeMemory follow too.
// 2. While the emitter prints the step, record each buffer (its stage, size
//    and element kind) and each alias.
// 3. After the step, give each buffer its lifetime: from the op that
//    defines it to the last op that reads it or an alias of it; a buffer the
//    entry returns outlives the step and is kept out of the arena. Plan the
//    offsets (planArena) and print the tables with the prediction of
//    dist::analyzeMemory for each stage.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/StepArena.h"
#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::loom::emit {

StepArena::StepArena(const EntryInfo &entry)
    : entry(entry), inPlace(func::FuncOp(entry.func)) {
  for (auto [result, arg] : carriedPairs(entry))
    carried[arg] = result;
}

std::string StepArena::add(Value value, Operation *op) {
  ArenaBuffer buffer;
  buffer.stage = entry.stageOfOp(op);
  auto type = cast<ShapedType>(value.getType());
  buffer.elements = type.getNumElements();
  buffer.isInteger = isIntegerStorage(type);
  bufferIndex[value] = buffers.size();
  buffers.push_back(buffer);
  return table("Offsets") + "[" + std::to_string(buffers.size() - 1) +
         "][sizeof(T) == 8]";
}

std::optional<size_t> StepArena::carriedResultOf(size_t arg) const {
  auto it = carried.find(arg);
  if (it == carried.end())
    return std::nullopt;
  return it->second;
}

bool StepArena::updatesInPlace(Operation *op, Value result, Value operand) {
  std::optional<BlockArgument> donor = inPlace.getDonor(result);
  return donor && Value(*donor) == operand && result.getDefiningOp() == op;
}

std::optional<unsigned> StepArena::freeCarriedArgument(Operation *op,
                                                       Value result) {
  std::optional<BlockArgument> donor = inPlace.getDonor(result);
  if (!donor || result.getDefiningOp() != op || inPlace.readsDonor(result))
    return std::nullopt;
  return donor->getArgNumber();
}

std::string StepArena::table(StringRef what) const {
  return table(what, func::FuncOp(entry.func).getSymName());
}

std::string StepArena::table(StringRef what, StringRef entryName) {
  return ("kArena" + what + "_" + entryName).str();
}

std::string StepArena::bytesOf(StringRef stage) const {
  return table("Bytes") + "[" + stage.str() + "][sizeof(T) == 8]";
}

std::string StepArena::predictedPeakOf(StringRef stage) const {
  return table("PredictedPeak") + "[" + stage.str() + "]";
}

void StepArena::printDeclarations(raw_ostream &os) const {
  os << "extern const int64_t " << table("Offsets") << "[][2];\n"
     << "extern const int64_t " << table("Bytes") << "[][2];\n"
     << "extern const int64_t " << table("PredictedPeak") << "[];\n\n";
}

std::optional<size_t> StepArena::bufferOf(Value v) const {
  for (auto it = aliasOf.find(v); it != aliasOf.end(); it = aliasOf.find(v))
    v = it->second;
  auto found = bufferIndex.find(v);
  if (found == bufferIndex.end())
    return std::nullopt;
  return found->second;
}

void StepArena::printTables(raw_ostream &os) {
  auto func = func::FuncOp(entry.func);
  int64_t position = 0;
  for (Operation &op : func.getBody().front()) {
    for (Value result : op.getResults())
      if (auto b = bufferIndex.find(result); b != bufferIndex.end())
        buffers[b->second].first = buffers[b->second].last = position;
    for (Value operand : op.getOperands())
      if (std::optional<size_t> b = bufferOf(operand)) {
        buffers[*b].last = std::max(buffers[*b].last, position);
        if (isa<func::ReturnOp>(op))
          buffers[*b].ownAllocation = true;
      }
    ++position;
  }
  ArenaPlan plan = planArena(buffers, entry.numStages);
  auto pair = [](const PerElementSize &p) {
    return "{" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + "}";
  };
  os << "// The static memory plan of @" << func.getSymName()
     << " (docs/Codegen.md, \"Memory\"): each\n"
     << "// buffer's byte offset in the step's arena when T is float and when "
        "it is\n"
     << "// double (-1: a buffer of its own, a result), then the arena's size "
        "and the\n"
     << "// liveness peak the compiler predicts (at the declared types), per "
        "stage.\n"
     << "const int64_t " << table("Offsets") << "[][2] = {";
  for (auto [i, offsets] : llvm::enumerate(plan.offsets))
    os << (i % 6 ? " " : "\n    ") << pair(offsets) << ",";
  // Never an empty array.
  os << (plan.offsets.empty() ? "\n    {-1, -1}," : "") << "\n};\n"
     << "const int64_t " << table("Bytes") << "[][2] = {";
  for (const PerElementSize &bytes : plan.arenaBytes)
    os << pair(bytes) << ", ";
  os << "};\n";
  os << "// The most bytes of those buffers live at once, per stage:";
  for (const PerElementSize &bytes : plan.liveBytes)
    os << " " << pair(bytes);
  os << "\n"
     << "const int64_t " << table("PredictedPeak") << "[] = {";
  for (int64_t s = 0; s < std::max<int64_t>(entry.numStages, 1); ++s)
    os << dist::analyzeMemory(func, entry.numStages ? std::optional<int64_t>(s)
                                                    : std::nullopt)
              .getPeak()
       << ", ";
  os << "};\n\n";
}

} // namespace mlir::loom::emit

//===- StepArena.cpp - The static memory plan of one emitted step ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. On construction, number the entry's ops and find each argument's last
//    reader (through the values that may name its buffer).
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

StepArena::StepArena(const EntryInfo &entry) : entry(entry) {
  for (auto [result, arg] : carriedPairs(entry))
    carried[arg] = result;
  llvm::DenseMap<Value, Value> argumentOf;
  for (BlockArgument arg : func::FuncOp(entry.func).getArguments())
    argumentOf[arg] = arg;
  int64_t position = 0;
  for (Operation &op : func::FuncOp(entry.func).getBody().front()) {
    positionOf[&op] = position;
    for (Value operand : op.getOperands())
      if (Value arg = argumentOf.lookup(operand))
        argumentLastUse[arg] = position;
    if (isa<ReshapeOp, dist::AnnotateOp, dist::ReshardOp>(op))
      if (Value arg = argumentOf.lookup(op.getOperand(0)))
        for (Value result : op.getResults())
          argumentOf[result] = arg;
    ++position;
  }
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
  auto arg = dyn_cast<BlockArgument>(operand);
  if (!arg)
    return false;
  std::optional<size_t> index = carriedResultOf(arg.getArgNumber());
  if (!index)
    return false;
  Operation *ret = func::FuncOp(entry.func).getBody().front().getTerminator();
  return *index < ret->getNumOperands() &&
         ret->getOperand(*index) == result &&
         argumentLastUse.lookup(arg) == positionOf.lookup(op);
}

std::optional<unsigned> StepArena::freeCarriedArgument(Operation *op,
                                                        Value result) {
  auto func = func::FuncOp(entry.func);
  Operation *ret = func.getBody().front().getTerminator();
  int64_t position = positionOf.lookup(op);
  for (auto [arg, index] : carried) {
    if (index >= ret->getNumOperands() || ret->getOperand(index) != result)
      continue;
    BlockArgument argument = func.getArgument(arg);
    auto lastUse = argumentLastUse.find(argument);
    if (lastUse != argumentLastUse.end() && lastUse->second >= position)
      continue;
    if (cast<ShapedType>(argument.getType()).getNumElements() !=
        cast<ShapedType>(result.getType()).getNumElements())
      continue;
    return static_cast<unsigned>(arg);
  }
  return std::nullopt;
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

//===- InPlaceReuse.cpp - The in-place rule of a training step ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Number the ops of the entry block and find, for every argument, the
//    last op that reads it or a value that names its storage (reshape,
//    dist.annotate, dist.reshard results, transitively), and the ops that
//    read it that way.
// 2. Pair each returned value with the argument it is carried into (the
//    result's `loom.name` is the argument's name, the types are equal).
// 3. Keep the pairs whose argument is dead after the value's op and, at the
//    op, is read only as the state an optimizer update updates.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/InPlaceReuse.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseSet.h"

using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;

namespace mlir::loom::dist {

/// The name a result carried into argument `index` has: its `loom.name`,
/// else its `#loom.param` name (the interpreter's and the emitters' order).
static StringRef carriedName(func::FuncOp entry, unsigned index) {
  if (auto name = entry.getArgAttrOfType<StringAttr>(index, kNameAttrName))
    return name.getValue();
  if (auto param = entry.getArgAttrOfType<ParamAttr>(index, kParamAttrName))
    return param.getName();
  return {};
}

/// Ops whose result is another name for their operand's storage.
static bool namesOperandStorage(Operation *op) {
  return isa<ReshapeOp, dist::AnnotateOp, dist::ReshardOp>(op);
}

/// The operand of optimizer update `op` that `result` is the update of
/// (param for new_param, exp_avg for new_exp_avg, ...); null when `op` is
/// not an update.
static Value updatedOperand(Operation *op, Value result) {
  if (auto adamw = dyn_cast<AdamwUpdateOp>(op)) {
    if (result == adamw.getNewParam())
      return adamw.getParam();
    if (result == adamw.getNewExpAvg())
      return adamw.getExpAvg();
    if (result == adamw.getNewExpAvgSq())
      return adamw.getExpAvgSq();
  } else if (auto sgd = dyn_cast<SgdUpdateOp>(op)) {
    if (result == sgd.getNewParam())
      return sgd.getParam();
    if (result == sgd.getNewMomentumBuf())
      return sgd.getMomentumBuf();
  }
  return {};
}

InPlaceReuse::InPlaceReuse(func::FuncOp entry) {
  if (entry.isExternal() || !entry.getBody().hasOneBlock())
    return;
  Block &block = entry.getBody().front();
  Operation *terminator = block.getTerminator();

  // 1. The last op reading each argument's storage.
  llvm::DenseMap<Value, BlockArgument> storageOf;
  for (BlockArgument arg : entry.getArguments())
    storageOf[arg] = arg;
  llvm::DenseMap<Operation *, int64_t> position;
  llvm::DenseMap<BlockArgument, int64_t> lastRead;
  for (Operation &op : block) {
    int64_t here = static_cast<int64_t>(position.size());
    position[&op] = here;
    for (Value operand : op.getOperands())
      if (BlockArgument arg = storageOf.lookup(operand))
        lastRead[arg] = here;
    if (namesOperandStorage(&op))
      if (BlockArgument arg = storageOf.lookup(op.getOperand(0)))
        for (Value result : op.getResults())
          storageOf[result] = arg;
  }

  // 2 and 3. The carried pairs whose argument is dead where the value is
  // computed.
  llvm::DenseSet<BlockArgument> given;
  for (auto [r, value] : llvm::enumerate(terminator->getOperands())) {
    auto name = entry.getResultAttrOfType<StringAttr>(r, kNameAttrName);
    Operation *op = value.getDefiningOp();
    if (!name || !op || op->getBlock() != &block || namesOperandStorage(op) ||
        isa<arith::ConstantOp>(op) || donors.count(value))
      continue;
    for (BlockArgument arg : entry.getArguments()) {
      if (given.contains(arg) || arg.getType() != value.getType() ||
          carriedName(entry, arg.getArgNumber()) != name.getValue())
        continue;
      int64_t at = position.lookup(op);
      auto read = lastRead.find(arg);
      bool dead = read == lastRead.end() || read->second < at;
      if (!dead && read->second == at && updatedOperand(op, value) == arg) {
        // Read at the update: only as the operand it updates.
        unsigned reads = 0;
        for (Value operand : op->getOperands())
          reads += storageOf.lookup(operand) == arg;
        dead = reads == 1;
      }
      if (!dead)
        continue;
      donors[value] = arg;
      given.insert(arg);
      break;
    }
  }
}

std::optional<BlockArgument> InPlaceReuse::getDonor(Value value) const {
  auto it = donors.find(value);
  if (it == donors.end())
    return std::nullopt;
  return it->second;
}

bool InPlaceReuse::readsDonor(Value value) const {
  std::optional<BlockArgument> donor = getDonor(value);
  return donor && llvm::is_contained(value.getDefiningOp()->getOperands(),
                                     Value(*donor));
}

} // namespace mlir::loom::dist

//===- MicroBatchShapes.cpp - An op's shapes on one micro-batch -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The batch is followed through the sharding rules (MicroBatchShapes.h):
// the rules already say, for every op, which operand dims and result dims
// are the same index space, which is what slicing the batch relies on.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/MicroBatchShapes.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"

#include "llvm/ADT/SmallSet.h"

using ::mlir::loom::kInputAttrName;

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

/// Marks dim `dim` of `value` (of rank `rank`) as carrying the batch;
/// whether it was new.
static bool mark(llvm::DenseMap<Value, llvm::SmallVector<bool, 4>> &dims,
                 Value value, size_t rank, size_t dim) {
  llvm::SmallVector<bool, 4> &flags = dims[value];
  if (flags.empty())
    flags.resize(rank, false);
  if (dim >= flags.size() || flags[dim])
    return false;
  flags[dim] = true;
  return true;
}

BatchDims BatchDims::analyze(func::FuncOp func) {
  BatchDims result;
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (type && type.getRank() > 0 &&
        func.getArgAttr(arg.getArgNumber(), kInputAttrName))
      mark(result.dims, arg, type.getRank(), 0);
  }
  std::vector<std::pair<Operation *, OpShardingRule>> ops;
  for (Operation &op : body)
    if (auto ruleOp = dyn_cast<ShardingRuleOpInterface>(&op))
      ops.emplace_back(&op, ruleOp.getShardingRule());
  // One op: its batch factors are those of its operand and result dims that
  // carry the batch; every dim with one of them carries it too. That
  // reaches operands the data does not flow into: reverse mode seeds the
  // backward with a constant of the batch's shape, which the split step
  // builds at the micro-batch's.
  auto visit = [&](Operation *op, const OpShardingRule &rule) {
    llvm::SmallSet<int64_t, 4> batchFactors;
    auto collect = [&](Value value, const TensorFactorMapping &mapping) {
      auto it = result.dims.find(value);
      if (it == result.dims.end())
        return;
      for (auto [dim, carries] : llvm::enumerate(it->second))
        // The batch leads a merged dim: its major factor.
        if (carries && dim < mapping.size() && !mapping[dim].empty())
          batchFactors.insert(mapping[dim].front());
    };
    ArrayRef<TensorFactorMapping> operands = rule.getOperandMappings();
    ArrayRef<TensorFactorMapping> results = rule.getResultMappings();
    for (auto [value, mapping] : llvm::zip(op->getOperands(), operands))
      collect(value, mapping);
    for (auto [value, mapping] : llvm::zip(op->getResults(), results))
      collect(value, mapping);
    if (batchFactors.empty())
      return false;
    bool changed = false;
    auto spread = [&](Value value, const TensorFactorMapping &mapping) {
      for (auto [dim, factors] : llvm::enumerate(mapping))
        if (llvm::any_of(factors, [&](int64_t f) {
              return batchFactors.contains(f);
            }))
          changed |= mark(result.dims, value, mapping.size(), dim);
    };
    for (auto [value, mapping] : llvm::zip(op->getOperands(), operands))
      spread(value, mapping);
    for (auto [value, mapping] : llvm::zip(op->getResults(), results))
      spread(value, mapping);
    return changed;
  };
  // Forward and backward sweeps until nothing changes (two or three: the
  // batch reaches a seed only through the op that consumes it).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto &[op, rule] : ops)
      changed |= visit(op, rule);
    for (auto &[op, rule] : llvm::reverse(ops))
      changed |= visit(op, rule);
  }
  return result;
}

bool BatchDims::isBatchDim(Value value, unsigned dim) const {
  auto it = dims.find(value);
  return it != dims.end() && dim < it->second.size() && it->second[dim];
}

std::optional<OpShapes>
BatchDims::getMicroBatchShapes(Operation *op, int64_t microBatches) const {
  OpShapes shapes = getGlobalShapes(op);
  auto divide = [&](Value value, SmallVector<int64_t> &shape) {
    for (auto [dim, size] : llvm::enumerate(shape)) {
      if (!isBatchDim(value, dim))
        continue;
      if (size % microBatches)
        return false;
      size /= microBatches;
    }
    return true;
  };
  for (auto [value, shape] : llvm::zip_equal(op->getOperands(), shapes.operands))
    if (!divide(value, shape))
      return std::nullopt;
  for (auto [value, shape] : llvm::zip_equal(op->getResults(), shapes.results))
    if (!divide(value, shape))
      return std::nullopt;
  return shapes;
}

//===- ReverseMode.cpp - Reverse-mode accumulation over a clone -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Visits a clone's ops backwards; each op that has an active operand (one
// that depends on a parameter) and a result gradient builds its VJP, and the
// operand gradients are summed per value (per parameter and forward op for
// parameters). loom-autodiff and loom-slice-micro-batches share it.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/ReverseMode.h"

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

/// Tags every op after `after` (or from the start of `block`) that has no
/// `loom.fwd` yet with `id`.
static void tagOpsAfter(Block &block, Operation *after, int64_t id) {
  auto it = after ? std::next(after->getIterator()) : block.begin();
  Builder builder(block.getParent()->getContext());
  for (Operation &op : llvm::make_range(it, block.end()))
    if (!op.hasAttr(kFwdAttrName))
      op.setAttr(kFwdAttrName, builder.getI64IntegerAttr(id));
}

void ReverseMode::accumulate(OpBuilder &builder, Location loc, Value value,
                             Value grad, int64_t id) {
  auto &slot = isa<BlockArgument>(value) ? paramParts[value][id] : grads[value];
  if (!slot) {
    slot = grad;
    return;
  }
  Operation *sum = AddOp::create(builder, loc, slot, grad);
  sum->setAttr(kFwdAttrName, builder.getI64IntegerAttr(id));
  slot = sum->getResult(0);
}

const std::map<int64_t, Value> &ReverseMode::getParamParts(Value param) const {
  static const std::map<int64_t, Value> none;
  auto it = paramParts.find(param);
  return it == paramParts.end() ? none : it->second;
}

Value ReverseMode::buildParamGrad(OpBuilder &builder, Location loc, Value param,
                                  int64_t owner) const {
  Value total;
  for (auto &[id, part] : getParamParts(param)) {
    if (!total) {
      total = part;
      continue;
    }
    Operation *sum = AddOp::create(builder, loc, total, part);
    sum->setAttr(kFwdAttrName, builder.getI64IntegerAttr(owner));
    total = sum->getResult(0);
  }
  return total;
}

LogicalResult ReverseMode::backward(OpBuilder &builder,
                                    ArrayRef<Operation *> ops, Value loss,
                                    Value seed) {
  // Active values depend on a parameter; only their gradients are needed.
  llvm::DenseSet<Value> active(params.begin(), params.end());
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op->result_begin(), op->result_end());

  grads[loss] = seed;
  Block &block = *builder.getInsertionBlock();
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(grads.lookup(result));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError("has no VJP, but a gradient flows through it");
    int64_t id = cast<IntegerAttr>(op->getAttr(kFwdAttrName)).getInt();
    Operation *last = block.empty() ? nullptr : &block.back();
    SmallVector<Value> operandGrads;
    if (failed(differentiable.buildVjp(builder, resultGrads, operandGrads)))
      return failure();
    tagOpsAfter(block, last, id);
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad && active.contains(operand))
        accumulate(builder, op->getLoc(), operand, grad, id);
  }
  return success();
}

//===- LossScaling.cpp - loom ops of dynamic loss scaling -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of nonfinite_count, select and update_loss_scale in the house
// order: verify, infer, sharding rule, cost, VJP. The count is a sum of its
// elements (reduction factors, like label_count); select is a whole-tensor
// copy (parallel factors, the rank-0 condition replicated); the scale's
// update is rank-0 (no factors). None has a VJP: loom-autodiff builds them
// after the backward.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// NonfiniteCountOp
//===----------------------------------------------------------------------===//

LogicalResult NonfiniteCountOp::verify() {
  // C1.
  if (getResult().getType().getRank() != 0)
    return emitOpError("expects a rank-0 result, got ")
           << getResult().getType();
  return success();
}

OpShardingRule NonfiniteCountOp::getShardingRule() {
  using Builder = OpShardingRuleBuilder;
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  Builder builder(getOperation()->getOperandTypes(),
                  getOperation()->getResultTypes());
  // A count is a sum: a block of the input gives a partial count.
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    builder.addFactor({d}, {Builder::kNoDim}, shape[d], FactorKind::Reduction);
  return builder.build();
}

OpCost NonfiniteCountOp::getCost(const OpShapes &shapes) {
  // One classify-and-accumulate per element.
  double flops = static_cast<double>(getNumElements(shapes.operands[0]));
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction, flops);
}

LogicalResult NonfiniteCountOp::buildVjp(OpBuilder &builder,
                                         ValueRange resultGrads,
                                         SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

//===----------------------------------------------------------------------===//
// SelectOp
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  // C1.
  auto condition = cast<RankedTensorType>(adaptor.getCondition().getType());
  if (condition.getRank() != 0)
    return emitOptionalError(location, "expects a rank-0 condition, got ",
                             condition);
  // C2.
  Type type = adaptor.getOnTrue().getType();
  if (adaptor.getOnFalse().getType() != type)
    return emitOptionalError(location,
                             "expects on_false to have on_true's type ", type,
                             ", got ", adaptor.getOnFalse().getType());
  inferred.push_back(type);
  return success();
}

OpShardingRule SelectOp::getShardingRule() {
  using Builder = OpShardingRuleBuilder;
  ArrayRef<int64_t> shape = getResult().getType().getShape();
  Builder builder(getOperation()->getOperandTypes(),
                  getOperation()->getResultTypes());
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    builder.addFactor({Builder::kNoDim, d, d}, {d}, shape[d]);
  return builder.build();
}

OpCost SelectOp::getCost(const OpShapes &shapes) {
  // A copy of the chosen operand: no arithmetic, one read and one write
  // per element (the other operand is not read).
  OpCost cost =
      getStreamingCost(getOperation(), shapes, OpClass::DataMovement, 0.0);
  int64_t bytes = getNumElements(shapes.results[0]) *
                  getElementBytes(getResult().getType().getElementType());
  cost.bytesRead = bytes;
  cost.bytesWritten = bytes;
  return cost;
}

LogicalResult SelectOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

//===----------------------------------------------------------------------===//
// UpdateLossScaleOp
//===----------------------------------------------------------------------===//

LogicalResult UpdateLossScaleOp::verify() {
  double growth = getGrowthFactor().convertToDouble();
  double backoff = getBackoffFactor().convertToDouble();
  // C2, negated so that NaN fails.
  if (!(growth >= 1.0) || !std::isfinite(growth))
    return emitOpError("expects a finite growth_factor >= 1, got ") << growth;
  if (!(backoff > 0.0 && backoff <= 1.0))
    return emitOpError("expects backoff_factor in (0, 1], got ") << backoff;
  if (getGrowthInterval() < 1)
    return emitOpError("expects growth_interval >= 1, got ")
           << getGrowthInterval();
  return success();
}

LogicalResult UpdateLossScaleOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  // C1 is the operand constraints; the results are the state's types.
  inferred.push_back(adaptor.getScale().getType());
  inferred.push_back(adaptor.getGrowthTracker().getType());
  return success();
}

OpShardingRule UpdateLossScaleOp::getShardingRule() {
  // Rank-0 everything: no factor, every device computes the same scale.
  return OpShardingRuleBuilder(getOperation()->getOperandTypes(),
                               getOperation()->getResultTypes())
      .build();
}

OpCost UpdateLossScaleOp::getCost(const OpShapes &shapes) {
  // A compare, an increment and a product.
  return getStreamingCost(getOperation(), shapes, OpClass::Elementwise, 3.0);
}

LogicalResult
UpdateLossScaleOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

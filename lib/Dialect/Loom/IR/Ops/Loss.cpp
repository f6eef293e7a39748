//===- Loss.cpp - loom loss ops -------------------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the cross-entropy loss and its gradient, in the house order:
// verify, infer, sharding rule, cost. Both share the check of logits against
// labels (checkLogitsAndLabels) and the shape of their rules: one factor per
// position dim and an op-partitioned vocabulary factor.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"

using namespace mlir;
using namespace mlir::loom;

/// Checks C1 (logits of rank >= 1) and C2 (labels shaped like the logits
/// without the class dim) and returns the logits' type.
static FailureOr<RankedTensorType>
checkLogitsAndLabels(std::optional<Location> location, Value logits,
                     Value labels) {
  auto logitsType = dyn_cast<RankedTensorType>(logits.getType());
  auto labelsType = dyn_cast<RankedTensorType>(labels.getType());
  if (!logitsType || !labelsType)
    return emitOptionalError(location, "expects ranked tensor operands");
  // C1.
  if (logitsType.getRank() < 1)
    return emitOptionalError(location,
                             "expects logits of rank >= 1 (classes last), got ",
                             logitsType);
  // C2.
  if (labelsType.getShape() != logitsType.getShape().drop_back())
    return emitOptionalError(location,
                             "expects labels shaped like the logits without "
                             "their last dim, got ",
                             logitsType, " and ", labelsType);
  return logitsType;
}

/// Returns the rule of a cross-entropy op over `logits` [N..., V] and labels
/// [N...]: one factor of kind `positionKind` per position dim, present in
/// the results of rank > 0, and an op-partitioned vocabulary factor.
static OpShardingRule getCrossEntropyRule(Operation *op,
                                          FactorKind positionKind) {
  using Builder = OpShardingRuleBuilder;
  ArrayRef<int64_t> logits =
      cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
  int64_t rank = logits.size();
  int64_t numOperands = op->getNumOperands();
  bool resultHasPositions =
      cast<RankedTensorType>(op->getResult(0).getType()).getRank() > 0;
  // Operands: logits, labels, then (in the gradient) the rank-0 dloss.
  auto operandDims = [&](int64_t logitsDim, int64_t labelsDim) {
    SmallVector<int64_t> dims(numOperands, Builder::kNoDim);
    dims[0] = logitsDim;
    dims[1] = labelsDim;
    return dims;
  };

  Builder builder(op->getOperandTypes(), op->getResultTypes());
  for (int64_t d = 0; d < rank - 1; ++d)
    builder.addFactor(operandDims(d, d),
                      {resultHasPositions ? d : Builder::kNoDim}, logits[d],
                      positionKind);
  // Vocab-parallel: the row max and the row sum of exp are all-reduced over
  // the vocab axes by the op itself.
  builder.addFactor(operandDims(rank - 1, Builder::kNoDim),
                    {resultHasPositions ? rank - 1 : Builder::kNoDim},
                    logits[rank - 1], FactorKind::OpPartitioned);
  return builder.build();
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> logitsType =
      checkLogitsAndLabels(location, adaptor.getLogits(), adaptor.getLabels());
  if (failed(logitsType))
    return failure();
  inferred.push_back(RankedTensorType::get({}, logitsType->getElementType()));
  return success();
}

OpShardingRule CrossEntropyOp::getShardingRule() {
  // A block of positions needs the global count of labels to divide by, so
  // the op all-reduces its (sum, count) pair itself and the loss comes out
  // whole: a scalar exchange, cheaper than anything a layout could express.
  return getCrossEntropyRule(getOperation(), FactorKind::OpPartitioned);
}

OpCost CrossEntropyOp::getCost(const OpShapes &shapes) {
  ArrayRef<int64_t> logits = shapes.operands[0];
  int64_t positions = getNumElements(logits.drop_back());
  // Max, subtract, exp and sum per logit; log, subtract the label's logit
  // and accumulate per position; one division by the count.
  double flops = 4.0 * static_cast<double>(getNumElements(logits)) +
                 3.0 * static_cast<double>(positions) + 1;
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction, flops);
}

//===----------------------------------------------------------------------===//
// CrossEntropyGradOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> logitsType =
      checkLogitsAndLabels(location, adaptor.getLogits(), adaptor.getLabels());
  if (failed(logitsType))
    return failure();
  auto dlossType = dyn_cast<RankedTensorType>(adaptor.getDloss().getType());
  if (!dlossType)
    return emitOptionalError(location, "expects ranked tensor operands");
  // C3.
  if (dlossType.getRank() != 0)
    return emitOptionalError(location, "expects a rank-0 dloss, got ",
                             dlossType);
  // C4.
  if (dlossType.getElementType() != logitsType->getElementType())
    return emitOptionalError(
        location, "expects dloss of the logits' element type ",
        logitsType->getElementType(), ", got ", dlossType.getElementType());
  inferred.push_back(*logitsType);
  return success();
}

OpShardingRule CrossEntropyGradOp::getShardingRule() {
  // Each block of positions gets its own rows of the gradient, scaled by the
  // global label count, which the op all-reduces itself (a scalar).
  return getCrossEntropyRule(getOperation(), FactorKind::OpPartitioned);
}

OpCost CrossEntropyGradOp::getCost(const OpShapes &shapes) {
  ArrayRef<int64_t> logits = shapes.operands[0];
  int64_t positions = getNumElements(logits.drop_back());
  // Max, subtract, exp, sum, normalize and scale per logit; the one-hot
  // subtraction per position; dloss / count once.
  double flops = 6.0 * static_cast<double>(getNumElements(logits)) +
                 static_cast<double>(positions) + 1;
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction, flops);
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// The logits' gradient is cross_entropy_grad; labels get none.
//

LogicalResult CrossEntropyOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  operandGrads[0] = CrossEntropyGradOp::create(
      builder, getLoc(), getLogits(), getLabels(), dy, getIgnoreIndexAttr());
  return success();
}

LogicalResult CrossEntropyGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                           SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

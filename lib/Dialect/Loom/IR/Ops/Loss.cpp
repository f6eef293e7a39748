//===- Loss.cpp - loom loss ops -------------------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the cross-entropy loss, its gradient and the label count, in
// the house order: verify, infer, sharding rule, cost. The loss and its
// gradient share the check of logits against labels (checkLogitsAndLabels)
// and the shape of their rules: one factor per position dim and a
// vocabulary factor, whose kinds depend on the form (op-partitioned in the
// global form; see the local forms in Loss.td).
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
/// the results of rank > 0, and a vocabulary factor of kind `vocabKind`,
/// globally indexed in the local form (with an offset).
static OpShardingRule getCrossEntropyRule(Operation *op,
                                          FactorKind positionKind,
                                          FactorKind vocabKind,
                                          bool hasOffset) {
  using Builder = OpShardingRuleBuilder;
  ArrayRef<int64_t> logits =
      cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
  int64_t rank = logits.size();
  int64_t numOperands = op->getNumOperands();
  bool resultHasPositions =
      cast<RankedTensorType>(op->getResult(0).getType()).getRank() > 0;
  // Operands: logits, labels, then (in the gradient) the rank-0 dloss and
  // the local form's scalar offset, which no factor occupies.
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
  // The local form knows its column offset, so it is globally indexed.
  builder.addFactor(operandDims(rank - 1, Builder::kNoDim),
                    {resultHasPositions ? rank - 1 : Builder::kNoDim},
                    logits[rank - 1], vocabKind, /*globalIndexed=*/hasOffset);
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
  // The summed form needs no count: a block of positions gives a partial
  // sum, and so does a block of columns of the local form with an offset
  // (only the device holding a label adds its position's loss).
  FactorKind positions =
      getSum() ? FactorKind::Reduction : FactorKind::OpPartitioned;
  FactorKind vocab =
      getOffset() ? FactorKind::Reduction : FactorKind::OpPartitioned;
  return getCrossEntropyRule(getOperation(), positions, vocab,
                             /*hasOffset=*/bool(getOffset()));
}

OpCost CrossEntropyOp::getCost(const OpShapes &shapes) {
  ArrayRef<int64_t> logits = shapes.operands[0];
  int64_t positions = getNumElements(logits.drop_back());
  // Max, subtract, exp and sum per logit; log, subtract the label's logit
  // and accumulate per position; one division by the count. The local form
  // with an offset is given log-probabilities: it only accumulates the
  // label's one per position.
  double perLogit = getOffset() ? 0.0 : 4.0;
  double perPosition = getOffset() ? 1.0 : 3.0;
  double flops = perLogit * static_cast<double>(getNumElements(logits)) +
                 perPosition * static_cast<double>(positions) + 1;
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
  // global label count, which the op all-reduces itself (a scalar). The
  // summed form does not divide, so its rows are independent; the local
  // form with an offset is given log-probabilities, so its columns are.
  FactorKind positions =
      getSum() ? FactorKind::Parallel : FactorKind::OpPartitioned;
  FactorKind vocab =
      getOffset() ? FactorKind::Parallel : FactorKind::OpPartitioned;
  return getCrossEntropyRule(getOperation(), positions, vocab,
                             /*hasOffset=*/bool(getOffset()));
}

OpCost CrossEntropyGradOp::getCost(const OpShapes &shapes) {
  ArrayRef<int64_t> logits = shapes.operands[0];
  int64_t positions = getNumElements(logits.drop_back());
  // Max, subtract, exp, sum, normalize and scale per logit; the one-hot
  // subtraction per position; dloss / count once. Given log-probabilities
  // (with an offset), a logit costs an exp and the scaling.
  double perLogit = getOffset() ? 2.0 : 6.0;
  double flops = perLogit * static_cast<double>(getNumElements(logits)) +
                 static_cast<double>(positions) + 1;
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction, flops);
}

//===----------------------------------------------------------------------===//
// LabelCountOp
//===----------------------------------------------------------------------===//

LogicalResult LabelCountOp::verify() {
  // C1.
  if (getResult().getType().getRank() != 0)
    return emitOpError("expects a rank-0 result, got ")
           << getResult().getType();
  return success();
}

OpShardingRule LabelCountOp::getShardingRule() {
  using Builder = OpShardingRuleBuilder;
  ArrayRef<int64_t> labels = getLabels().getType().getShape();
  Builder builder(getOperation()->getOperandTypes(),
                  getOperation()->getResultTypes());
  // A count is a sum: a block of labels gives a partial count.
  for (int64_t d = 0, e = labels.size(); d < e; ++d)
    builder.addFactor({d}, {Builder::kNoDim}, labels[d],
                      FactorKind::Reduction);
  return builder.build();
}

OpCost LabelCountOp::getCost(const OpShapes &shapes) {
  // One compare-and-accumulate per label.
  double flops = static_cast<double>(getNumElements(shapes.operands[0]));
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
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  // The local form (with an offset) is made by the partitioner, after
  // autodiff; its gradient for the log-probabilities it takes would be a
  // bare one-hot, which cross_entropy_grad (the gradient through the
  // normalization) is not.
  if (getOffset())
    return emitOpError("has no VJP in its local form (with an offset); it "
                       "is created after autodiff");
  operandGrads[0] = CrossEntropyGradOp::create(
      builder, getLoc(), getLogits(), getLabels(), dy, /*offset=*/Value(),
      getIgnoreIndexAttr(), getSumAttr());
  return success();
}

LogicalResult CrossEntropyGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                           SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

LogicalResult LabelCountOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  // A count is piecewise constant and its operand is integer: no gradient.
  operandGrads.assign(1, Value());
  return success();
}

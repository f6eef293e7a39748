//===- Optimizer.cpp - loom optimizer-update ops --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the optimizer updates, in the house order: verify, infer,
// sharding rule, cost. Every state tensor has the parameter's type, so one
// helper checks that (checkSameTypeAs), the rule is pointwise over the
// parameter's shape (the rank-0 step counter has no factor), and the cost is
// a streaming cost of class Optimizer. Hyperparameters are checked with the
// comparisons negated so that NaN fails them.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"

using namespace mlir;
using namespace mlir::loom;

/// Checks that state tensor `name` has the type of `param`, the shared
/// constraint of every optimizer update.
static LogicalResult checkSameTypeAs(std::optional<Location> location,
                                     Type paramType, StringRef name,
                                     Value value) {
  if (value.getType() != paramType)
    return emitOptionalError(location, "expects ", name,
                             " to have the param's type ", paramType, ", got ",
                             value.getType());
  return success();
}

/// Returns the rule of an update: one parallel factor per param dim, shared
/// by every state tensor of the param's shape; rank-0 operands (the step
/// counter) have none.
static OpShardingRule getUpdateRule(Operation *op) {
  OpShapes shapes = getGlobalShapes(op);
  SmallVector<ArrayRef<int64_t>> operandShapes(shapes.operands.begin(),
                                               shapes.operands.end());
  return OpShardingRuleBuilder(op->getOperandTypes(), op->getResultTypes())
      .addPointwise(operandShapes, shapes.results.front())
      .build();
}

/// Returns the cost of an update doing `flopsPerElement` FLOPs per param
/// element and streaming every operand and result once.
static OpCost getUpdateCost(Operation *op, const OpShapes &shapes,
                            double flopsPerElement) {
  return getStreamingCost(op, shapes, OpClass::Optimizer,
                          flopsPerElement * getNumElements(shapes.results[0]));
}

//===----------------------------------------------------------------------===//
// SgdUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult SgdUpdateOp::verify() {
  double lr = getLr().convertToDouble();
  double momentum = getMomentum().convertToDouble();
  double weightDecay = getWeightDecay().convertToDouble();
  double dampening = getDampening().convertToDouble();
  // C3.
  if (!(lr >= 0) || !(momentum >= 0) || !(weightDecay >= 0))
    return emitOpError("expects lr, momentum and weight_decay >= 0, got ")
           << lr << ", " << momentum << " and " << weightDecay;
  // C4: Nesterov looks ahead along the momentum, undamped.
  if (getNesterov() && (!(momentum > 0) || dampening != 0))
    return emitOpError("expects momentum > 0 and dampening = 0 with "
                       "nesterov, got momentum ")
           << momentum << " and dampening " << dampening;
  return success();
}

LogicalResult SgdUpdateOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Type paramType = adaptor.getParam().getType();
  // C1.
  if (failed(checkSameTypeAs(location, paramType, "grad", adaptor.getGrad())))
    return failure();
  Value buffer = adaptor.getMomentumBuf();
  if (buffer &&
      failed(checkSameTypeAs(location, paramType, "momentum_buf", buffer)))
    return failure();

  // C2: PyTorch keeps a buffer exactly when momentum is not 0. A missing
  // attribute is left to the ODS verifier.
  if (FloatAttr momentum = adaptor.getMomentumAttr()) {
    double value = momentum.getValueAsDouble();
    if ((value != 0) != static_cast<bool>(buffer))
      return emitOptionalError(
          location, "expects a momentum_buf exactly when momentum != 0, got ",
          buffer ? "one" : "none", " with momentum ", value);
  }

  inferred.push_back(paramType);
  if (buffer)
    inferred.push_back(paramType);
  return success();
}

OpShardingRule SgdUpdateOp::getShardingRule() {
  return getUpdateRule(getOperation());
}

OpCost SgdUpdateOp::getCost(const OpShapes &shapes) {
  // Per element: p - lr * g (2); weight decay g + wd * p (2); momentum
  // mu * b + (1 - d) * g (3, 1 - d folded); Nesterov g + mu * b (2).
  double flops = 2;
  if (getWeightDecay().convertToDouble() != 0)
    flops += 2;
  if (getMomentumBuf())
    flops += getNesterov() ? 5 : 3;
  return getUpdateCost(getOperation(), shapes, flops);
}

//===----------------------------------------------------------------------===//
// AdamwUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult AdamwUpdateOp::verify() {
  double lr = getLr().convertToDouble();
  double eps = getEps().convertToDouble();
  double weightDecay = getWeightDecay().convertToDouble();
  double beta1 = getBeta1().convertToDouble();
  double beta2 = getBeta2().convertToDouble();
  // C2.
  if (!(lr >= 0) || !(eps >= 0) || !(weightDecay >= 0))
    return emitOpError("expects lr, eps and weight_decay >= 0, got ")
           << lr << ", " << eps << " and " << weightDecay;
  // C3: a beta of 1 would freeze the moment and zero the bias correction.
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return emitOpError("expects beta1 and beta2 in [0, 1), got ")
           << beta1 << " and " << beta2;
  return success();
}

LogicalResult AdamwUpdateOp::inferReturnTypes(MLIRContext *context,
                                              std::optional<Location> location,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  // C1.
  Type paramType = adaptor.getParam().getType();
  if (failed(checkSameTypeAs(location, paramType, "grad", adaptor.getGrad())) ||
      failed(checkSameTypeAs(location, paramType, "exp_avg",
                             adaptor.getExpAvg())) ||
      failed(checkSameTypeAs(location, paramType, "exp_avg_sq",
                             adaptor.getExpAvgSq())))
    return failure();
  inferred.append(3, paramType);
  return success();
}

OpShardingRule AdamwUpdateOp::getShardingRule() {
  return getUpdateRule(getOperation());
}

OpCost AdamwUpdateOp::getCost(const OpShapes &shapes) {
  // Per element: decay p * (1 - lr * wd) (1); m' (3); v' (g * g, two
  // scalings, add: 4); denominator sqrt(v') / sqrt(c2) + eps (3); p' -
  // (lr / c1) * m' / denom (3). The bias corrections are per op, not per
  // element.
  return getUpdateCost(getOperation(), shapes, 14);
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// Optimizer updates come after the backward pass; they have no VJP.
//

LogicalResult SgdUpdateOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

LogicalResult AdamwUpdateOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

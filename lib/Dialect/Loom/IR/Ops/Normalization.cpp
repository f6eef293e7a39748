//===- Normalization.cpp - loom softmax and normalization ops -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the softmaxes and the norms with their backward ops, in the
// house order: verify, infer, sharding rule, cost. The four softmax ops share
// one check of their axis and one rule (the axis is whole on each device,
// every other dim is parallel); the four norm ops share the checks of their
// input, parameters and eps, and one rule (the normalized last dim is whole
// on each device; the leading dims are parallel in the forward ops and
// summed over by the parameter gradients).
//
// Costs count each arithmetic step per element of the input (`N` elements in
// `R` rows of the normalized dim); each op's section lists its steps.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

/// Returns `value`'s type if it is a ranked tensor (inference runs from
/// builders before the ODS constraints, so it may not be), or null after
/// reporting an error.
static RankedTensorType getRankedType(std::optional<Location> location,
                                      Value value, StringRef name) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    (void)emitOptionalError(location, "expects ", name,
                            " to be a ranked tensor, got ", value.getType());
  return type;
}

/// Checks that `axis` names a dim of `type` (the softmaxes' axis constraint).
static LogicalResult checkAxis(std::optional<Location> location,
                               RankedTensorType type, int64_t axis) {
  if (axis < 0 || axis >= type.getRank())
    return emitOptionalError(location, "expects axis ", axis, " to be in [0, ",
                             type.getRank(), ")");
  return success();
}

/// Checks that the gradient `grad` has the type of the tensor it is the
/// gradient of, `primal` (named `primalName`).
static LogicalResult checkSameType(std::optional<Location> location,
                                   RankedTensorType grad,
                                   RankedTensorType primal,
                                   StringRef primalName) {
  if (grad != primal)
    return emitOptionalError(location, "expects grad of the same type as ",
                             primalName, ", got ", grad, " and ", primal);
  return success();
}

/// Checks that a norm's input has a last dim to normalize over.
static LogicalResult checkNormInput(std::optional<Location> location,
                                    RankedTensorType input) {
  if (input.getRank() < 1)
    return emitOptionalError(location, "expects an input of rank >= 1, got ",
                             input);
  return success();
}

/// Checks that the norm parameter `param` (named `name`), if present, is a
/// vector over the last dim of `input` with its element type.
static LogicalResult checkNormParam(std::optional<Location> location,
                                    Value param, StringRef name,
                                    RankedTensorType input) {
  if (!param)
    return success();
  auto expected =
      RankedTensorType::get(input.getShape().back(), input.getElementType());
  if (param.getType() != expected)
    return emitOptionalError(location, "expects ", name, " of type ", expected,
                             ", got ", param.getType());
  return success();
}

/// Checks the epsilon added under a norm's square root.
static LogicalResult checkEps(std::optional<Location> location,
                              const APFloat &eps) {
  // NaN, infinities and zeros are not finite non-zero values.
  if (!eps.isFiniteNonZero() || eps.isNegative())
    return emitOptionalError(location,
                             "expects eps to be positive and finite, got ",
                             eps.convertToDouble());
  return success();
}

//===----------------------------------------------------------------------===//
// Shared sharding rules and costs
//===----------------------------------------------------------------------===//

/// Returns the rule of an op whose operands and results all have one shape
/// and which normalizes along `axis`: that dim needs the whole row on each
/// device (its max and sum), every other dim is parallel.
static OpShardingRule getAxisRule(Operation *op, int64_t axis) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  OpShardingRuleBuilder builder(op->getOperandTypes(), op->getResultTypes());
  for (auto [dim, size] : llvm::enumerate(shape)) {
    int64_t d = dim;
    SmallVector<int64_t> operandDims(op->getNumOperands(), d);
    SmallVector<int64_t> resultDims(op->getNumResults(), d);
    builder.addFactor(operandDims, resultDims, size,
                      d == axis ? FactorKind::NeedReplication
                                : FactorKind::Parallel);
  }
  return builder.build();
}

/// Returns the rule of a norm op whose operands and results are tensors of
/// the input's shape `[..., D]` or parameter vectors `[D]`. The normalized
/// dim D needs whole rows on each device (their statistics); the leading
/// dims are factors of `leadingKind`, absent from the parameters.
static OpShardingRule getNormRule(Operation *op, ArrayRef<int64_t> inputShape,
                                  FactorKind leadingKind) {
  int64_t rank = inputShape.size();
  auto dimsOf = [&](TypeRange types, int64_t dim) {
    return llvm::map_to_vector(types, [&](Type type) -> int64_t {
      int64_t typeRank = cast<RankedTensorType>(type).getRank();
      if (dim == rank - 1)
        return typeRank - 1;
      return typeRank == rank ? dim : OpShardingRuleBuilder::kNoDim;
    });
  };
  OpShardingRuleBuilder builder(op->getOperandTypes(), op->getResultTypes());
  for (int64_t dim = 0; dim < rank; ++dim)
    builder.addFactor(dimsOf(op->getOperandTypes(), dim),
                      dimsOf(op->getResultTypes(), dim), inputShape[dim],
                      dim == rank - 1 ? FactorKind::NeedReplication
                                      : leadingKind);
  return builder.build();
}

/// Returns the number of rows of `shape` along `axis`: the product of the
/// other dims.
static int64_t getNumRows(ArrayRef<int64_t> shape, int64_t axis) {
  int64_t rows = 1;
  for (auto [dim, size] : llvm::enumerate(shape))
    if (static_cast<int64_t>(dim) != axis)
      rows *= size;
  return rows;
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto inputType = getRankedType(location, adaptor.getInput(), "input");
  if (!inputType)
    return failure();
  // C1.
  if (failed(checkAxis(location, inputType, adaptor.getAxis())))
    return failure();
  inferred.push_back(inputType);
  return success();
}

OpShardingRule SoftmaxOp::getShardingRule() {
  return getAxisRule(getOperation(), getAxis());
}

OpCost SoftmaxOp::getCost(const OpShapes &shapes) {
  // Per element: max, subtract, exp, sum, divide.
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          5.0 * getNumElements(shapes.operands[0]));
}

//===----------------------------------------------------------------------===//
// LogSoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *context,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  auto inputType = getRankedType(location, adaptor.getInput(), "input");
  if (!inputType)
    return failure();
  // C1.
  if (failed(checkAxis(location, inputType, adaptor.getAxis())))
    return failure();
  inferred.push_back(inputType);
  return success();
}

OpShardingRule LogSoftmaxOp::getShardingRule() {
  return getAxisRule(getOperation(), getAxis());
}

OpCost LogSoftmaxOp::getCost(const OpShapes &shapes) {
  // Per element: max, subtract, exp, sum, subtract; per row: one log.
  ArrayRef<int64_t> input = shapes.operands[0];
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          5.0 * getNumElements(input) +
                              getNumRows(input, getAxis()));
}

//===----------------------------------------------------------------------===//
// SoftmaxGradOp
//===----------------------------------------------------------------------===//

/// Infers the result of softmax_grad and log_softmax_grad: checks C1 (grad
/// has the output's type) and C2 (axis in range).
static LogicalResult inferSoftmaxGrad(std::optional<Location> location,
                                      Value output, Value grad, int64_t axis,
                                      SmallVectorImpl<Type> &inferred) {
  auto outputType = getRankedType(location, output, "output");
  auto gradType = getRankedType(location, grad, "grad");
  if (!outputType || !gradType)
    return failure();
  // C1.
  if (failed(checkSameType(location, gradType, outputType, "output")))
    return failure();
  // C2.
  if (failed(checkAxis(location, outputType, axis)))
    return failure();
  inferred.push_back(outputType);
  return success();
}

LogicalResult SoftmaxGradOp::inferReturnTypes(MLIRContext *context,
                                              std::optional<Location> location,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  return inferSoftmaxGrad(location, adaptor.getOutput(), adaptor.getGrad(),
                          adaptor.getAxis(), inferred);
}

OpShardingRule SoftmaxGradOp::getShardingRule() {
  // The row sum of grad * output feeds every element of the row, so a split
  // axis would need an all-reduce in the middle of the op, not after it.
  return getAxisRule(getOperation(), getAxis());
}

OpCost SoftmaxGradOp::getCost(const OpShapes &shapes) {
  // Per element: grad * output, sum, subtract, multiply.
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          4.0 * getNumElements(shapes.operands[0]));
}

//===----------------------------------------------------------------------===//
// LogSoftmaxGradOp
//===----------------------------------------------------------------------===//

LogicalResult LogSoftmaxGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferSoftmaxGrad(location, adaptor.getOutput(), adaptor.getGrad(),
                          adaptor.getAxis(), inferred);
}

OpShardingRule LogSoftmaxGradOp::getShardingRule() {
  // As for softmax_grad: the row sum of grad feeds every element of the row.
  return getAxisRule(getOperation(), getAxis());
}

OpCost LogSoftmaxGradOp::getCost(const OpShapes &shapes) {
  // Per element: sum of grad, exp(output), multiply, subtract.
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          4.0 * getNumElements(shapes.operands[0]));
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto inputType = getRankedType(location, adaptor.getInput(), "input");
  if (!inputType)
    return failure();
  // C1.
  if (failed(checkNormInput(location, inputType)))
    return failure();
  // C2: elementwise_affine gives both parameters or neither.
  Value gamma = adaptor.getGamma(), beta = adaptor.getBeta();
  if (static_cast<bool>(gamma) != static_cast<bool>(beta))
    return emitOptionalError(
        location, "expects gamma and beta both present or both absent, got ",
        gamma ? "gamma only" : "beta only");
  // C3.
  if (failed(checkNormParam(location, gamma, "gamma", inputType)) ||
      failed(checkNormParam(location, beta, "beta", inputType)))
    return failure();
  // C4.
  if (failed(checkEps(location, adaptor.getEps())))
    return failure();
  inferred.push_back(inputType);
  return success();
}

OpShardingRule LayerNormOp::getShardingRule() {
  // Each row is normalized on its own: leading dims are parallel.
  return getNormRule(getOperation(), getInput().getType().getShape(),
                     FactorKind::Parallel);
}

OpCost LayerNormOp::getCost(const OpShapes &shapes) {
  // Per element: sum for the mean, subtract it, square, sum for the
  // variance, scale by rstd (5); with the affine parameters, multiply by
  // gamma and add beta (2). Per row: divide the sum and the sum of squares
  // by D, add eps, rsqrt (4).
  ArrayRef<int64_t> input = shapes.operands[0];
  int64_t elements = getNumElements(input);
  int64_t rows = getNumRows(input, input.size() - 1);
  double perElement = getGamma() ? 7.0 : 5.0;
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          perElement * elements + 4.0 * rows);
}

//===----------------------------------------------------------------------===//
// RmsNormOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto inputType = getRankedType(location, adaptor.getInput(), "input");
  if (!inputType)
    return failure();
  // C1.
  if (failed(checkNormInput(location, inputType)))
    return failure();
  // C2.
  if (failed(checkNormParam(location, adaptor.getGamma(), "gamma", inputType)))
    return failure();
  // C3.
  if (failed(checkEps(location, adaptor.getEps())))
    return failure();
  inferred.push_back(inputType);
  return success();
}

OpShardingRule RmsNormOp::getShardingRule() {
  // Each row is normalized on its own: leading dims are parallel.
  return getNormRule(getOperation(), getInput().getType().getShape(),
                     FactorKind::Parallel);
}

OpCost RmsNormOp::getCost(const OpShapes &shapes) {
  // Per element: square, sum, scale by the rsqrt (3); with gamma, multiply
  // by it (1). Per row: divide by D, add eps, rsqrt (3).
  ArrayRef<int64_t> input = shapes.operands[0];
  int64_t elements = getNumElements(input);
  int64_t rows = getNumRows(input, input.size() - 1);
  double perElement = getGamma() ? 4.0 : 3.0;
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          perElement * elements + 3.0 * rows);
}

//===----------------------------------------------------------------------===//
// Norm gradients
//===----------------------------------------------------------------------===//

/// Infers the results of layer_norm_grad (`numParamGrads` = 2) and
/// rms_norm_grad (1): dx of the input's type, then, when gamma is present,
/// `numParamGrads` gradients of gamma's type. Checks C1 (grad has the
/// input's type), C2 (rank >= 1), C3 (gamma's type) and C4 (eps).
static LogicalResult inferNormGrad(std::optional<Location> location, Value grad,
                                   Value input, Value gamma, const APFloat &eps,
                                   unsigned numParamGrads,
                                   SmallVectorImpl<Type> &inferred) {
  auto gradType = getRankedType(location, grad, "grad");
  auto inputType = getRankedType(location, input, "input");
  if (!gradType || !inputType)
    return failure();
  // C1.
  if (failed(checkSameType(location, gradType, inputType, "input")))
    return failure();
  // C2.
  if (failed(checkNormInput(location, inputType)))
    return failure();
  // C3.
  if (failed(checkNormParam(location, gamma, "gamma", inputType)))
    return failure();
  // C4.
  if (failed(checkEps(location, eps)))
    return failure();
  inferred.push_back(inputType);
  if (gamma)
    inferred.append(numParamGrads, gamma.getType());
  return success();
}

/// Returns the rule of a norm gradient. The parameter gradients sum over the
/// leading dims, so splitting one leaves them partial sums while dx is split
/// by it: exactly a reduction factor. Without gamma no result lacks the
/// leading dims, and they are plainly parallel.
static OpShardingRule getNormGradRule(Operation *op, Value input, Value gamma) {
  return getNormRule(op, cast<RankedTensorType>(input.getType()).getShape(),
                     gamma ? FactorKind::Reduction : FactorKind::Parallel);
}

//===----------------------------------------------------------------------===//
// LayerNormGradOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  return inferNormGrad(location, adaptor.getGrad(), adaptor.getInput(),
                       adaptor.getGamma(), adaptor.getEps(),
                       /*numParamGrads=*/2, inferred);
}

void LayerNormGradOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  // Name each parameter gradient rather than the variadic group, which would
  // print as `%param_grads:2`.
  setNameFn(getDx(), "dx");
  if (Value dgamma = getDgamma())
    setNameFn(dgamma, "dgamma");
  if (Value dbeta = getDbeta())
    setNameFn(dbeta, "dbeta");
}

OpShardingRule LayerNormGradOp::getShardingRule() {
  return getNormGradRule(getOperation(), getInput(), getGamma());
}

OpCost LayerNormGradOp::getCost(const OpShapes &shapes) {
  // Per element: recompute xhat as in layer_norm (5); sum g (1); sum
  // g * xhat as a multiply-add (2); dx = rstd * (g - mean(g) - xhat * m)
  // (4): 12. With gamma: g = grad * gamma (1), dgamma as a multiply-add (2),
  // dbeta (1): 16. Per row: the forward's 4, and dividing the two sums by D
  // (2).
  ArrayRef<int64_t> input = shapes.operands[1];
  int64_t elements = getNumElements(input);
  int64_t rows = getNumRows(input, input.size() - 1);
  double perElement = getGamma() ? 16.0 : 12.0;
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          perElement * elements + 6.0 * rows);
}

//===----------------------------------------------------------------------===//
// RmsNormGradOp
//===----------------------------------------------------------------------===//

LogicalResult RmsNormGradOp::inferReturnTypes(MLIRContext *context,
                                              std::optional<Location> location,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  return inferNormGrad(location, adaptor.getGrad(), adaptor.getInput(),
                       adaptor.getGamma(), adaptor.getEps(),
                       /*numParamGrads=*/1, inferred);
}

OpShardingRule RmsNormGradOp::getShardingRule() {
  return getNormGradRule(getOperation(), getInput(), getGamma());
}

OpCost RmsNormGradOp::getCost(const OpShapes &shapes) {
  // Per element: recompute the sum of squares (2), xhat = x * r (1); sum
  // g * xhat as a multiply-add (2); dx = r * (g - xhat * m) (3): 8. With
  // gamma: g = grad * gamma (1), dgamma as a multiply-add (2): 11. Per row:
  // the forward's 3 and dividing the sum by D (1).
  ArrayRef<int64_t> input = shapes.operands[1];
  int64_t elements = getNumElements(input);
  int64_t rows = getNumRows(input, input.size() - 1);
  double perElement = getGamma() ? 11.0 : 8.0;
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          perElement * elements + 4.0 * rows);
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// Softmaxes and norms have dedicated gradient ops that recompute their
// statistics; layer_norm's beta gradient comes out of layer_norm_grad too.
//

LogicalResult SoftmaxOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  operandGrads[0] = SoftmaxGradOp::create(builder, getLoc(), getResult(), dy,
                                          getAxisAttr());
  return success();
}

LogicalResult LogSoftmaxOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  operandGrads[0] = LogSoftmaxGradOp::create(builder, getLoc(), getResult(), dy,
                                             getAxisAttr());
  return success();
}

LogicalResult LayerNormOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  auto grad = LayerNormGradOp::create(builder, getLoc(), dy, getInput(),
                                      getGamma(), getEpsAttr());
  operandGrads[0] = grad.getDx();
  if (getGamma()) {
    operandGrads[1] = grad.getDgamma();
    operandGrads[2] = grad.getDbeta();
  }
  return success();
}

LogicalResult RmsNormOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  auto grad = RmsNormGradOp::create(builder, getLoc(), dy, getInput(),
                                    getGamma(), getEpsAttr());
  operandGrads[0] = grad.getDx();
  if (getGamma())
    operandGrads[1] = grad.getDgamma();
  return success();
}

LogicalResult SoftmaxGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

LogicalResult LogSoftmaxGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                         SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

LogicalResult LayerNormGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

LogicalResult RmsNormGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

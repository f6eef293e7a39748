//===- Reduction.cpp - loom reduction ops ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the reductions, in the house order: verify, infer, sharding
// rule, cost. All reductions share one axes rule for types (inferReduction)
// and one for sharding (getReductionRule); they differ in the kind of their
// reduced factors: sums and means leave partial sums when split, a maximum
// may not be split at all.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"

using namespace mlir;
using namespace mlir::loom;

/// Infers the result of reducing `input` over `axes`, checking C1 (non-empty),
/// C2 (in range) and C3 (strictly increasing).
static LogicalResult inferReduction(std::optional<Location> location,
                                    Value input, ArrayRef<int64_t> axes,
                                    bool keepDims,
                                    SmallVectorImpl<Type> &inferred) {
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  if (!inputType)
    return emitOptionalError(location, "expects a ranked tensor operand");
  int64_t rank = inputType.getRank();
  if (axes.empty())
    return emitOptionalError(location, "expects at least one axis");
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank)
      return emitOptionalError(location, "axis ", axis,
                               " is out of range for an input of rank ", rank);
    if (i > 0 && axis <= axes[i - 1])
      return emitOptionalError(location,
                               "expects strictly increasing axes, got ",
                               axes[i - 1], " before ", axis);
  }

  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(inputType.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(dim)))
      shape.push_back(size);
    else if (keepDims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

/// Returns the rule of a reduction of `input` over `axes`: kept dims are
/// parallel; reduced dims are factors of kind `reducedKind` that appear only
/// in the input (with keepdims the result holds them as size 1).
static OpShardingRule getReductionRule(Operation *op, ArrayRef<int64_t> axes,
                                       bool keepDims, FactorKind reducedKind,
                                       bool reducedGlobalIndexed = false) {
  ArrayRef<int64_t> input =
      cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
  OpShardingRuleBuilder builder(op->getOperandTypes(), op->getResultTypes());
  int64_t resultDim = 0;
  for (auto [dim, size] : llvm::enumerate(input)) {
    int64_t inputDim = dim;
    if (llvm::is_contained(axes, inputDim)) {
      builder.addFactor({inputDim}, {OpShardingRuleBuilder::kNoDim}, size,
                        reducedKind, reducedGlobalIndexed);
      resultDim += keepDims;
    } else {
      builder.addFactor({inputDim}, {resultDim++}, size);
    }
  }
  return builder.build();
}

//===----------------------------------------------------------------------===//
// ReduceSumOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferReduction(location, adaptor.getInput(), adaptor.getAxes(),
                        adaptor.getKeepdims(), inferred);
}

OpShardingRule ReduceSumOp::getShardingRule() {
  // A split reduced dim leaves partial sums.
  return getReductionRule(getOperation(), getAxes(), getKeepdims(),
                          FactorKind::Reduction)
      .setLinear();
}

OpCost ReduceSumOp::getCost(const OpShapes &shapes) {
  // One addition per input element (minus one per output, ignored).
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          getNumElements(shapes.operands[0]));
}

//===----------------------------------------------------------------------===//
// ReduceMeanOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceMeanOp::inferReturnTypes(MLIRContext *context,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  return inferReduction(location, adaptor.getInput(), adaptor.getAxes(),
                        adaptor.getKeepdims(), inferred);
}

OpShardingRule ReduceMeanOp::getShardingRule() {
  // The mean is a sum scaled by a constant, so a split reduced dim leaves
  // partial sums, as for reduce_sum. The partitioned op must scale by the
  // global count (the product of the global sizes of the reduced dims) for
  // the partial results to add up to the mean, hence globally indexed.
  return getReductionRule(getOperation(), getAxes(), getKeepdims(),
                          FactorKind::Reduction,
                          /*reducedGlobalIndexed=*/true)
      .setLinear();
}

OpCost ReduceMeanOp::getCost(const OpShapes &shapes) {
  // One addition per input element, then one division per output element.
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          getNumElements(shapes.operands[0]) +
                              getNumElements(shapes.results[0]));
}

//===----------------------------------------------------------------------===//
// ReduceMaxOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferReduction(location, adaptor.getInput(), adaptor.getAxes(),
                        adaptor.getKeepdims(), inferred);
}

OpShardingRule ReduceMaxOp::getShardingRule() {
  // A split reduced dim would leave a pending maximum on each device, but a
  // layout's `partial` axes only hold pending sums; so the reduced dims must
  // be whole on each device.
  return getReductionRule(getOperation(), getAxes(), getKeepdims(),
                          FactorKind::NeedReplication);
}

OpCost ReduceMaxOp::getCost(const OpShapes &shapes) {
  // One comparison per input element.
  return getStreamingCost(getOperation(), shapes, OpClass::Reduction,
                          getNumElements(shapes.operands[0]));
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// A sum's gradient broadcasts back over the reduced dims, a mean's also
// divides by the count, a max's goes to the elements equal to the max.
//

/// The gradient of a reduction's input: `dy` with the reduced dims restored
/// as 1 (keepdims form), broadcast back to the input's shape.
static Value broadcastReduced(OpBuilder &builder, Location loc, Value dy,
                              Value input, ArrayRef<int64_t> axes) {
  auto inputType = cast<RankedTensorType>(input.getType());
  auto dyType = cast<RankedTensorType>(dy.getType());
  SmallVector<int64_t> keptShape(inputType.getShape());
  for (int64_t axis : axes)
    keptShape[axis] = 1;
  Value kept = dy;
  if (dyType.getShape() != ArrayRef<int64_t>(keptShape))
    kept = ReshapeOp::create(
        builder, loc, RankedTensorType::get(keptShape, dyType.getElementType()),
        dy);
  return broadcastTo(builder, loc, kept, inputType);
}

LogicalResult ReduceSumOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getInput()))
    return success();
  operandGrads[0] =
      broadcastReduced(builder, getLoc(), dy, getInput(), getAxes());
  return success();
}

LogicalResult ReduceMeanOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  double count = 1;
  for (int64_t axis : getAxes())
    count *= static_cast<double>(shape[axis]);
  Location loc = getLoc();
  Value scaled = ScaleOp::create(builder, loc, dy, llvm::APFloat(1.0 / count));
  operandGrads[0] =
      broadcastReduced(builder, loc, scaled, getInput(), getAxes());
  return success();
}

LogicalResult ReduceMaxOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getInput()))
    return success();
  // dx = dy where x equals the max, 0 elsewhere, without a comparison op:
  // `relu_grad(dyb, max - x)` passes dyb exactly where x is below the max,
  // so subtracting it from dyb keeps the maxima. Ties all get the gradient
  // (as PyTorch's amax distributes it, but undivided).
  Location loc = getLoc();
  Value x = getInput();
  Value dyb = broadcastReduced(builder, loc, dy, x, getAxes());
  Value maxb = broadcastReduced(builder, loc, getResult(), x, getAxes());
  Value below = SubOp::create(builder, loc, maxb, x);
  operandGrads[0] = SubOp::create(builder, loc, dyb,
                                  ReluGradOp::create(builder, loc, dyb, below));
  return success();
}

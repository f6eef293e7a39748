//===- Shape.cpp - loom shape ops -----------------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the shape ops (reshape, transpose, slice, pad, concat, split),
// in the house order: verify, infer, sharding rule, cost.
//
// Sharding: reshape factorizes its two shapes (ReshapeFactors.h); transpose
// moves one factor per dim. Slice, pad, concat and split share one rule
// (getDimwiseRule): a dim every tensor holds whole and alike is one parallel
// factor; a dim the op cuts, shifts or joins may not be split, since a split
// there would hand each device different elements in the input than in the
// result.
//
// Costs: none of these ops computes, so all are DataMovement with 0 FLOPs.
// A row-major reshape is a view of its operand's buffer (also per device,
// since its rule keeps local blocks contiguous) and moves no bytes; the
// others copy what they read into a new buffer.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"
#include "loom/Dialect/Loom/IR/ReshapeFactors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;

static constexpr int64_t kNoDim = OpShardingRuleBuilder::kNoDim;

/// Returns the type of `value` as a ranked tensor, or reports an error.
/// Inference runs from builders before the ODS type constraints are checked.
static FailureOr<RankedTensorType>
getRankedOperandType(std::optional<Location> location, Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return emitOptionalError(location, "expects ranked tensor operands");
  return type;
}

/// Checks that each of the named per-dim attributes has one entry per dim.
static LogicalResult
checkOneEntryPerDim(std::optional<Location> location, int64_t rank,
                    ArrayRef<std::pair<StringRef, ArrayRef<int64_t>>> attrs) {
  if (llvm::all_of(attrs, [&](const auto &attr) {
        return static_cast<int64_t>(attr.second.size()) == rank;
      }))
    return success();
  std::string names, sizes;
  llvm::raw_string_ostream namesOs(names), sizesOs(sizes);
  for (auto [i, attr] : llvm::enumerate(attrs)) {
    StringRef sep = i == 0 ? "" : i + 1 == attrs.size() ? " and " : ", ";
    namesOs << sep << attr.first;
    sizesOs << sep << attr.second.size();
  }
  return emitOptionalError(location, "expects one entry per input dim (", rank,
                           ") in ", names, ", got ", sizes);
}

/// Returns the rule of an op whose operands and results all have one rank
/// and correspond dim by dim. A dim for which `isWhole` holds has one size
/// in every tensor and becomes one parallel factor shared by all of them.
/// Any other dim becomes a NeedReplication factor in each tensor of its own
/// (none where the tensor's dim has size 1).
static OpShardingRule getDimwiseRule(Operation *op,
                                     function_ref<bool(int64_t)> isWhole) {
  OpShapes shapes = getGlobalShapes(op);
  int64_t numOperands = shapes.operands.size();
  int64_t numResults = shapes.results.size();
  int64_t rank = shapes.operands.front().size();
  OpShardingRuleBuilder builder(op->getOperandTypes(), op->getResultTypes());
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (isWhole(dim)) {
      builder.addFactor(SmallVector<int64_t>(numOperands, dim),
                        SmallVector<int64_t>(numResults, dim),
                        shapes.operands.front()[dim]);
      continue;
    }
    // One factor per tensor, present in that tensor only.
    for (int64_t i = 0; i < numOperands + numResults; ++i) {
      bool isOperand = i < numOperands;
      int64_t size = isOperand ? shapes.operands[i][dim]
                               : shapes.results[i - numOperands][dim];
      if (size == 1)
        continue;
      SmallVector<int64_t> operandDims(numOperands, kNoDim);
      SmallVector<int64_t> resultDims(numResults, kNoDim);
      (isOperand ? operandDims[i] : resultDims[i - numOperands]) = dim;
      builder.addFactor(operandDims, resultDims, size,
                        FactorKind::NeedReplication);
    }
  }
  return builder.build();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

/// Returns the element count of `shape`, or std::nullopt if it overflows.
static std::optional<int64_t> getCheckedNumElements(ArrayRef<int64_t> shape) {
  std::optional<int64_t> count = 1;
  for (int64_t size : shape)
    if (count)
      count = llvm::checkedMul(*count, size);
  return count;
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getType();

  // C1.
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("expects input and result of one element type, got ")
           << inputType.getElementType() << " and "
           << resultType.getElementType();

  // C2: a count that overflows int64 matches nothing.
  std::optional<int64_t> inputCount =
      getCheckedNumElements(inputType.getShape());
  std::optional<int64_t> resultCount =
      getCheckedNumElements(resultType.getShape());
  if (!inputCount || !resultCount || *inputCount != *resultCount) {
    auto print = [](std::optional<int64_t> count) {
      return count ? std::to_string(*count) : std::string("over 2^63");
    };
    return emitOpError("expects input and result of one element count, got ")
           << print(inputCount) << " (" << inputType << ") and "
           << print(resultCount) << " (" << resultType << ")";
  }
  return success();
}

OpShardingRule ReshapeOp::getShardingRule() {
  ArrayRef<int64_t> inputShape = getInput().getType().getShape();
  ArrayRef<int64_t> resultShape = getType().getShape();
  OpShardingRuleBuilder builder(getOperation()->getOperandTypes(),
                                getOperation()->getResultTypes());
  FailureOr<SmallVector<ReshapeFactor>> factors =
      factorizeReshape(inputShape, resultShape);
  if (failed(factors)) {
    // Only an op that failed C2 gets here; replicating every dim is the rule
    // that is correct for any shapes.
    for (auto [dim, size] : llvm::enumerate(inputShape))
      if (size != 1)
        builder.addFactor({static_cast<int64_t>(dim)}, {kNoDim}, size,
                          FactorKind::NeedReplication);
    for (auto [dim, size] : llvm::enumerate(resultShape))
      if (size != 1)
        builder.addFactor({kNoDim}, {static_cast<int64_t>(dim)}, size,
                          FactorKind::NeedReplication);
    return builder.build();
  }
  for (const ReshapeFactor &factor : *factors)
    builder.addFactor({factor.inputDim}, {factor.resultDim}, factor.size,
                      factor.kind);
  // Moving elements is linear: a partial sum reshapes summand by summand.
  return builder.build().setLinear();
}

OpCost ReshapeOp::getCost(const OpShapes &shapes) {
  // A view: nothing is read or written. The result still occupies its bytes
  // as a value (aliasing the operand's buffer).
  OpCost cost = getStreamingCost(getOperation(), shapes, OpClass::DataMovement,
                                 /*flops=*/0);
  cost.bytesRead = 0;
  cost.bytesWritten = 0;
  return cost;
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> inputType =
      getRankedOperandType(location, adaptor.getInput());
  if (failed(inputType))
    return failure();
  int64_t rank = inputType->getRank();
  ArrayRef<int64_t> permutation = adaptor.getPermutation();

  // C1.
  if (static_cast<int64_t>(permutation.size()) != rank)
    return emitOptionalError(location,
                             "expects one permutation entry per input dim (",
                             rank, "), got ", permutation.size());

  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation) {
    // C2.
    if (dim < 0 || dim >= rank)
      return emitOptionalError(location, "expects permutation entry ", dim,
                               " to be in [0, ", rank, ")");
    // C3.
    if (seen[dim])
      return emitOptionalError(location,
                               "expects distinct permutation entries, got ",
                               dim, " twice");
    seen[dim] = true;
    shape.push_back(inputType->getDimSize(dim));
  }
  inferred.push_back(RankedTensorType::get(shape, inputType->getElementType()));
  return success();
}

OpShardingRule TransposeOp::getShardingRule() {
  // One parallel factor per input dim, at the result dim it moves to.
  ArrayRef<int64_t> inputShape = getInput().getType().getShape();
  ArrayRef<int64_t> permutation = getPermutation();
  OpShardingRuleBuilder builder(getOperation()->getOperandTypes(),
                                getOperation()->getResultTypes());
  for (auto [dim, size] : llvm::enumerate(inputShape)) {
    int64_t resultDim = llvm::find(permutation, static_cast<int64_t>(dim)) -
                        permutation.begin();
    builder.addFactor({static_cast<int64_t>(dim)}, {resultDim}, size);
  }
  return builder.build().setLinear();
}

OpCost TransposeOp::getCost(const OpShapes &shapes) {
  return getStreamingCost(getOperation(), shapes, OpClass::DataMovement,
                          /*flops=*/0);
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> inputType =
      getRankedOperandType(location, adaptor.getInput());
  if (failed(inputType))
    return failure();
  int64_t rank = inputType->getRank();
  ArrayRef<int64_t> starts = adaptor.getStarts(), limits = adaptor.getLimits(),
                    strides = adaptor.getStrides();

  // C1.
  if (failed(checkOneEntryPerDim(
          location, rank,
          {{"starts", starts}, {"limits", limits}, {"strides", strides}})))
    return failure();

  SmallVector<int64_t> shape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    // C2.
    if (strides[dim] < 1)
      return emitOptionalError(location, "expects strides >= 1, got ",
                               strides[dim], " in dim ", dim);
    // C3.
    int64_t size = inputType->getDimSize(dim);
    if (starts[dim] < 0 || starts[dim] > limits[dim] || limits[dim] > size)
      return emitOptionalError(location,
                               "expects 0 <= start <= limit <= size in dim ",
                               dim, ", got start ", starts[dim], ", limit ",
                               limits[dim], ", size ", size);
    int64_t extent = limits[dim] - starts[dim];
    shape.push_back(extent / strides[dim] + (extent % strides[dim] != 0));
  }
  inferred.push_back(RankedTensorType::get(shape, inputType->getElementType()));
  return success();
}

OpShardingRule SliceOp::getShardingRule() {
  // A dim taken whole (start 0, every index) is split alike in input and
  // result; in a sliced dim, input block i and result block i hold different
  // elements.
  ArrayRef<int64_t> inputShape = getInput().getType().getShape();
  ArrayRef<int64_t> resultShape = getType().getShape();
  ArrayRef<int64_t> starts = getStarts();
  return getDimwiseRule(getOperation(), [&](int64_t dim) {
           return starts[dim] == 0 && resultShape[dim] == inputShape[dim];
         })
      .setLinear();
}

OpCost SliceOp::getCost(const OpShapes &shapes) {
  // Only the selected elements are read: as many bytes as are written.
  OpCost cost = getStreamingCost(getOperation(), shapes, OpClass::DataMovement,
                                 /*flops=*/0);
  cost.bytesRead = cost.bytesWritten;
  return cost;
}

//===----------------------------------------------------------------------===//
// PadOp
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> inputType =
      getRankedOperandType(location, adaptor.getInput());
  if (failed(inputType))
    return failure();
  int64_t rank = inputType->getRank();
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh(),
                    interior = adaptor.getInterior();

  // C1.
  if (failed(checkOneEntryPerDim(
          location, rank,
          {{"low", low}, {"high", high}, {"interior", interior}})))
    return failure();

  SmallVector<int64_t> shape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    // C2.
    for (auto [name, amounts] : {std::pair{"low", low}, std::pair{"high", high},
                                 std::pair{"interior", interior}})
      if (amounts[dim] < 0)
        return emitOptionalError(location, "expects padding >= 0, got ", name,
                                 " ", amounts[dim], " in dim ", dim);
    // C3: low + size + (size - 1) * interior + high.
    int64_t size = inputType->getDimSize(dim);
    std::optional<int64_t> padded = llvm::checkedMulAdd(
        std::max<int64_t>(size - 1, 0), interior[dim], size);
    if (padded)
      padded = llvm::checkedAdd(*padded, low[dim]);
    if (padded)
      padded = llvm::checkedAdd(*padded, high[dim]);
    if (!padded)
      return emitOptionalError(location, "expects the padded size of dim ", dim,
                               " to fit in 64 bits");
    shape.push_back(*padded);
  }
  inferred.push_back(RankedTensorType::get(shape, inputType->getElementType()));
  return success();
}

OpShardingRule PadOp::getShardingRule() {
  // Padding moves the elements of a dim to other indices; an unpadded dim is
  // split alike in input and result.
  ArrayRef<int64_t> low = getLow(), high = getHigh(), interior = getInterior();
  // Zero padding keeps it linear: the pad of a sum is the sum of the pads.
  return getDimwiseRule(getOperation(), [&](int64_t dim) {
           return low[dim] == 0 && high[dim] == 0 && interior[dim] == 0;
         })
      .setLinear();
}

OpCost PadOp::getCost(const OpShapes &shapes) {
  // Reads the input once; writes every result element, zeros included.
  return getStreamingCost(getOperation(), shapes, OpClass::DataMovement,
                          /*flops=*/0);
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ValueRange inputs = adaptor.getInputs();
  // C1.
  if (inputs.empty())
    return emitOptionalError(location, "expects at least one operand");

  SmallVector<RankedTensorType> types;
  for (Value input : inputs) {
    FailureOr<RankedTensorType> type = getRankedOperandType(location, input);
    if (failed(type))
      return failure();
    types.push_back(*type);
  }
  RankedTensorType first = types.front();
  int64_t rank = first.getRank();
  for (RankedTensorType type : ArrayRef(types).drop_front()) {
    // C2.
    if (type.getElementType() != first.getElementType())
      return emitOptionalError(
          location, "expects operands of one element type, got ",
          first.getElementType(), " and ", type.getElementType());
    // C3.
    if (type.getRank() != rank)
      return emitOptionalError(location, "expects operands of one rank, got ",
                               first, " and ", type);
  }

  // C4.
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(location, "expects axis ", axis, " to be in [0, ",
                             rank, ")");

  SmallVector<int64_t> shape(first.getShape());
  for (auto [index, type] : llvm::enumerate(types)) {
    if (index == 0)
      continue;
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (dim == axis)
        continue;
      // C5.
      if (type.getDimSize(dim) != shape[dim])
        return emitOptionalError(
            location, "expects operand #", index, " to have size ", shape[dim],
            " in dim ", dim, " like operand #0, got ", type.getDimSize(dim));
    }
    // C6.
    std::optional<int64_t> sum =
        llvm::checkedAdd(shape[axis], type.getDimSize(axis));
    if (!sum)
      return emitOptionalError(location, "expects the size of dim ", axis,
                               " of the result to fit in 64 bits");
    shape[axis] = *sum;
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

OpShardingRule ConcatOp::getShardingRule() {
  // Block i of the result's axis is not made of block i of each operand.
  int64_t axis = getAxis();
  return getDimwiseRule(getOperation(),
                        [&](int64_t dim) { return dim != axis; })
      .setLinear();
}

OpCost ConcatOp::getCost(const OpShapes &shapes) {
  return getStreamingCost(getOperation(), shapes, OpClass::DataMovement,
                          /*flops=*/0);
}

//===----------------------------------------------------------------------===//
// SplitOp
//===----------------------------------------------------------------------===//

LogicalResult SplitOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> inputType =
      getRankedOperandType(location, adaptor.getInput());
  if (failed(inputType))
    return failure();
  int64_t rank = inputType->getRank();

  // C1.
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(location, "expects axis ", axis, " to be in [0, ",
                             rank, ")");

  // C2.
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return emitOptionalError(location, "expects at least one size");

  std::optional<int64_t> total = 0;
  for (auto [index, size] : llvm::enumerate(sizes)) {
    // C3.
    if (size < 0)
      return emitOptionalError(location, "expects sizes >= 0, got ", size,
                               " at index ", index);
    if (total)
      total = llvm::checkedAdd(*total, size);
  }

  // C4: a sum that overflows int64 matches no dim.
  int64_t axisSize = inputType->getDimSize(axis);
  if (!total || *total != axisSize) {
    std::string got = total ? std::to_string(*total) : "over 2^63";
    return emitOptionalError(location, "expects sizes adding up to ", axisSize,
                             " (the size of dim ", axis, "), got ", got);
  }

  SmallVector<int64_t> shape(inputType->getShape());
  for (int64_t size : sizes) {
    shape[axis] = size;
    inferred.push_back(
        RankedTensorType::get(shape, inputType->getElementType()));
  }
  return success();
}

OpShardingRule SplitOp::getShardingRule() {
  // Block i of the input's axis is not made of block i of each result.
  int64_t axis = getAxis();
  return getDimwiseRule(getOperation(),
                        [&](int64_t dim) { return dim != axis; })
      .setLinear();
}

OpCost SplitOp::getCost(const OpShapes &shapes) {
  return getStreamingCost(getOperation(), shapes, OpClass::DataMovement,
                          /*flops=*/0);
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// Shape ops move elements without arithmetic; each VJP moves the gradient
// back: reshape and transpose invert, slice pads, pad slices, concat splits
// and split concatenates.
//

LogicalResult ReshapeOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getInput()))
    return success();
  operandGrads[0] =
      ReshapeOp::create(builder, getLoc(), getInput().getType(), dy);
  return success();
}

LogicalResult TransposeOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getInput()))
    return success();
  ArrayRef<int64_t> permutation = getPermutation();
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    inverse[p] = static_cast<int64_t>(i);
  operandGrads[0] = TransposeOp::create(builder, getLoc(), dy, inverse);
  return success();
}

LogicalResult SliceOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getInput()))
    return success();
  // Put each kept element back at its index: low = start, interior =
  // stride - 1, and the rest of the dim as high.
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  ArrayRef<int64_t> outShape = cast<RankedTensorType>(dy.getType()).getShape();
  SmallVector<int64_t> low, high, interior;
  for (size_t d = 0; d < inShape.size(); ++d) {
    int64_t n = outShape[d], start = getStarts()[d], stride = getStrides()[d];
    if (n == 0) {
      low.push_back(0);
      interior.push_back(0);
      high.push_back(inShape[d]);
      continue;
    }
    low.push_back(start);
    interior.push_back(stride - 1);
    high.push_back(inShape[d] - (start + (n - 1) * stride + 1));
  }
  operandGrads[0] = PadOp::create(builder, getLoc(), dy, low, high, interior);
  return success();
}

LogicalResult PadOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getInput()))
    return success();
  // Take back the input's elements: start at low, step interior + 1.
  ArrayRef<int64_t> inShape = getInput().getType().getShape();
  SmallVector<int64_t> starts, limits, strides;
  for (size_t d = 0; d < inShape.size(); ++d) {
    int64_t n = inShape[d], low = getLow()[d], step = getInterior()[d] + 1;
    starts.push_back(low);
    limits.push_back(n == 0 ? low : low + (n - 1) * step + 1);
    strides.push_back(n == 0 ? 1 : step);
  }
  operandGrads[0] =
      SliceOp::create(builder, getLoc(), dy, starts, limits, strides);
  return success();
}

LogicalResult ConcatOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getInputs().size(), Value());
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getResult()))
    return success();
  SmallVector<int64_t> sizes;
  for (Value input : getInputs())
    sizes.push_back(cast<RankedTensorType>(input.getType()).getShape()[getAxis()]);
  auto split = SplitOp::create(builder, getLoc(), dy, getAxis(), sizes);
  for (auto [i, grad] : llvm::enumerate(split.getOutputs()))
    operandGrads[i] = grad;
  return success();
}

LogicalResult SplitOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (!isFloatTensor(getInput()) ||
      llvm::all_of(resultGrads, [](Value grad) { return !grad; }))
    return success();
  // Results that do not reach the loss contribute zeros.
  Location loc = getLoc();
  SmallVector<Value> pieces;
  for (auto [result, grad] : llvm::zip(getOutputs(), resultGrads)) {
    auto type = cast<RankedTensorType>(result.getType());
    pieces.push_back(grad ? grad
                          : buildSplat(builder, loc, type.getElementType(), 0.0,
                                       type.getShape()));
  }
  operandGrads[0] = ConcatOp::create(builder, loc, pieces, getAxis());
  return success();
}

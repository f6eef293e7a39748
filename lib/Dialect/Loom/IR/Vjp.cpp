//===- Vjp.cpp - Helpers shared by the VJPs of loom ops -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/Vjp.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::loom;

Value mlir::loom::buildSplat(OpBuilder &builder, Location loc,
                             Type elementType, double value,
                             ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, elementType);
  TypedAttr attr;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    llvm::APFloat apValue(value);
    bool losesInfo = false;
    apValue.convert(floatType.getFloatSemantics(),
                    llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    attr = DenseElementsAttr::get(type, apValue);
  } else {
    attr = DenseElementsAttr::get(
        type, APInt(elementType.getIntOrFloatBitWidth(),
                    static_cast<int64_t>(value), /*isSigned=*/true));
  }
  return arith::ConstantOp::create(builder, loc, attr);
}

Value mlir::loom::sumToShape(OpBuilder &builder, Location loc, Value grad,
                             RankedTensorType target) {
  auto gradType = cast<RankedTensorType>(grad.getType());
  if (gradType.getShape() == target.getShape())
    return grad;
  ArrayRef<int64_t> gradShape = gradType.getShape();
  ArrayRef<int64_t> targetShape = target.getShape();
  int64_t offset = gradType.getRank() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < gradType.getRank(); ++d) {
    if (d < offset || (targetShape[d - offset] == 1 && gradShape[d] != 1))
      axes.push_back(d);
  }
  Value summed = grad;
  if (!axes.empty())
    summed = ReduceSumOp::create(builder, loc, grad, axes, /*keepdims=*/false);
  if (cast<RankedTensorType>(summed.getType()).getShape() == targetShape)
    return summed;
  return ReshapeOp::create(
      builder, loc, RankedTensorType::get(targetShape, gradType.getElementType()),
      summed);
}

Value mlir::loom::broadcastTo(OpBuilder &builder, Location loc, Value value,
                              RankedTensorType target) {
  if (value.getType() == target)
    return value;
  Value zeros = buildSplat(builder, loc, target.getElementType(), 0.0,
                           target.getShape());
  return AddOp::create(builder, loc, zeros, value);
}

bool mlir::loom::isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

LogicalResult mlir::loom::emitNoSecondOrder(Operation *op) {
  return op->emitOpError(
      "has no VJP: it is a backward or optimizer op, and Loom does not "
      "differentiate twice (no second-order gradients)");
}

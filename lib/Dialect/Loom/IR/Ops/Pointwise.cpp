//===- Pointwise.cpp - Shared rules of the pointwise ops ------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "Pointwise.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::loom;

LogicalResult
mlir::loom::detail::inferBroadcastBinary(std::optional<Location> location,
                                         Value lhs, Value rhs,
                                         SmallVectorImpl<Type> &inferred) {
  auto lhsType = dyn_cast<RankedTensorType>(lhs.getType());
  auto rhsType = dyn_cast<RankedTensorType>(rhs.getType());
  if (!lhsType || !rhsType)
    return emitOptionalError(location, "expects ranked tensor operands");
  // C1: mixed precision is explicit, through loom.cast.
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(
        location, "expects operands of one element type, got ",
        lhsType.getElementType(), " and ", rhsType.getElementType());
  // C2.
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(lhsType.getShape(),
                                          rhsType.getShape(), shape))
    return emitOptionalError(location,
                             "expects broadcast-compatible shapes, got ",
                             lhsType, " and ", rhsType);
  inferred.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

OpShardingRule mlir::loom::detail::getPointwiseRule(Operation *op,
                                                    bool globalIndexed,
                                                    bool linear) {
  OpShapes shapes = getGlobalShapes(op);
  SmallVector<ArrayRef<int64_t>> operandShapes(shapes.operands.begin(),
                                               shapes.operands.end());
  return OpShardingRuleBuilder(op->getOperandTypes(), op->getResultTypes())
      .addPointwise(operandShapes, shapes.results.front(), globalIndexed)
      .build()
      .setLinear(linear);
}

OpCost mlir::loom::detail::getPointwiseCost(Operation *op,
                                            const OpShapes &shapes,
                                            double flopsPerElement) {
  return getStreamingCost(op, shapes, OpClass::Elementwise,
                          flopsPerElement * getNumElements(shapes.results[0]));
}

//===- Elementwise.cpp - loom elementwise ops -----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the elementwise ops, in the house order: verify, infer,
// sharding rule, cost. Binary ops share one broadcasting rule for types
// (inferBroadcastBinary) and one for sharding (getPointwiseRule).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace mlir::loom;

/// Infers the result of a binary elementwise op with numpy broadcasting.
/// Checks C1 (one element type) and C2 (broadcast-compatible shapes).
static LogicalResult inferBroadcastBinary(std::optional<Location> location,
                                          Value lhs, Value rhs,
                                          SmallVectorImpl<Type> &inferred) {
  auto lhsType = dyn_cast<RankedTensorType>(lhs.getType());
  auto rhsType = dyn_cast<RankedTensorType>(rhs.getType());
  if (!lhsType || !rhsType)
    return emitOptionalError(location, "expects ranked tensor operands");
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(
        location, "expects operands of one element type, got ",
        lhsType.getElementType(), " and ", rhsType.getElementType());
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(lhsType.getShape(),
                                          rhsType.getShape(), shape))
    return emitOptionalError(location,
                             "expects broadcast-compatible shapes, got ",
                             lhsType, " and ", rhsType);
  inferred.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

/// Returns the rule of a pointwise op: one parallel factor per result dim,
/// absent from operands that broadcast along it.
static OpShardingRule getPointwiseRule(Operation *op) {
  OpShapes shapes = getGlobalShapes(op);
  SmallVector<ArrayRef<int64_t>> operandShapes(shapes.operands.begin(),
                                               shapes.operands.end());
  return OpShardingRuleBuilder(op->getOperandTypes(), op->getResultTypes())
      .addPointwise(operandShapes, shapes.results.front())
      .build();
}

//===----------------------------------------------------------------------===//
// AddOp
//===----------------------------------------------------------------------===//

LogicalResult AddOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  return inferBroadcastBinary(location, adaptor.getLhs(), adaptor.getRhs(),
                              inferred);
}

OpShardingRule AddOp::getShardingRule() {
  return getPointwiseRule(getOperation());
}

OpCost AddOp::getCost(const OpShapes &shapes) {
  return getStreamingCost(getOperation(), shapes, OpClass::Elementwise,
                          getNumElements(shapes.results[0]));
}

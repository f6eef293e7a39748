//===- Matmul.cpp - loom.matmul -------------------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the matrix-product ops, in the house order: verify, infer.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  // Inference also runs from builders, before the ODS type constraints are
  // checked, so the operand types are not yet known to be ranked tensors.
  auto lhsType = dyn_cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhsType = dyn_cast<RankedTensorType>(adaptor.getRhs().getType());
  if (!lhsType || !rhsType)
    return emitOptionalError(location, "expects ranked tensor operands");
  int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();

  // C1: each operand holds at least one matrix.
  if (lhsRank < 2 || rhsRank < 2)
    return emitOptionalError(location, "expects operands of rank >= 2, got ",
                             lhsType, " and ", rhsType);

  // C2.
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(
        location, "expects operands of one element type, got ",
        lhsType.getElementType(), " and ", rhsType.getElementType());

  // C3: after the optional transposes, lhs is [.., M, K] and rhs [.., K, N].
  ArrayRef<int64_t> lhsShape = lhsType.getShape(),
                    rhsShape = rhsType.getShape();
  bool transLhs = adaptor.getTransposeLhs(),
       transRhs = adaptor.getTransposeRhs();
  int64_t lhsKDim = transLhs ? lhsRank - 2 : lhsRank - 1;
  int64_t lhsMDim = transLhs ? lhsRank - 1 : lhsRank - 2;
  int64_t rhsKDim = transRhs ? rhsRank - 1 : rhsRank - 2;
  int64_t rhsNDim = transRhs ? rhsRank - 2 : rhsRank - 1;
  if (lhsShape[lhsKDim] != rhsShape[rhsKDim])
    return emitOptionalError(
        location, "expects contracted dims of equal size, got lhs dim ",
        lhsKDim, " (size ", lhsShape[lhsKDim], ") and rhs dim ", rhsKDim,
        " (size ", rhsShape[rhsKDim], ")");

  // C4: batch dims broadcast numpy-style.
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(lhsShape.drop_back(2),
                                          rhsShape.drop_back(2), shape))
    return emitOptionalError(location,
                             "expects broadcast-compatible batch dims, got ",
                             lhsType, " and ", rhsType);
  shape.push_back(lhsShape[lhsMDim]);
  shape.push_back(rhsShape[rhsNDim]);
  inferred.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

//===- Matmul.cpp - loom.matmul -------------------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the matrix-product ops, in the house order: verify, infer,
// sharding rule, cost.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"
#include "mlir/Dialect/Traits.h"

using namespace mlir;
using namespace mlir::loom;

namespace {
/// The dims of M and K in lhs and of K and N in rhs, after the transposes.
struct MatmulDims {
  int64_t lhsM, lhsK, rhsK, rhsN;
};
} // namespace

static MatmulDims getMatmulDims(int64_t lhsRank, int64_t rhsRank,
                                bool transposeLhs, bool transposeRhs) {
  return {transposeLhs ? lhsRank - 1 : lhsRank - 2,
          transposeLhs ? lhsRank - 2 : lhsRank - 1,
          transposeRhs ? rhsRank - 1 : rhsRank - 2,
          transposeRhs ? rhsRank - 2 : rhsRank - 1};
}

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
  MatmulDims dims = getMatmulDims(lhsRank, rhsRank, transLhs, transRhs);
  int64_t lhsKDim = dims.lhsK, rhsKDim = dims.rhsK;
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
  shape.push_back(lhsShape[dims.lhsM]);
  shape.push_back(rhsShape[dims.rhsN]);
  inferred.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

OpShardingRule MatmulOp::getShardingRule() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  ArrayRef<int64_t> result = getType().getShape();
  int64_t lhsRank = lhs.size(), rhsRank = rhs.size(), rank = result.size();
  MatmulDims dims =
      getMatmulDims(lhsRank, rhsRank, getTransposeLhs(), getTransposeRhs());
  using Builder = OpShardingRuleBuilder;
  Builder builder(getOperation()->getOperandTypes(),
                  getOperation()->getResultTypes());

  // Batch dims: parallel, absent from an operand that broadcasts along them.
  auto batchDim = [&](ArrayRef<int64_t> shape, int64_t resultDim) -> int64_t {
    int64_t dim = resultDim - (rank - static_cast<int64_t>(shape.size()));
    return dim >= 0 && shape[dim] == result[resultDim] ? dim : Builder::kNoDim;
  };
  for (int64_t d = 0; d < rank - 2; ++d)
    builder.addFactor({batchDim(lhs, d), batchDim(rhs, d)}, {d}, result[d]);

  builder.addFactor({dims.lhsM, Builder::kNoDim}, {rank - 2}, lhs[dims.lhsM]);
  builder.addFactor({Builder::kNoDim, dims.rhsN}, {rank - 1}, rhs[dims.rhsN]);
  // Splitting K leaves each device a partial sum of the product.
  builder.addFactor({dims.lhsK, dims.rhsK}, {Builder::kNoDim}, lhs[dims.lhsK],
                    FactorKind::Reduction);
  return builder.build();
}

OpCost MatmulOp::getCost(const OpShapes &shapes) {
  ArrayRef<int64_t> lhs = shapes.operands[0];
  MatmulDims dims = getMatmulDims(lhs.size(), shapes.operands[1].size(),
                                  getTransposeLhs(), getTransposeRhs());
  // One multiply-add per output element and contracted index.
  double flops = 2.0 * getNumElements(shapes.results[0]) * lhs[dims.lhsK];
  OpCost cost = getStreamingCost(getOperation(), shapes, OpClass::Gemm, flops);
  // The host kernel runs one GEMM per batch entry (CUDA a strided batch).
  ArrayRef<int64_t> result = shapes.results[0];
  cost.gemmM = result[result.size() - 2];
  cost.gemmN = result[result.size() - 1];
  cost.gemmK = lhs[dims.lhsK];
  cost.gemmBatch = getNumElements(result.drop_back(2));
  return cost;
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// Gradients of a matrix product, written as matrix products with transpose
// flags so that no transpose is materialized; batch dims an operand was
// broadcast along are summed out by sumToShape.
//

LogicalResult MatmulOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value lhs = getLhs(), rhs = getRhs();
  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  // With A' = op(lhs), B' = op(rhs): dA' = dY B'^T and dB' = A'^T dY.
  Value dLhs = tl ? MatmulOp::create(builder, loc, rhs, dy, /*transpose_lhs=*/tr,
                                     /*transpose_rhs=*/true)
                  : MatmulOp::create(builder, loc, dy, rhs, /*transpose_lhs=*/false,
                                     /*transpose_rhs=*/!tr);
  // A weight applied to a batch of activations (a linear layer): fold the
  // activations' batch dims into M first, so that the weight gradient is
  // one product summed inside the matmul instead of a batch of products
  // summed by a reduce_sum afterwards. The weight may have batch dims of its
  // own, leading the activations' (GPT-2's fused q/k/v weight
  // [3, 1, out, in] on [B, S, in] activations, result [3, B, S, out]): the
  // fold applies when every weight batch dim facing an activation batch dim
  // is 1 or absent, and the gradient [R.., N, K] is viewed back as the
  // weight.
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  auto dyType = cast<RankedTensorType>(dy.getType());
  int64_t lhsBatchRank = lhsType.getRank() - 2;
  int64_t rhsBatchRank = rhsType.getRank() - 2;
  bool foldable = lhsBatchRank > 0 && !tl;
  for (int64_t i = 0; foldable && i < lhsBatchRank; ++i) {
    int64_t rhsDim = rhsBatchRank - lhsBatchRank + i;
    foldable = rhsDim < 0 || rhsType.getShape()[rhsDim] == 1;
  }
  Value lhsForRhs = lhs, dyForRhs = dy;
  if (foldable) {
    int64_t k = lhsType.getShape().back(), n = dyType.getShape().back();
    int64_t rows = lhsType.getNumElements() / k;
    // The weight's own batch dims, R.., lead dy: [R.., L.., M, N].
    SmallVector<int64_t> dyShape(
        rhsType.getShape().take_front(std::max<int64_t>(
            rhsBatchRank - lhsBatchRank, 0)));
    dyShape.append({rows, n});
    lhsForRhs = ReshapeOp::create(
        builder, loc, RankedTensorType::get({rows, k}, lhsType.getElementType()),
        lhs);
    dyForRhs = ReshapeOp::create(
        builder, loc, RankedTensorType::get(dyShape, dyType.getElementType()),
        dy);
  }
  Value dRhs = tr ? MatmulOp::create(builder, loc, dyForRhs, lhsForRhs,
                                     /*transpose_lhs=*/true, /*transpose_rhs=*/tl)
                  : MatmulOp::create(builder, loc, lhsForRhs, dyForRhs,
                                     /*transpose_lhs=*/!tl,
                                     /*transpose_rhs=*/false);
  if (foldable && cast<RankedTensorType>(dRhs.getType()).getShape() !=
                      rhsType.getShape())
    dRhs = ReshapeOp::create(builder, loc, rhsType, dRhs);
  operandGrads[0] =
      sumToShape(builder, loc, dLhs, cast<RankedTensorType>(lhs.getType()));
  operandGrads[1] =
      sumToShape(builder, loc, dRhs, cast<RankedTensorType>(rhs.getType()));
  return success();
}

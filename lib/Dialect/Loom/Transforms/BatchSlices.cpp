//===- BatchSlices.cpp - Retype ops cloned onto a slice of the batch ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/BatchSlices.h"
#include "loom/Dialect/Loom/Transforms/ResultTypes.h"

using namespace mlir;
using namespace mlir::loom;

LogicalResult mlir::loom::retypeForBatchSlice(Operation *op,
                                              llvm::StringRef pieces) {
  FailureOr<bool> inferred = reinferResultTypes(op);
  if (failed(inferred))
    return failure();
  if (*inferred)
    return success();
  if (auto castOp = dyn_cast<CastOp>(op)) {
    auto in = cast<RankedTensorType>(castOp.getInput().getType());
    castOp.getResult().setType(RankedTensorType::get(
        in.getShape(), castOp.getResult().getType().getElementType()));
    return success();
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    auto in = cast<RankedTensorType>(reshape.getInput().getType());
    auto out = cast<RankedTensorType>(reshape.getResult().getType());
    if (in.getNumElements() == out.getNumElements())
      return success();
    SmallVector<int64_t> shape(out.getShape());
    if (shape.empty() ||
        (shape[0] * in.getNumElements()) % out.getNumElements())
      return op->emitOpError("cannot split this reshape into ") << pieces;
    shape[0] = shape[0] * in.getNumElements() / out.getNumElements();
    reshape.getResult().setType(
        RankedTensorType::get(shape, out.getElementType()));
    return success();
  }
  return success();
}

LogicalResult mlir::loom::rescaleBatchSlice(SliceOp original, SliceOp clone,
                                            llvm::StringRef pieces,
                                            llvm::StringRef piece) {
  auto batchType = cast<RankedTensorType>(original.getInput().getType());
  auto pieceType = cast<RankedTensorType>(clone.getInput().getType());
  if (batchType.getRank() == 0 ||
      batchType.getDimSize(0) == pieceType.getDimSize(0))
    return success();
  int64_t rows = pieceType.getDimSize(0);
  ArrayRef<int64_t> starts = clone.getStarts(), limits = clone.getLimits(),
                    strides = clone.getStrides();
  if (starts[0] != 0 || limits[0] != batchType.getDimSize(0) ||
      rows % strides[0] != 0)
    return clone.emitOpError("cannot split this slice into ")
           << pieces << ": it takes rows [" << starts[0] << ", " << limits[0]
           << ") step " << strides[0] << " of the batch's "
           << batchType.getDimSize(0)
           << ", which are not the same rows of every " << piece << " of "
           << rows;
  SmallVector<int64_t> pieceLimits(limits);
  pieceLimits[0] = rows;
  clone.setLimits(pieceLimits);
  return success();
}

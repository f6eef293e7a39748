//===- PartitionShape.cpp - Partitioning the shape ops --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Shape ops whose attributes name sizes. reshape takes the sizes from its
// result type and concat/split/pad only name sizes along dims that must stay
// whole (their sharding rules make those factors need replication), so they
// partition by their types. slice names the limit of every dim, including
// the dims it takes whole, which may be split: there the limit becomes the
// local size.
//
//===----------------------------------------------------------------------===//

#include "PartitionRewrites.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

LogicalResult mlir::loom::dist::partitionSlice(
    Operation *op, const OpPartitionContext &context, OpBuilder &) {
  auto slice = cast<SliceOp>(op);
  RankedTensorType global = context.globalOperandTypes[0];
  auto local =
      getLocalTensorType(global, context.layouts.operands[0], context.mesh);
  if (!local)
    return op->emitOpError() << "operand #0: " << local.error();
  SmallVector<int64_t> limits(slice.getLimits());
  for (int64_t dim = 0; dim < global.getRank(); ++dim) {
    int64_t size = local->getDimSize(dim);
    if (size == global.getDimSize(dim))
      continue;
    // The rule lets only dims taken whole be split; anything else is a
    // strategy that does not respect it.
    if (slice.getStarts()[dim] != 0 ||
        slice.getLimits()[dim] != global.getDimSize(dim) ||
        slice.getStrides()[dim] != 1)
      return op->emitOpError()
             << "dim " << dim << " is split over "
             << formatAxes(context.layouts.operands[0].getDimAxes(dim))
             << " but sliced (start " << slice.getStarts()[dim] << ", limit "
             << slice.getLimits()[dim] << ", stride " << slice.getStrides()[dim]
             << "); only dims taken whole may be "
                "split";
    limits[dim] = size;
  }
  slice.setLimits(limits);
  return setLocalResultTypes(op, context);
}

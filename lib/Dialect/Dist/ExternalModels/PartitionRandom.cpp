//===- PartitionRandom.cpp - Partitioning dropout -------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom.dropout draws each element's mask from its global row-major index
// (counter-based RNG), so a device must know the global shape and where its
// block lies. The partitioned dropout carries the layout of its result as
// its `dist.layout` attribute: with the local type it gives the global shape,
// and with a rank's mesh coordinates (the same coordinates dist.axis_index
// reads) the block's offset. The interpreter and the code generators derive
// the offsets from it, so each device's mask is the slice of the
// single-device mask (docs/Interpreter.md, "Dropout in SPMD programs").
//
//===----------------------------------------------------------------------===//

#include "PartitionRewrites.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

LogicalResult mlir::loom::dist::partitionDropout(
    Operation *op, const OpPartitionContext &context, OpBuilder &) {
  // Set even when nothing is split: an SPMD run needs the attribute on every
  // dropout to know that the block is the whole tensor.
  op->setAttr(kLayoutAttrName,
              LayoutAttr::get(getMeshRef(context), context.layouts.results[0]));
  return setLocalResultTypes(op, context);
}

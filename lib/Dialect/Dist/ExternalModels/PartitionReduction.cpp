//===- PartitionReduction.cpp - Partitioning reduce_mean ------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A mean over a split dim is a sum of per-device partial means, provided each
// device divides its local sum by the *global* count; dividing by its local
// count, as reduce_mean on the local block would, is off by the number of
// blocks. The rewrite is a local reduce_sum scaled by 1 / global count, whose
// result is the partial sum the strategy's layout says (a later all_reduce
// or reduce_scatter completes it). reduce_sum and reduce_max need nothing:
// a sum's partials add up, and reduce_max's reduced dims may not be split.
//
//===----------------------------------------------------------------------===//

#include "PartitionRewrites.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

LogicalResult mlir::loom::dist::partitionReduceMean(
    Operation *op, const OpPartitionContext &context, OpBuilder &builder) {
  auto mean = cast<ReduceMeanOp>(op);
  RankedTensorType global = context.globalOperandTypes[0];
  const Layout &layout = context.layouts.operands[0];
  bool reducesSplitDim = false;
  int64_t globalCount = 1;
  for (int64_t axis : mean.getAxes()) {
    globalCount *= global.getDimSize(axis);
    reducesSplitDim |= !layout.getDimAxes(axis).empty();
  }
  if (!reducesSplitDim)
    return setLocalResultTypes(op, context);

  auto local = getLocalTensorType(context.globalResultTypes[0],
                                  context.layouts.results[0], context.mesh);
  if (!local)
    return op->emitOpError() << "result #0: " << local.error();
  Location loc = op->getLoc();
  auto sum = ReduceSumOp::create(builder, loc, *local, mean.getInput(),
                                 mean.getAxes(), mean.getKeepdims());
  auto scaled = ScaleOp::create(builder, loc, *local, sum.getResult(),
                                builder.getF64FloatAttr(1.0 / globalCount));
  // Keep the attribution attributes (loom.fwd, ...) of the original op.
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    sum->setAttr(attr.getName(), attr.getValue());
    scaled->setAttr(attr.getName(), attr.getValue());
  }
  op->replaceAllUsesWith(scaled);
  op->erase();
  return success();
}

//===- PartitionAttention.cpp - Partitioning attention and rope -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Attention split over batch, heads or the value width is type-only: each
// device attends with its heads. Query heads are the compound (kv heads,
// group) factor, so a split of the key/value heads takes whole groups of
// query heads along and grouped-query attention stays correct; a split of
// the group replicates the key/value heads. Splits of the sequence are
// context parallelism (ring attention over the keys, or a causal query block
// that needs its offset), which is not implemented yet and is rejected.
//
// rope without positions rotates row `s` by angle `s`: a device holding a
// block of the sequence needs the global positions of its rows. The rewrite
// gives the op those positions explicitly: the global positions 0..S-1 as a
// constant, cut like the sequence dim with dist.all_slice (no traffic; each
// device keeps the block at its mesh coordinates on the sequence's axes).
//
//===----------------------------------------------------------------------===//

#include "PartitionRewrites.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

LogicalResult mlir::loom::dist::partitionAttention(
    Operation *op, const OpPartitionContext &context, OpBuilder &) {
  // Op-partitioned factors are the key sequence (ring attention); globally
  // indexed ones are the sequences of a causal mask.
  SmallVector<int64_t> sequence =
      getSplitFactors(context, FactorKind::OpPartitioned);
  llvm::append_range(sequence, getSplitGlobalIndexedFactors(context));
  if (!sequence.empty()) {
    int64_t factor = sequence.front();
    return op->emitOpError()
           << "sequence split of attention (context parallelism) is not "
              "supported yet: factor "
           << getFactorName(factor) << " (size "
           << context.rule.getFactors()[factor].size << ") over "
           << formatAxes(context.factorAxes[factor]);
  }
  return setLocalResultTypes(op, context);
}

LogicalResult mlir::loom::dist::partitionRope(Operation *op,
                                              const OpPartitionContext &context,
                                              OpBuilder &builder) {
  auto rope = cast<RopeOp>(op);
  // With explicit positions every row carries its own; without, dim 2 (S)
  // is the globally indexed factor.
  const Layout::AxisList &seqAxes = context.layouts.results[0].getDimAxes(2);
  if (rope.getPositions() || seqAxes.empty())
    return setLocalResultTypes(op, context);

  auto local = getLocalTensorType(context.globalResultTypes[0],
                                  context.layouts.results[0], context.mesh);
  if (!local)
    return op->emitOpError() << "result #0: " << local.error();
  Location loc = op->getLoc();
  int64_t seq = context.globalResultTypes[0].getDimSize(2);
  SmallVector<int64_t> positions(seq);
  for (int64_t s = 0; s < seq; ++s)
    positions[s] = s;
  auto globalType = RankedTensorType::get({seq}, builder.getI64Type());
  auto all = arith::ConstantOp::create(
      builder, loc, DenseIntElementsAttr::get(globalType, positions));
  auto localType =
      RankedTensorType::get({local->getDimSize(2)}, builder.getI64Type());
  SmallVector<Attribute> axes;
  for (const std::string &axis : seqAxes)
    axes.push_back(builder.getStringAttr(axis));
  auto mine = AllSliceOp::create(
      builder, loc, localType, all.getResult(), getMeshRef(context),
      builder.getArrayAttr(axes), builder.getI64IntegerAttr(0));
  auto rotated =
      RopeOp::create(builder, loc, *local, rope.getInput(), mine.getResult(),
                     rope.getThetaAttr(), rope.getInverseAttr());
  for (NamedAttribute attr : op->getDiscardableAttrs())
    rotated->setAttr(attr.getName(), attr.getValue());
  op->replaceAllUsesWith(rotated);
  op->erase();
  return success();
}

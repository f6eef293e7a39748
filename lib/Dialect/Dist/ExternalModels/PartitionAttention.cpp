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
// the group replicates the key/value heads.
//
// A split of self-attention's shared sequence factor is ring attention
// (context parallelism): the op becomes dist.ring_attention over the
// factor's axes, and attention_grad dist.ring_attention_grad, which reuses
// the log-sum-exp of the forward ring when its `out` operand comes from one
// (the usual training step) and otherwise runs the forward ring again for
// it. Other sequence splits (cross-attention's key or causal query blocks)
// and a mask under a sequence split are rejected with the factor named.
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

/// The element type of the log-sum-exp a ring keeps for `query`'s rows:
/// f64 for f64, f32 for the rest (bf16 sums lose the gradient's accuracy).
static Type getLseElementType(RankedTensorType query) {
  return query.getElementType().isF64()
             ? Type(Float64Type::get(query.getContext()))
             : Type(Float32Type::get(query.getContext()));
}

/// Builds the forward ring over `axes` on the local `query`, `key`, `value`.
static RingAttentionOp createRing(OpBuilder &builder, Location loc,
                                  const OpPartitionContext &context,
                                  ArrayAttr axes, Value query, Value key,
                                  Value value, UnitAttr causal,
                                  FloatAttr scale) {
  auto q = cast<RankedTensorType>(query.getType());
  auto v = cast<RankedTensorType>(value.getType());
  auto outType = RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType());
  auto lseType =
      RankedTensorType::get({q.getDimSize(0), q.getDimSize(1), q.getDimSize(2)},
                            getLseElementType(q));
  return RingAttentionOp::create(builder, loc, outType, lseType, query, key,
                                 value, getMeshRef(context), axes, causal,
                                 scale);
}

/// Rewrites attention or attention_grad whose self-attention sequence
/// factor `factor` is split: the ring ops over the factor's axes.
static LogicalResult partitionRing(Operation *op,
                                   const OpPartitionContext &context,
                                   int64_t factor, OpBuilder &builder) {
  Location loc = op->getLoc();
  SmallVector<Attribute> axisNames;
  for (const std::string &axis : context.factorAxes[factor])
    axisNames.push_back(builder.getStringAttr(axis));
  ArrayAttr axes = builder.getArrayAttr(axisNames);
  Operation *ring;
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    ring = createRing(builder, loc, context, axes, attention.getQuery(),
                      attention.getKey(), attention.getValue(),
                      attention.getCausalAttr(), attention.getScaleAttr());
    op->getResult(0).replaceAllUsesWith(ring->getResult(0));
  } else {
    auto grad = cast<AttentionGradOp>(op);
    // The forward ring's lse, when `out` is its result on these operands;
    // otherwise (a recomputed or foreign forward) the forward ring again.
    auto forward = grad.getOut().getDefiningOp<RingAttentionOp>();
    if (!forward || forward.getQuery() != grad.getQuery() ||
        forward.getKey() != grad.getKey() ||
        forward.getValue() != grad.getValue() || forward.getAxes() != axes ||
        forward.getCausal() != grad.getCausal() ||
        forward.getScaleAttr() != grad.getScaleAttr())
      forward = createRing(builder, loc, context, axes, grad.getQuery(),
                           grad.getKey(), grad.getValue(), grad.getCausalAttr(),
                           grad.getScaleAttr());
    ring = RingAttentionGradOp::create(
        builder, loc, grad.getQuery().getType(), grad.getKey().getType(),
        grad.getValue().getType(), grad.getQuery(), grad.getKey(),
        grad.getValue(), grad.getOut(), grad.getDout(), forward.getLse(),
        getMeshRef(context), axes, grad.getCausalAttr(), grad.getScaleAttr());
    op->replaceAllUsesWith(ring->getResults());
  }
  for (NamedAttribute attr : op->getDiscardableAttrs())
    ring->setAttr(attr.getName(), attr.getValue());
  op->erase();
  return success();
}

/// Whether `factor` of `context`'s rule is self-attention's shared sequence
/// (dims 2 of query, key and value alike), the factor ring attention splits.
static bool isSharedSequence(const OpPartitionContext &context,
                             int64_t factor) {
  const ShardingFactor &info = context.rule.getFactors()[factor];
  return info.kind == FactorKind::OpPartitioned &&
         context.globalOperandTypes[0].getDimSize(2) ==
             context.globalOperandTypes[1].getDimSize(2);
}

LogicalResult mlir::loom::dist::partitionAttention(
    Operation *op, const OpPartitionContext &context, OpBuilder &builder) {
  // Op-partitioned factors are the key sequence (ring attention); globally
  // indexed ones are the sequences of a causal mask.
  SmallVector<int64_t> sequence =
      getSplitFactors(context, FactorKind::OpPartitioned);
  for (int64_t factor : getSplitGlobalIndexedFactors(context))
    if (!llvm::is_contained(sequence, factor))
      sequence.push_back(factor);
  if (sequence.empty())
    return setLocalResultTypes(op, context);
  int64_t factor = sequence.front();
  bool hasMask = isa<AttentionOp>(op)
                     ? bool(cast<AttentionOp>(op).getMask())
                     : bool(cast<AttentionGradOp>(op).getMask());
  if (sequence.size() == 1 && isSharedSequence(context, factor) && !hasMask)
    return partitionRing(op, context, factor, builder);
  return op->emitOpError()
         << "sequence split of attention (context parallelism) is "
            "supported as ring attention of self-attention without a mask "
            "only: factor "
         << getFactorName(factor) << " (size "
         << context.rule.getFactors()[factor].size << ") over "
         << formatAxes(context.factorAxes[factor])
         << (hasMask ? " with a mask operand" : " of cross-attention");
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

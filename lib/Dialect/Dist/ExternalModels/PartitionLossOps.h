//===- PartitionLossOps.h - Partitioning loss and embedding ops -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The per-op rewrites of dist-partition-spmd for the ops at both ends of a
// language model: the token embedding (vocab-parallel lookup and gradient)
// and the cross-entropy loss (vocab-parallel softmax, data-parallel mean).
// PartitionModels.cpp attaches them to the ops as PartitionableOpInterface
// models. The small helpers they share (a block's global offset from
// dist.axis_index, all-reduces, the check of the local operand types) are
// declared here too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_DIST_EXTERNALMODELS_PARTITIONLOSSOPS_H
#define LOOM_LIB_DIALECT_DIST_EXTERNALMODELS_PARTITIONLOSSOPS_H

#include "PartitionRewrites.h"

namespace mlir::loom::dist {

/// loom.cross_entropy: with the vocabulary split, a vocab-parallel softmax
/// (row max and row sum of exp all-reduced over the vocab axes) and the
/// local form with an offset; with positions split, the summed local form
/// and the label count, both all-reduced over the position axes, then one
/// division. The loss comes out whole on every rank.
LogicalResult partitionCrossEntropy(Operation *op,
                                    const OpPartitionContext &context,
                                    OpBuilder &builder);

/// loom.cross_entropy_grad: the same log-probabilities for a vocab split,
/// and `dloss` divided by the global label count for a position split.
LogicalResult partitionCrossEntropyGrad(Operation *op,
                                        const OpPartitionContext &context,
                                        OpBuilder &builder);

/// loom.embedding: a vocab split looks up the ids in the rank's rows only
/// (the local form with an offset), leaving a partial sum over the vocab
/// axes.
LogicalResult partitionEmbedding(Operation *op,
                                 const OpPartitionContext &context,
                                 OpBuilder &builder);

/// loom.embedding_grad: a vocab split scatters the ids in the rank's rows
/// only into its block of the table gradient (`vocab_size` becomes local).
LogicalResult partitionEmbeddingGrad(Operation *op,
                                     const OpPartitionContext &context,
                                     OpBuilder &builder);

/// The mesh axes of `factors` under `context.factorAxes`, in mesh order
/// (the order a collective over them names them in).
Layout::AxisList getFactorsAxes(const OpPartitionContext &context,
                                ArrayRef<int64_t> factors);

/// The global offset of this rank's block along a dim split by `axes`
/// (major first) into blocks of `blockSize` elements: the mixed-radix index
/// of the rank's `dist.axis_index` coordinates on `axes`, times
/// `blockSize`, as an `index` value built from arith ops.
Value buildBlockOffset(OpBuilder &builder, Location loc,
                       const OpPartitionContext &context,
                       const Layout::AxisList &axes, int64_t blockSize);

/// A `dist.all_reduce` of `value` over `axes` (returned as is when `axes`
/// is empty).
Value buildAllReduce(OpBuilder &builder, Location loc,
                     const OpPartitionContext &context, ReductionKind kind,
                     Value value, const Layout::AxisList &axes);

/// Checks that every operand of `op` has the local type its layout gives
/// it; emits an error naming the operand and both shapes otherwise.
LogicalResult checkLocalOperands(Operation *op,
                                 const OpPartitionContext &context);

} // namespace mlir::loom::dist

#endif // LOOM_LIB_DIALECT_DIST_EXTERNALMODELS_PARTITIONLOSSOPS_H

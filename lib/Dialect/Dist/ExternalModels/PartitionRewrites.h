//===- PartitionRewrites.h - Per-op partition rewrites ----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Most ops partition by changing their types: each rank runs the op on its
// blocks. Ops with globally indexed or op-partitioned factors need more (the
// block's global offset, communication of their own); each such op's
// PartitionableOpInterface model (PartitionModels.cpp) calls one function
// here, implemented next to the others of its kind (PartitionLoss.cpp,
// PartitionEmbedding.cpp, ...). Each has the signature of
// PartitionableOpInterface::partition with the op first.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_DIST_EXTERNALMODELS_PARTITIONREWRITES_H
#define LOOM_LIB_DIALECT_DIST_EXTERNALMODELS_PARTITIONREWRITES_H

#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h"

namespace mlir::loom::dist {

//===----------------------------------------------------------------------===//
// Rewrites, one per op kind, in the file of their family
//===----------------------------------------------------------------------===//

// PartitionShape.cpp: `loom.slice` keeps the whole of each split dim, so its
// limits there become the local size.
LogicalResult partitionSlice(Operation *op, const OpPartitionContext &context,
                             OpBuilder &builder);

// PartitionReduction.cpp: `loom.reduce_mean` over a split dim divides the
// local sum by the global count, leaving a correct partial sum.
LogicalResult partitionReduceMean(Operation *op,
                                  const OpPartitionContext &context,
                                  OpBuilder &builder);

// PartitionAttention.cpp: heads and batch splits are type-only; sequence
// splits (context parallelism) are rejected (and their models say so in
// isSplitSupported). `loom.rope` without positions gets the positions of
// its block.
LogicalResult partitionAttention(Operation *op,
                                 const OpPartitionContext &context,
                                 OpBuilder &builder);
LogicalResult partitionRope(Operation *op, const OpPartitionContext &context,
                            OpBuilder &builder);

// PartitionRandom.cpp: `loom.dropout` keys its mask by global element index,
// so it carries the layout of its result.
LogicalResult partitionDropout(Operation *op, const OpPartitionContext &context,
                               OpBuilder &builder);

// PartitionLoss.cpp / PartitionEmbedding.cpp: declared, with the helpers
// they share, in PartitionLossOps.h.

} // namespace mlir::loom::dist

#endif // LOOM_LIB_DIALECT_DIST_EXTERNALMODELS_PARTITIONREWRITES_H

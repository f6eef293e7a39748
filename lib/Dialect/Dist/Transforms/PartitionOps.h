//===- PartitionOps.h - Per-op rewrites of dist-partition-spmd --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Most ops partition by changing their types: each rank runs the op on its
// blocks. Ops with globally indexed or op-partitioned factors need more (the
// block's global offset, communication of their own); dist-partition-spmd
// hands each such op to one function here, implemented next to the others
// of its kind (PartitionLoss.cpp, PartitionEmbedding.cpp, ...).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONOPS_H
#define LOOM_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONOPS_H

#include "loom/Analysis/Strategy/OpLayouts.h"
#include "loom/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::loom::dist {

/// What an op's rewrite needs to know. The op's operands are already the
/// local values (the partition pass converts producers first); its result
/// types are still global.
struct OpPartitionContext {
  /// The mesh op (for symbol references in created dist ops) and its axes.
  MeshOp meshOp;
  const Mesh &mesh;
  /// The op's sharding rule and strategy.
  const OpShardingRule &rule;
  const FactorAxes &factorAxes;
  /// The layouts the strategy gives each operand and result.
  const OpLayouts &layouts;
  /// The global types of the op's operands and results.
  ArrayRef<RankedTensorType> globalOperandTypes;
  ArrayRef<RankedTensorType> globalResultTypes;
};

/// A rewrite of one op into local ops that compute, on every rank, its block
/// of each result under `context.layouts.results`. It replaces all uses of
/// the op's results and erases the op, or emits an error on the op (naming
/// the factor and the axes) and returns failure when it does not support
/// the strategy. `builder` is positioned before the op.
using OpPartitioner = LogicalResult (*)(Operation *op,
                                        const OpPartitionContext &context,
                                        OpBuilder &builder);

/// The rewrite for ops of `op`'s kind, or null when changing the result
/// types suffices.
OpPartitioner lookupOpPartitioner(Operation *op);

} // namespace mlir::loom::dist

#endif // LOOM_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONOPS_H

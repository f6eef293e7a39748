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

/// The attribute holding an op's strategy (`#dist.strategy`).
inline constexpr llvm::StringLiteral kStrategyAttrName = "dist.strategy";
/// The attribute holding a layout (`#dist.layout`): on function arguments and
/// results, on the casts dist-lower-reshards leaves, and on partitioned ops
/// whose computation depends on their block's place (dropout).
inline constexpr llvm::StringLiteral kLayoutAttrName = "dist.layout";

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

//===----------------------------------------------------------------------===//
// Helpers the rewrites share (PartitionOps.cpp)
//===----------------------------------------------------------------------===//

/// The type each device holds of a tensor of type `global` under `layout`;
/// fails with the layout library's message when an axis does not divide.
ValueOrError<RankedTensorType> getLocalTensorType(RankedTensorType global,
                                                  const Layout &layout,
                                                  const Mesh &mesh);

/// The default rewrite: gives every result of `op` its local type under
/// `context.layouts.results`, in place (the op keeps its operands and
/// attributes). A rewrite that only needs to fix an attribute calls this
/// after fixing it. Reports an error on `op` and fails when a local type
/// cannot be formed.
LogicalResult setLocalResultTypes(Operation *op,
                                  const OpPartitionContext &context);

/// The factors of kind `kind` that the strategy splits, in order.
SmallVector<int64_t> getSplitFactors(const OpPartitionContext &context,
                                     FactorKind kind);

/// The globally indexed factors that the strategy splits, in order.
SmallVector<int64_t>
getSplitGlobalIndexedFactors(const OpPartitionContext &context);

/// The reference to the context's mesh, for the dist ops and layouts a
/// rewrite creates.
FlatSymbolRefAttr getMeshRef(const OpPartitionContext &context);

/// The name a factor prints with in `-test-print-sharding-rules` (a, b, ...),
/// for error messages that name the factor.
std::string getFactorName(int64_t factor);

/// The factor's axes as `["tp", "sp"]`, for error messages.
std::string formatAxes(const Layout::AxisList &axes);

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
// splits (context parallelism) are rejected. `loom.rope` without positions
// gets the positions of its block.
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

#endif // LOOM_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONOPS_H

//===- PartitionableOpInterface.h - Partitioning an op ----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What dist-partition-spmd hands an op's rewrite (OpPartitionContext), the
// interface through which it reaches the rewrite, the defaults for ops
// without one, and the helpers rewrites share. The rewrites of Loom's ops
// are external models (lib/Dialect/Dist/ExternalModels).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_H
#define LOOM_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_H

#include "loom/Analysis/Strategy/OpLayouts.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Interfaces/ShardingRule.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::loom::dist {

/// The attribute holding an op's strategy (`#dist.strategy`).
using ::mlir::loom::kStrategyAttrName;
/// The attribute holding a layout (`#dist.layout`): on function arguments and
/// results, on the casts dist-lower-reshards leaves, and on partitioned ops
/// whose computation depends on their block's place (dropout).
using ::mlir::loom::kLayoutAttrName;

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

//===----------------------------------------------------------------------===//
// Defaults, and the entry points passes call
//===----------------------------------------------------------------------===//

/// The default of PartitionableOpInterface::isSplitSupported: true unless a
/// factor in `splitFactors` is op-partitioned or globally indexed (which
/// changing types alone does not implement).
bool isSplitSupportedByDefault(const OpShardingRule &rule,
                               ArrayRef<int64_t> splitFactors);

/// The default rewrite: gives every result of `op` its local type under
/// `context.layouts.results`, in place (the op keeps its operands and
/// attributes). A rewrite that only needs to fix an attribute calls this
/// after fixing it. Reports an error on `op` and fails when a local type
/// cannot be formed.
LogicalResult setLocalResultTypes(Operation *op,
                                  const OpPartitionContext &context);

/// Whether `op`'s partitioning implements splitting `splitFactors` of its
/// rule `rule`: asks the interface, or the default for ops without it.
bool isSplitSupported(Operation *op, const OpShardingRule &rule,
                      ArrayRef<int64_t> splitFactors);

/// Whether `op`'s partitioning implements the strategy `factorAxes` on
/// `mesh`: its splits (isSplitSupported) and the sizes they leave (the
/// interface's fitsMesh; true for ops without the interface).
bool isStrategySupported(Operation *op, const OpShardingRule &rule,
                         const FactorAxes &factorAxes, const Mesh &mesh);

/// The factors `factorAxes` splits (those with any axis), in order.
SmallVector<int64_t> getSplitFactors(const FactorAxes &factorAxes);

/// Partitions `op` under `context` through the interface, or by the default
/// rewrite for ops without it. `builder` is positioned before the op.
LogicalResult partitionOp(Operation *op, const OpPartitionContext &context,
                          OpBuilder &builder);

//===----------------------------------------------------------------------===//
// Helpers the rewrites share
//===----------------------------------------------------------------------===//

/// The type each device holds of a tensor of type `global` under `layout`;
/// fails with the layout library's message when an axis does not divide.
ValueOrError<RankedTensorType> getLocalTensorType(RankedTensorType global,
                                                  const Layout &layout,
                                                  const Mesh &mesh);

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

} // namespace mlir::loom::dist

#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h.inc"

#endif // LOOM_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_H

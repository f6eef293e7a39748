//===- PartitionableOpInterface.cpp - Partitioning an op ------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The interface's generated code, its defaults and the entry points passes
// call, and the helpers the per-op rewrites share. An op without the
// interface partitions by taking its local result types: every factor it
// may split is parallel, reduction or need-replication and none is globally
// indexed, so each device runs the op unchanged on its blocks.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

ValueOrError<RankedTensorType>
mlir::loom::dist::getLocalTensorType(RankedTensorType global,
                                     const Layout &layout, const Mesh &mesh) {
  std::vector<int64_t> shape(global.getShape().begin(),
                             global.getShape().end());
  auto local = layout.getLocalShape(mesh, shape);
  if (!local)
    return ValueOrError<RankedTensorType>::failure(local.error());
  return RankedTensorType::get(*local, global.getElementType(),
                               global.getEncoding());
}

LogicalResult
mlir::loom::dist::setLocalResultTypes(Operation *op,
                                      const OpPartitionContext &context) {
  for (auto [index, result] : llvm::enumerate(op->getResults())) {
    auto local =
        getLocalTensorType(context.globalResultTypes[index],
                           context.layouts.results[index], context.mesh);
    if (!local)
      return op->emitOpError() << "result #" << index << ": " << local.error();
    result.setType(*local);
  }
  return success();
}

static SmallVector<int64_t> splitFactorsIf(const OpPartitionContext &context,
                                           function_ref<bool(int64_t)> pred) {
  SmallVector<int64_t> split;
  for (auto [id, axes] : llvm::enumerate(context.factorAxes))
    if (!axes.empty() && pred(static_cast<int64_t>(id)))
      split.push_back(static_cast<int64_t>(id));
  return split;
}

SmallVector<int64_t>
mlir::loom::dist::getSplitFactors(const OpPartitionContext &context,
                                  FactorKind kind) {
  return splitFactorsIf(context, [&](int64_t id) {
    return context.rule.getFactors()[id].kind == kind;
  });
}

SmallVector<int64_t> mlir::loom::dist::getSplitGlobalIndexedFactors(
    const OpPartitionContext &context) {
  return splitFactorsIf(context, [&](int64_t id) {
    return context.rule.getFactors()[id].globalIndexed;
  });
}

FlatSymbolRefAttr
mlir::loom::dist::getMeshRef(const OpPartitionContext &context) {
  // Op handles are values; the accessors are not const.
  MeshOp mesh = context.meshOp;
  return FlatSymbolRefAttr::get(mesh.getSymNameAttr());
}

std::string mlir::loom::dist::getFactorName(int64_t factor) {
  // The rule printer's names: a..z, then a1..z1, ...
  std::string name(1, static_cast<char>('a' + factor % 26));
  if (factor >= 26)
    name += std::to_string(factor / 26);
  return name;
}

std::string mlir::loom::dist::formatAxes(const Layout::AxisList &axes) {
  std::string text = "[";
  for (auto [index, axis] : llvm::enumerate(axes))
    text += (index ? ", \"" : "\"") + axis + "\"";
  return text + "]";
}

//===----------------------------------------------------------------------===//
// Defaults and entry points
//===----------------------------------------------------------------------===//

bool mlir::loom::dist::isSplitSupportedByDefault(
    const OpShardingRule &rule, ArrayRef<int64_t> splitFactors) {
  return llvm::none_of(splitFactors, [&](int64_t factor) {
    const ShardingFactor &info = rule.getFactors()[factor];
    return info.kind == FactorKind::OpPartitioned || info.globalIndexed;
  });
}

bool mlir::loom::dist::isSplitSupported(Operation *op,
                                        const OpShardingRule &rule,
                                        ArrayRef<int64_t> splitFactors) {
  if (auto partitionable = dyn_cast<PartitionableOpInterface>(op))
    return partitionable.isSplitSupported(rule, splitFactors);
  return isSplitSupportedByDefault(rule, splitFactors);
}

bool mlir::loom::dist::isStrategySupported(Operation *op,
                                           const OpShardingRule &rule,
                                           const FactorAxes &factorAxes,
                                           const Mesh &mesh) {
  if (!isSplitSupported(op, rule, getSplitFactors(factorAxes)))
    return false;
  if (auto partitionable = dyn_cast<PartitionableOpInterface>(op))
    return partitionable.fitsMesh(rule, factorAxes, mesh);
  return true;
}

SmallVector<int64_t>
mlir::loom::dist::getSplitFactors(const FactorAxes &factorAxes) {
  SmallVector<int64_t> split;
  for (auto [factor, axes] : llvm::enumerate(factorAxes))
    if (!axes.empty())
      split.push_back(static_cast<int64_t>(factor));
  return split;
}

LogicalResult mlir::loom::dist::partitionOp(Operation *op,
                                            const OpPartitionContext &context,
                                            OpBuilder &builder) {
  if (auto partitionable = dyn_cast<PartitionableOpInterface>(op))
    return partitionable.partition(context, builder);
  return setLocalResultTypes(op, context);
}

#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.cpp.inc"

//===- PartitionOps.cpp - The registry of per-op rewrites -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Which rewrite dist-partition-spmd applies to each op kind, and the helpers
// the rewrites share. Ops absent from the registry partition by taking their
// local result types: every factor they have is Parallel, Reduction or
// NeedReplication and none is globally indexed, so each device runs the op
// unchanged on its blocks.
//
//===----------------------------------------------------------------------===//

#include "PartitionOps.h"
#include "PartitionLossOps.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "llvm/ADT/TypeSwitch.h"

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
// Registry
//===----------------------------------------------------------------------===//

OpPartitioner mlir::loom::dist::lookupOpPartitioner(Operation *op) {
  return llvm::TypeSwitch<Operation *, OpPartitioner>(op)
      .Case<SliceOp>([](auto) { return partitionSlice; })
      .Case<ReduceMeanOp>([](auto) { return partitionReduceMean; })
      .Case<AttentionOp, AttentionGradOp>(
          [](auto) { return partitionAttention; })
      .Case<RopeOp>([](auto) { return partitionRope; })
      .Case<DropoutOp>([](auto) { return partitionDropout; })
      // Vocab-parallel loss and embedding, the data-parallel loss
      // (PartitionLoss.cpp, PartitionEmbedding.cpp).
      .Case<CrossEntropyOp>([](auto) { return partitionCrossEntropy; })
      .Case<CrossEntropyGradOp>([](auto) { return partitionCrossEntropyGrad; })
      .Case<EmbeddingOp>([](auto) { return partitionEmbedding; })
      .Case<EmbeddingGradOp>([](auto) { return partitionEmbeddingGrad; })
      .Default([](Operation *) -> OpPartitioner { return nullptr; });
}

//===- PartitionModels.cpp - Partitioning Loom's ops ----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The PartitionableOpInterface models of the `loom` ops, one line per op.
// An op needs one when its rule has op-partitioned or globally indexed
// factors (their splits are more than a change of types), or when a split
// changes an attribute (slice limits). Every other op takes the interface's
// defaults without a model. Which splits a model supports is decided next to
// its rewrite: the rewrites of this file's ops implement every split of
// their factors, except cross-attention's sequence splits.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/ExternalModels/PartitionModels.h"

#include "PartitionLossOps.h"
#include "PartitionRewrites.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {
/// The model of an op whose rewrite `Rewrite` implements every split of its
/// rule's factors, op-partitioned and globally indexed ones included.
template <typename OpTy, auto Rewrite>
struct RewriteModel : PartitionableOpInterface::ExternalModel<
                          RewriteModel<OpTy, Rewrite>, OpTy> {
  bool isSplitSupported(Operation *, const OpShardingRule &,
                        ArrayRef<int64_t>) const {
    return true;
  }
  LogicalResult partition(Operation *op, const OpPartitionContext &context,
                          OpBuilder &builder) const {
    return Rewrite(op, context, builder);
  }
};

/// Attention and its gradient: heads, batch and value-width splits, and
/// the shared sequence of self-attention without a mask (ring attention).
/// Cross-attention's sequence splits are not implemented.
template <typename OpTy>
struct AttentionModel
    : PartitionableOpInterface::ExternalModel<AttentionModel<OpTy>, OpTy> {
  bool isSplitSupported(Operation *op, const OpShardingRule &rule,
                        ArrayRef<int64_t> splitFactors) const {
    auto attention = cast<OpTy>(op);
    auto query = cast<RankedTensorType>(attention.getQuery().getType());
    auto key = cast<RankedTensorType>(attention.getKey().getType());
    bool ring =
        query.getDimSize(2) == key.getDimSize(2) && !attention.getMask();
    return llvm::all_of(splitFactors, [&](int64_t factor) {
      const ShardingFactor &info = rule.getFactors()[factor];
      if (info.kind == FactorKind::OpPartitioned)
        return ring;
      return !info.globalIndexed;
    });
  }
  /// The ring's zigzag split cuts each device's sequence block into two
  /// chunks: the block must be even.
  bool fitsMesh(Operation *, const OpShardingRule &rule,
                const FactorAxes &factorAxes, const Mesh &mesh) const {
    for (auto [factor, axes] : llvm::enumerate(factorAxes)) {
      const ShardingFactor &info = rule.getFactors()[factor];
      if (info.kind == FactorKind::OpPartitioned && !axes.empty() &&
          (info.size / mesh.getGroupSize(axes)) % 2 != 0)
        return false;
    }
    return true;
  }
  LogicalResult partition(Operation *op, const OpPartitionContext &context,
                          OpBuilder &builder) const {
    return partitionAttention(op, context, builder);
  }
};
} // namespace

void mlir::loom::dist::registerPartitionModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, LoomDialect *) {
    // Shape.
    SliceOp::attachInterface<RewriteModel<SliceOp, partitionSlice>>(*context);
    // Reduction.
    ReduceMeanOp::attachInterface<
        RewriteModel<ReduceMeanOp, partitionReduceMean>>(*context);
    // Attention.
    AttentionOp::attachInterface<AttentionModel<AttentionOp>>(*context);
    AttentionGradOp::attachInterface<AttentionModel<AttentionGradOp>>(
        *context);
    RopeOp::attachInterface<RewriteModel<RopeOp, partitionRope>>(*context);
    // Random.
    DropoutOp::attachInterface<RewriteModel<DropoutOp, partitionDropout>>(
        *context);
    // Loss: vocab-parallel and data-parallel cross-entropy.
    CrossEntropyOp::attachInterface<
        RewriteModel<CrossEntropyOp, partitionCrossEntropy>>(*context);
    CrossEntropyGradOp::attachInterface<
        RewriteModel<CrossEntropyGradOp, partitionCrossEntropyGrad>>(*context);
    // Embedding: vocab-parallel lookup and gradient.
    EmbeddingOp::attachInterface<
        RewriteModel<EmbeddingOp, partitionEmbedding>>(*context);
    EmbeddingGradOp::attachInterface<
        RewriteModel<EmbeddingGradOp, partitionEmbeddingGrad>>(*context);
  });
}

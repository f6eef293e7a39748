//===- PartitionableOpInterfaceTest.cpp - Partitioning by interface -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// registerAllDialects attaches the partition models to the loom ops that
// need one, and the passes' questions (which splits can be partitioned,
// which ops are optimizer steps) are answered by the ops, not by names.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/InitAllDialects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

class PartitionableOpInterfaceTest : public ::testing::Test {
protected:
  PartitionableOpInterfaceTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(R"mlir(
      func.func @f(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x16x32xf32>,
                   %v: tensor<2x2x16x64xf32>, %table: tensor<100x16xf32>,
                   %ids: tensor<2x8xi64>, %a: tensor<4x8xf32>,
                   %b: tensor<8x16xf32>, %p: tensor<768xf32>,
                   %g: tensor<768xf32>, %qc: tensor<2x8x4x32xf32>) {
        %0 = loom.attention %q, %k, %v {causal} : (tensor<2x8x16x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x64xf32>) -> tensor<2x8x16x64xf32>
        %c = loom.attention %qc, %k, %v {causal} : (tensor<2x8x4x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x64xf32>) -> tensor<2x8x4x64xf32>
        %1 = loom.embedding %table, %ids : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
        %2 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
        %3 = loom.sgd_update %p, %g {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<768xf32>, tensor<768xf32>) -> tensor<768xf32>
        return
      }
    )mlir",
                                         &context);
  }

  /// The op of kind `OpTy` in @f.
  template <typename OpTy> OpTy get() {
    OpTy found;
    module->walk([&](OpTy op) { found = op; });
    return found;
  }

  /// The factors of `op`'s rule that are op-partitioned or globally indexed.
  static SmallVector<int64_t> getSpecialFactors(const OpShardingRule &rule) {
    SmallVector<int64_t> special;
    for (auto [id, factor] : llvm::enumerate(rule.getFactors()))
      if (factor.kind == FactorKind::OpPartitioned || factor.globalIndexed)
        special.push_back(static_cast<int64_t>(id));
    return special;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(PartitionableOpInterfaceTest,
       AttentionSplitsSelfAttentionSequenceAsARing) {
  // Self-attention (the first attention): its one sequence factor is ring
  // attention, on an even block per device (two zigzag chunks).
  AttentionOp self, cross;
  module->walk([&](AttentionOp op) { (self ? cross : self) = op; });
  ASSERT_TRUE(self && cross);
  EXPECT_TRUE(isa<PartitionableOpInterface>(self.getOperation()));
  OpShardingRule rule = self.getShardingRule();
  SmallVector<int64_t> sequence = getSpecialFactors(rule);
  ASSERT_EQ(sequence.size(), 1u);
  EXPECT_TRUE(isSplitSupported(self, rule, sequence));
  FactorAxes axes(rule.getFactors().size());
  axes[sequence[0]] = {"cp"};
  for (auto [size, fits] : {std::pair{2, true}, {8, true}, {16, false}}) {
    auto mesh = Mesh::get({{"cp", size}});
    ASSERT_TRUE(mesh.ok());
    EXPECT_EQ(isStrategySupported(self, rule, axes, *mesh), fits)
        << "16 rows over " << size;
  }
  // Factor 0 is the batch: a type-only split.
  EXPECT_TRUE(isSplitSupported(self, rule, {0}));

  // Cross-attention's query and key sequences are not implemented.
  OpShardingRule crossRule = cross.getShardingRule();
  SmallVector<int64_t> crossSequences = getSpecialFactors(crossRule);
  ASSERT_EQ(crossSequences.size(), 2u);
  for (int64_t factor : crossSequences)
    EXPECT_FALSE(isSplitSupported(cross, crossRule, {factor}));
}

TEST_F(PartitionableOpInterfaceTest, EmbeddingPartitionsItsGlobalVocabulary) {
  auto embedding = get<EmbeddingOp>();
  ASSERT_TRUE(embedding);
  OpShardingRule rule = embedding.getShardingRule();
  SmallVector<int64_t> vocab = getSpecialFactors(rule);
  ASSERT_EQ(vocab.size(), 1u);
  // The default would refuse a globally indexed split; the model's rewrite
  // implements it (masked lookup with an offset).
  EXPECT_FALSE(isSplitSupportedByDefault(rule, vocab));
  EXPECT_TRUE(isSplitSupported(embedding, rule, vocab));
}

TEST_F(PartitionableOpInterfaceTest, MatmulTakesTheDefaults) {
  auto matmul = get<MatmulOp>();
  ASSERT_TRUE(matmul);
  EXPECT_FALSE(isa<PartitionableOpInterface>(matmul.getOperation()));
  OpShardingRule rule = matmul.getShardingRule();
  SmallVector<int64_t> all;
  for (size_t id = 0; id < rule.getFactors().size(); ++id)
    all.push_back(static_cast<int64_t>(id));
  EXPECT_TRUE(isSplitSupported(matmul, rule, all));
}

TEST_F(PartitionableOpInterfaceTest, OptimizerStepsAreFoundByTrait) {
  EXPECT_TRUE(isOptimizerUpdate(get<SgdUpdateOp>()));
  EXPECT_FALSE(isOptimizerUpdate(get<MatmulOp>()));
}

} // namespace

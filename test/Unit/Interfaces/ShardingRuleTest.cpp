//===- ShardingRuleTest.cpp - Building, checking and printing rules -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interfaces/ShardingRule.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom;

namespace {

std::string print(const OpShardingRule &rule) {
  std::string text;
  llvm::raw_string_ostream(text) << rule;
  return text;
}

constexpr int64_t kNoDim = OpShardingRuleBuilder::kNoDim;

TEST(ShardingRuleTest, MatmulFactorsAndKinds) {
  OpShardingRuleBuilder builder({2, 2}, {2});
  int64_t m = builder.addFactor({0, kNoDim}, {0}, 4);
  int64_t n = builder.addFactor({kNoDim, 1}, {1}, 16);
  int64_t k = builder.addFactor({1, 0}, {kNoDim}, 8, FactorKind::Reduction);
  OpShardingRule rule = builder.build();

  EXPECT_EQ(rule.getOperandDimFactors(0, 0), ArrayRef<int64_t>{m});
  EXPECT_EQ(rule.getOperandDimFactors(1, 0), ArrayRef<int64_t>{k});
  EXPECT_EQ(rule.getResultDimFactors(0, 1), ArrayRef<int64_t>{n});
  EXPECT_EQ(rule.getFactorsOfKind(FactorKind::Reduction),
            SmallVector<int64_t>{k});
  EXPECT_EQ(rule.getFactorsOfKind(FactorKind::Parallel),
            (SmallVector<int64_t>{m, n}));
  EXPECT_EQ(print(rule),
            "([a, c], [c, b]) -> ([a, b]) {a=4, b=16, c=8} reduction={c}");
  EXPECT_EQ(rule.verify({{4, 8}, {8, 16}}, {{4, 16}}), "");
}

TEST(ShardingRuleTest, CompoundDimListsFactorsMajorFirst) {
  // reshape [B, S, H*D] -> [B, S, H, D]: the hidden dim is (heads, head_dim),
  // so splitting heads splits the hidden dim in contiguous blocks.
  OpShardingRuleBuilder builder({3}, {4});
  builder.addFactor({0}, {0}, 2);
  builder.addFactor({1}, {1}, 128);
  int64_t heads = builder.addFactor({2}, {2}, 12);
  int64_t headDim = builder.addFactor({2}, {3}, 64);
  OpShardingRule rule = builder.build();

  EXPECT_EQ(rule.getOperandDimFactors(0, 2),
            (ArrayRef<int64_t>{heads, headDim}));
  EXPECT_EQ(print(rule),
            "([a, b, (c, d)]) -> ([a, b, c, d]) {a=2, b=128, c=12, d=64}");
  EXPECT_EQ(rule.verify({{2, 128, 768}}, {{2, 128, 12, 64}}), "");
}

TEST(ShardingRuleTest, VerifyNamesTheInconsistentDim) {
  OpShardingRuleBuilder builder({2}, {2});
  builder.addFactor({0}, {0}, 4);
  builder.addFactor({1}, {1}, 8);
  OpShardingRule rule = builder.build();
  EXPECT_EQ(rule.verify({{4, 9}}, {{4, 8}}),
            "operand #0 dim 1 has size 9 but its factors multiply to 8");
  EXPECT_EQ(rule.verify({{4, 8}}, {{4, 8, 1}}),
            "result #0: rule maps 2 dims, tensor has rank 3");
  EXPECT_EQ(rule.verify({{4, 8}, {1}}, {{4, 8}}),
            "rule maps 1 operands, op has 2");
  // A dim without factors must have size 1.
  OpShardingRuleBuilder empty({1}, {1});
  EXPECT_EQ(empty.build().verify({{3}}, {{1}}),
            "operand #0 dim 0 has size 3 but its factors multiply to 1");
}

TEST(ShardingRuleTest, PointwiseSkipsBroadcastDims) {
  // [8, 1, 768] + [5, 1] -> [8, 5, 768]
  OpShardingRuleBuilder builder({3, 2}, {3});
  SmallVector<int64_t> lhs{8, 1, 768}, rhs{5, 1}, out{8, 5, 768};
  builder.addPointwise({lhs, rhs}, out);
  OpShardingRule rule = builder.build();
  EXPECT_EQ(print(rule), "([a, 1, c], [b, 1]) -> ([a, b, c]) "
                         "{a=8, b=5, c=768}");
  EXPECT_EQ(rule.verify({lhs, rhs}, {out}), "");
}

TEST(ShardingRuleTest, KindsPrintInFixedOrder) {
  OpShardingRuleBuilder builder({3}, {1});
  builder.addFactor({0}, {kNoDim}, 2, FactorKind::OpPartitioned);
  builder.addFactor({1}, {0}, 3);
  builder.addFactor({2}, {kNoDim}, 5, FactorKind::NeedReplication);
  EXPECT_EQ(print(builder.build()),
            "([a, b, c]) -> ([b]) {a=2, b=3, c=5} need_replication={c} "
            "op_partitioned={a}");
}

TEST(ShardingRuleTest, FactorNamesContinuePastZ) {
  OpShardingRuleBuilder builder({28}, {28});
  for (int64_t d = 0; d < 28; ++d)
    builder.addFactor({d}, {d}, 1);
  std::string text = print(builder.build());
  EXPECT_NE(text.find("y, z, a1, b1]"), std::string::npos) << text;
}

TEST(ShardingRuleTest, GlobalIndexedFactorsPrintLast) {
  OpShardingRuleBuilder builder({2}, {2});
  builder.addFactor({0}, {0}, 4, FactorKind::Parallel, /*globalIndexed=*/true);
  builder.addFactor({1}, {1}, 8, FactorKind::OpPartitioned,
                    /*globalIndexed=*/true);
  OpShardingRule rule = builder.build();
  EXPECT_EQ(rule.getGlobalIndexedFactors(), (SmallVector<int64_t>{0, 1}));
  EXPECT_EQ(print(rule),
            "([a, b]) -> ([a, b]) {a=4, b=8} op_partitioned={b} global={a, b}");
}

TEST(ShardingRuleTest, AssignmentNeedsMajorFactorsOfACompoundDimFullySplit) {
  // Grouped-query heads: q heads (hkv, g) = (2, 4), kv heads (hkv).
  OpShardingRuleBuilder builder({1, 1}, {1});
  int64_t hkv = builder.addFactor({0, 0}, {0}, 2);
  int64_t g = builder.addFactor({0, kNoDim}, {0}, 4);
  OpShardingRule rule = builder.build();
  auto blocks = [&](int64_t hkvBlocks, int64_t gBlocks) {
    SmallVector<int64_t> counts(2);
    counts[hkv] = hkvBlocks;
    counts[g] = gBlocks;
    return rule.verifyAssignment(counts);
  };
  EXPECT_EQ(blocks(1, 1), "");
  EXPECT_EQ(blocks(2, 1), "");
  EXPECT_EQ(blocks(2, 4), "");
  // Splitting g alone would give a device query heads {j, 4 + j}: not a
  // contiguous block of the head dim.
  EXPECT_EQ(blocks(1, 4), "factor 1 is split but factor 0, major to it in the "
                          "same dim, is not split completely");
  EXPECT_EQ(blocks(1, 3), "factor 1 (size 4) cannot be split into 3 blocks");
}

TEST(ShardingRuleTest, AssignmentRejectsSplittingReplicatedFactors) {
  OpShardingRuleBuilder builder({1}, {1});
  builder.addFactor({0}, {0}, 8, FactorKind::NeedReplication);
  OpShardingRule rule = builder.build();
  EXPECT_EQ(rule.verifyAssignment({1}), "");
  EXPECT_EQ(rule.verifyAssignment({2}), "factor 0 may not be split");
  EXPECT_EQ(rule.verifyAssignment({1, 1}),
            "assignment has 2 factors, rule has 1");
}

} // namespace

//===- OpLayoutsTest.cpp - Layouts implied by op strategies ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// deriveOpLayouts is the one definition of what a strategy means; these tests
// pin it down on matmul-shaped rules (parallel, reduction), a replication
// factor, a compound dim, and the pending sums a linear op may keep.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Strategy/OpLayouts.h"

#include "gtest/gtest.h"

using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

constexpr int64_t kNoDim = OpShardingRuleBuilder::kNoDim;

Mesh getMesh() { return *Mesh::get({{"dp", 2}, {"tp", 4}}); }

/// matmul [m, k] x [k, n] -> [m, n]: factors m, n, k (k a reduction).
OpShardingRule getMatmulRule() {
  OpShardingRuleBuilder builder({2, 2}, {2});
  builder.addFactor({0, kNoDim}, {0}, 8);
  builder.addFactor({kNoDim, 1}, {1}, 16);
  builder.addFactor({1, 0}, {kNoDim}, 32, FactorKind::Reduction);
  return builder.build();
}

TEST(OpLayoutsTest, ColumnParallelSplitsOutputFeatures) {
  Mesh mesh = getMesh();
  auto layouts = deriveOpLayouts(getMatmulRule(), mesh, {{"dp"}, {"tp"}, {}});
  ASSERT_TRUE(layouts.ok()) << layouts.error();
  EXPECT_EQ(layouts->operands[0].toString(), R"([["dp"], []])");
  EXPECT_EQ(layouts->operands[1].toString(), R"([[], ["tp"]])");
  EXPECT_EQ(layouts->results[0].toString(), R"([["dp"], ["tp"]])");
}

TEST(OpLayoutsTest, SplitReductionLeavesPartialSum) {
  Mesh mesh = getMesh();
  auto layouts = deriveOpLayouts(getMatmulRule(), mesh, {{"dp"}, {}, {"tp"}});
  ASSERT_TRUE(layouts.ok()) << layouts.error();
  EXPECT_EQ(layouts->operands[0].toString(), R"([["dp"], ["tp"]])");
  EXPECT_EQ(layouts->operands[1].toString(), R"([["tp"], []])");
  EXPECT_EQ(layouts->results[0].toString(), R"([["dp"], []], partial = ["tp"])");
}

TEST(OpLayoutsTest, RejectsBadStrategies) {
  Mesh mesh = getMesh();
  OpShardingRule rule = getMatmulRule();
  EXPECT_EQ(verifyFactorAxes(rule, mesh, {{"dp"}, {}}),
            "strategy has 2 factors, the op's sharding rule has 3");
  EXPECT_EQ(verifyFactorAxes(rule, mesh, {{"dp"}, {"dp"}, {}}),
            "mesh axis `dp` splits two factors");
  EXPECT_NE(verifyFactorAxes(rule, mesh, {{"pp"}, {}, {}}).find("pp"),
            std::string::npos);
  // A factor of 6 does not split 4 ways.
  OpShardingRuleBuilder odd({1}, {1});
  odd.addFactor({0}, {0}, 6);
  EXPECT_NE(verifyFactorAxes(odd.build(), mesh, {{"tp"}}), "");
  OpShardingRuleBuilder softmax({1}, {1});
  softmax.addFactor({0}, {0}, 8, FactorKind::NeedReplication);
  EXPECT_EQ(verifyFactorAxes(softmax.build(), mesh, {{"dp"}}),
            "factor 0 may not be split");
}

TEST(OpLayoutsTest, CompoundDimTakesAxesMajorFirst) {
  // reshape [(h, d)] -> [h, d] with h = 4 split fully over tp, d over dp.
  Mesh mesh = getMesh();
  OpShardingRuleBuilder builder({1}, {2});
  builder.addFactor({0}, {0}, 4);
  builder.addFactor({0}, {1}, 8);
  auto layouts = deriveOpLayouts(builder.build(), mesh, {{"tp"}, {"dp"}});
  ASSERT_TRUE(layouts.ok()) << layouts.error();
  EXPECT_EQ(layouts->operands[0].toString(), R"([["tp", "dp"]])");
  EXPECT_EQ(layouts->results[0].toString(), R"([["tp"], ["dp"]])");
}

TEST(OpLayoutsTest, ReplicatedStrategySplitsNothing) {
  Mesh mesh = getMesh();
  OpShardingRule rule = getMatmulRule();
  auto layouts = deriveOpLayouts(rule, mesh, getReplicatedFactorAxes(rule));
  ASSERT_TRUE(layouts.ok()) << layouts.error();
  for (const Layout &layout : layouts->operands)
    EXPECT_TRUE(layout.isReplicated());
  EXPECT_TRUE(layouts->results[0].isReplicated());
}

/// add [a, b] + [b] -> [a, b] (a bias-shaped broadcast), linear in both
/// operands jointly.
OpShardingRule getAddRule() {
  OpShardingRuleBuilder builder({2, 1}, {2});
  builder.addFactor({0, kNoDim}, {0}, 8);
  builder.addFactor({1, 0}, {1}, 16);
  return builder.build().setLinear();
}

TEST(OpLayoutsTest, PartialStrategyMakesEveryOperandAndResultPartial) {
  Mesh mesh = getMesh();
  auto layouts = deriveOpLayouts(getAddRule(), mesh, {{"dp"}, {}}, {"tp"});
  ASSERT_TRUE(layouts.ok()) << layouts.error();
  EXPECT_EQ(layouts->operands[0].toString(),
            R"([["dp"], []], partial = ["tp"])");
  EXPECT_EQ(layouts->operands[1].toString(), R"([[]], partial = ["tp"])");
  EXPECT_EQ(layouts->results[0].toString(),
            R"([["dp"], []], partial = ["tp"])");
}

TEST(OpLayoutsTest, PartialStrategyAddsToReductionSums) {
  // reduce_sum [a, k] -> [a] with k split over dp, kept partial over tp: the
  // result is pending over both (in mesh order).
  Mesh mesh = getMesh();
  OpShardingRuleBuilder builder({2}, {1});
  builder.addFactor({0}, {0}, 8);
  builder.addFactor({1}, {kNoDim}, 16, FactorKind::Reduction);
  auto layouts =
      deriveOpLayouts(builder.build().setLinear(), mesh, {{}, {"dp"}}, {"tp"});
  ASSERT_TRUE(layouts.ok()) << layouts.error();
  EXPECT_EQ(layouts->operands[0].toString(),
            R"([[], ["dp"]], partial = ["tp"])");
  EXPECT_EQ(layouts->results[0].toString(), R"([[]], partial = ["dp", "tp"])");
}

TEST(OpLayoutsTest, RejectsPartialOnNonLinearOrClashingAxes) {
  Mesh mesh = getMesh();
  // A matmul is bilinear: partial in both operands would add cross terms.
  auto matmul = deriveOpLayouts(getMatmulRule(), mesh, {{}, {}, {}}, {"tp"});
  ASSERT_FALSE(matmul.ok());
  EXPECT_EQ(matmul.error(), "partial sums over [\"tp\"] need an op linear in "
                            "all its operands jointly, and this op's sharding "
                            "rule is not");
  EXPECT_EQ(verifyPartialAxes(getAddRule(), mesh, {{"tp"}, {}}, {"tp"}),
            "mesh axis `tp` splits a factor and is partial");
  EXPECT_EQ(verifyPartialAxes(getAddRule(), mesh, {{}, {}}, {"tp", "tp"}),
            "mesh axis `tp` is partial twice");
  EXPECT_NE(verifyPartialAxes(getAddRule(), mesh, {{}, {}}, {"pp"}).find("pp"),
            std::string::npos);
  EXPECT_EQ(verifyPartialAxes(getMatmulRule(), mesh, {{}, {}, {}}, {}), "");
}

} // namespace

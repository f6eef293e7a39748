//===- OpLayoutsTest.cpp - Layouts implied by op strategies ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// deriveOpLayouts is the one definition of what a strategy means; these tests
// pin it down on matmul-shaped rules (parallel, reduction), a replication
// factor, and a compound dim.
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

} // namespace

//===- FollowProducersTest.cpp - Strategies read off operand layouts ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Layout assignment's producer-following steps on hand-built rules: reading
// a layout back into factor axes (single and compound dims), merging
// readings, trimming to a valid strategy around fixed factors, and the
// bytes estimate that ranks candidates.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Strategy/FollowProducers.h"

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

/// reshape [b, (h, d)] -> [b, h, d] with h = 4 heads of d = 8.
OpShardingRule getSplitHeadsRule() {
  OpShardingRuleBuilder builder({2}, {3});
  builder.addFactor({0}, {0}, 2);
  builder.addFactor({1}, {1}, 4);
  builder.addFactor({1}, {2}, 8);
  return builder.build();
}

Layout layout(std::vector<Layout::AxisList> dims, Layout::AxisList partial = {}) {
  return *Layout::get(getMesh(), std::move(dims), std::move(partial));
}

TEST(FollowProducersTest, ReadsEachDimIntoItsFactor) {
  FactorAxes axes =
      readFactorAxes(getMatmulRule(), getMesh(), 1, layout({{"tp"}, {}}));
  EXPECT_EQ(axes, (FactorAxes{{}, {}, {"tp"}}));
}

TEST(FollowProducersTest, IgnoresPartialAxes) {
  FactorAxes axes = readFactorAxes(getMatmulRule(), getMesh(), 0,
                                   layout({{"dp"}, {}}, {"tp"}));
  EXPECT_EQ(axes, (FactorAxes{{"dp"}, {}, {}}));
}

TEST(FollowProducersTest, CompoundDimSplitsMajorFactorFirst) {
  Mesh mesh = getMesh();
  // tp (4) splits the 4 heads completely; dp then goes to the head dim d.
  FactorAxes axes = readFactorAxes(getSplitHeadsRule(), mesh, 0,
                                   layout({{}, {"tp", "dp"}}));
  EXPECT_EQ(axes, (FactorAxes{{}, {"tp"}, {"dp"}}));
  // dp (2) leaves heads half split, so tp cannot follow into d.
  axes = readFactorAxes(getSplitHeadsRule(), mesh, 0,
                        layout({{}, {"dp", "tp"}}));
  EXPECT_EQ(axes, (FactorAxes{{}, {"dp"}, {}}));
}

TEST(FollowProducersTest, MergeTakesFirstReadingPerFactorWithoutReusingAxes) {
  OpShardingRule rule = getMatmulRule();
  FactorAxes merged =
      mergeFactorAxes(rule, {{{"dp"}, {}, {}}, {{}, {"dp"}, {"tp"}}});
  EXPECT_EQ(merged, (FactorAxes{{"dp"}, {}, {"tp"}}));
}

TEST(FollowProducersTest, TrimKeepsFixedFactorsAndDropsInvalidAxes) {
  Mesh mesh = getMesh();
  OpShardingRule rule = getMatmulRule();
  // n fixed to tp: the candidate's k over tp loses it.
  FixedFactors fixed = {std::nullopt, Layout::AxisList{"tp"}, std::nullopt};
  auto trimmed = trimFactorAxes(rule, mesh, {{"dp"}, {}, {"tp"}}, fixed);
  ASSERT_TRUE(trimmed.ok()) << trimmed.error();
  EXPECT_EQ(*trimmed, (FactorAxes{{"dp"}, {"tp"}, {}}));
  // m (8) over dp x tp (8) is fine; over dp x tp x ... cannot exceed it.
  auto whole = trimFactorAxes(rule, mesh, {{"dp", "tp"}, {}, {}}, {});
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(*whole, (FactorAxes{{"dp", "tp"}, {}, {}}));
}

TEST(FollowProducersTest, TrimFailsOnInvalidFixedFactors) {
  FixedFactors fixed = {Layout::AxisList{"pp"}, std::nullopt, std::nullopt};
  auto trimmed = trimFactorAxes(getMatmulRule(), getMesh(), {}, fixed);
  ASSERT_FALSE(trimmed.ok());
  EXPECT_NE(trimmed.error().find("pp"), std::string::npos);
}

TEST(FollowProducersTest, EstimatesCollectiveBytes) {
  Mesh mesh = getMesh();
  std::vector<int64_t> shape = {8, 16}; // 128 f32 = 512 bytes
  // Equal layouts and slicing are free.
  EXPECT_EQ(estimateReshardBytes(mesh, layout({{}, {}}), layout({{}, {}}),
                                 shape, 4),
            0.0);
  EXPECT_EQ(estimateReshardBytes(mesh, layout({{}, {}}),
                                 layout({{"dp"}, {}}), shape, 4),
            0.0);
  // All-reduce over tp (4): 2 * 512 * 3/4.
  EXPECT_DOUBLE_EQ(estimateReshardBytes(mesh, layout({{}, {}}, {"tp"}),
                                        layout({{}, {}}), shape, 4),
                   768.0);
  // Reduce-scatter over tp: half of that.
  EXPECT_DOUBLE_EQ(estimateReshardBytes(mesh, layout({{}, {}}, {"tp"}),
                                        layout({{}, {"tp"}}), shape, 4),
                   384.0);
  // All-gather over dp of a 256-byte block: 256 received.
  EXPECT_DOUBLE_EQ(estimateReshardBytes(mesh, layout({{"dp"}, {}}),
                                        layout({{}, {}}), shape, 4),
                   256.0);
  // No collective creates a pending sum.
  EXPECT_GT(estimateReshardBytes(mesh, layout({{}, {}}),
                                 layout({{}, {}}, {"tp"}), shape, 4),
            1e20);
}

TEST(FollowProducersTest, ParallelismCountsEveryUsedAxis) {
  EXPECT_EQ(getParallelism(getMesh(), {{"dp"}, {"tp"}, {}}), 8);
  EXPECT_EQ(getParallelism(getMesh(), {{}, {}, {}}), 1);
}

} // namespace

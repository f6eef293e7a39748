//===- GradientOverlapTest.cpp - The gradient overlap rule ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// estimateGradientOverlap on small backward orders whose exposed time is
// worked out by hand from the rule (GradientOverlap.h,
// docs/CostModel.md): buckets by the byte cap, each ready when its last
// gradient is, queued on the network, exposed what ends after the
// backward.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/GradientOverlap.h"

#include <gtest/gtest.h>

using namespace mlir::loom;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Three nodes of 10 ms backward, each with 1 MiB of gradients reduced in
// 4 ms; cap 1 MiB: three buckets ready at 10, 20, 30 ms, finished at 14,
// 24 and 34 ms; the backward ends at 30 ms: 4 of 12 ms exposed.
TEST(GradientOverlapTest, EachBucketHidesBehindTheNextNode) {
  std::vector<GradientSlot> slots(3, {0.010, 0.004, 1 * kMiB});
  GradientOverlap overlap = estimateGradientOverlap(slots, 1 * kMiB);
  EXPECT_EQ(overlap.buckets, 3);
  EXPECT_DOUBLE_EQ(overlap.syncSeconds, 0.012);
  EXPECT_NEAR(overlap.exposedSeconds, 0.004, 1e-12);
  EXPECT_NEAR(overlap.getHiddenSeconds(), 0.008, 1e-12);
}

// The same nodes in one 25 MiB bucket: it is ready only when the backward
// ends (30 ms), so all 12 ms are exposed, as without overlap.
TEST(GradientOverlapTest, OneBucketStartsAfterTheLastGradient) {
  std::vector<GradientSlot> slots(3, {0.010, 0.004, 1 * kMiB});
  GradientOverlap overlap = estimateGradientOverlap(slots, 25 * kMiB);
  EXPECT_EQ(overlap.buckets, 1);
  EXPECT_NEAR(overlap.exposedSeconds, 0.012, 1e-12);
}

// A slow network: reductions of 15 ms behind 10 ms nodes queue up. Ready
// at 10, 20, 30; finished at 25, 40, 55; backward ends at 30: 25 ms of 45
// exposed.
TEST(GradientOverlapTest, ReductionsQueueOnTheNetwork) {
  std::vector<GradientSlot> slots(3, {0.010, 0.015, 1 * kMiB});
  GradientOverlap overlap = estimateGradientOverlap(slots, 1 * kMiB);
  EXPECT_NEAR(overlap.exposedSeconds, 0.025, 1e-12);
  EXPECT_NEAR(overlap.syncSeconds, 0.045, 1e-12);
}

// Nodes without gradients (activations only) still add backward time that
// hides the earlier buckets; the first node's gradient (2 MiB) fills a
// bucket of its own above the 1.5 MiB cap. Ready at 10 (2 MiB) and 40
// (two 0.5 MiB nodes at 30 and 40), finished at 16 and 40 + 2 + 2 = 44;
// backward 50 ms: nothing exposed.
TEST(GradientOverlapTest, LaterComputeHidesEarlierBuckets) {
  std::vector<GradientSlot> slots = {{0.010, 0.006, 2 * kMiB},
                                     {0.010, 0, 0},
                                     {0.010, 0.002, 0.5 * kMiB},
                                     {0.010, 0.002, 0.5 * kMiB},
                                     {0.010, 0, 0}};
  GradientOverlap overlap = estimateGradientOverlap(slots, 1.5 * kMiB);
  EXPECT_EQ(overlap.buckets, 2);
  EXPECT_NEAR(overlap.exposedSeconds, 0.0, 1e-12);
  EXPECT_NEAR(overlap.getHiddenSeconds(), 0.010, 1e-12);
}

// A cap of 0 turns overlap off: everything is exposed.
TEST(GradientOverlapTest, ZeroCapExposesEverything) {
  std::vector<GradientSlot> slots(2, {0.010, 0.004, 1 * kMiB});
  GradientOverlap overlap = estimateGradientOverlap(slots, 0);
  EXPECT_EQ(overlap.buckets, 0);
  EXPECT_NEAR(overlap.exposedSeconds, 0.008, 1e-12);
}

// ZeRO-2 with 4 micro-batches of 10 ms compute whose reduce-scatters take
// 4 ms each: the first 3 hide behind the next micro-batch, the last is
// read at once: 4 of 16 ms exposed.
TEST(GradientOverlapTest,
     AccumulatedReduceScattersHideBehindTheNextMicroBatch) {
  GradientOverlap overlap =
      estimateAccumulatedReduceScatterOverlap(0.004, 0.010, 4);
  EXPECT_DOUBLE_EQ(overlap.syncSeconds, 0.016);
  EXPECT_NEAR(overlap.exposedSeconds, 0.004, 1e-12);
  EXPECT_EQ(overlap.buckets, 3);
}

// Reduce-scatters longer than a micro-batch's compute expose the excess:
// 3 x (15 - 10) + 15 = 30 of 60 ms.
TEST(GradientOverlapTest, SlowReduceScattersExposeWhatComputeCannotHide) {
  GradientOverlap overlap =
      estimateAccumulatedReduceScatterOverlap(0.015, 0.010, 4);
  EXPECT_DOUBLE_EQ(overlap.syncSeconds, 0.060);
  EXPECT_NEAR(overlap.exposedSeconds, 0.030, 1e-12);
}

} // namespace

//===- LossScalingTest.cpp - Host kernels of dynamic loss scaling ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// nonfinite_count counts exactly the inf and NaN elements; select copies the
// whole chosen tensor (a NaN condition chooses on_true: a NaN count is not
// clean); update_loss_scale is GradScaler's rule (backoff on a non-finite
// step, growth after exactly `growthInterval` clean steps).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/LossScaling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace loom::runtime::host;

namespace {

TEST(LossScalingTest, CountsInfinitiesAndNaNs) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> g = {1.0f, -inf, 0.0f, NAN, inf, 65504.0f, -1e-30f};
  float count = -1;
  nonfiniteCount(g.data(), static_cast<int64_t>(g.size()), &count);
  EXPECT_EQ(count, 3.0f);
  std::vector<double> clean = {1.0, -2.0, 1e300};
  double none = -1;
  nonfiniteCount(clean.data(), 3, &none);
  EXPECT_EQ(none, 0.0);
}

TEST(LossScalingTest, SelectCopiesTheChosenTensor) {
  std::vector<double> a = {1, 2, 3}, b = {4, 5, 6}, out(3);
  selectWhole(0.0, a.data(), b.data(), 3, out.data());
  EXPECT_EQ(out, b);
  selectWhole(2.0, a.data(), b.data(), 3, out.data());
  EXPECT_EQ(out, a);
  selectWhole(static_cast<double>(NAN), a.data(), b.data(), 3, out.data());
  EXPECT_EQ(out, a);
  std::vector<int64_t> step = {7}, next = {8}, kept(1);
  selectWhole(1.0f, step.data(), next.data(), 1, kept.data());
  EXPECT_EQ(kept[0], 7);
}

TEST(LossScalingTest, UpdateFollowsGradScaler) {
  float scale = 65536.0f;
  int64_t tracker = 0;
  auto update = [&](float nonfinite) {
    updateLossScale(scale, tracker, nonfinite, 2.0, 0.5, 3, &scale, &tracker);
  };
  update(0);
  update(0);
  EXPECT_EQ(scale, 65536.0f);
  EXPECT_EQ(tracker, 2);
  update(5); // backoff, the count restarts
  EXPECT_EQ(scale, 32768.0f);
  EXPECT_EQ(tracker, 0);
  update(0);
  update(0);
  update(0); // the third consecutive clean step grows the scale
  EXPECT_EQ(scale, 65536.0f);
  EXPECT_EQ(tracker, 0);
  update(NAN); // a NaN count is not clean
  EXPECT_EQ(scale, 32768.0f);
}

} // namespace

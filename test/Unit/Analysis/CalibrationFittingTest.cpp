//===- CalibrationFittingTest.cpp - Monotone curves and alpha-beta fits ---===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What loom-calibrate does to raw timings: curves made monotone in time
// (the property the spec reader checks) changing only the noisy samples,
// and α–β fits that recover the line through exact timings and stay
// positive on noisy ones.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/CalibrationFitting.h"

#include <gtest/gtest.h>

using namespace mlir::loom::dist;

namespace {

TEST(CalibrationFittingTest, NoisyCurveBecomesMonotoneInTime) {
  // 1 kB in 1 us, then 10 kB in 0.5 us (a noisy fast sample), then 100 kB
  // in 20 us.
  Curve1D curve{{1e3, 1e4, 1e5}, {1e9, 2e10, 5e9}};
  makeTimeMonotone(curve);
  // The middle sample is raised to its predecessor's time; the others keep
  // their measured rates.
  EXPECT_DOUBLE_EQ(curve.rates[0], 1e9);
  EXPECT_DOUBLE_EQ(curve.rates[1], 1e4 / 1e-6);
  EXPECT_DOUBLE_EQ(curve.rates[2], 5e9);
  // A curve already monotone is left alone.
  Curve1D clean{{1e3, 1e6}, {1e9, 1e10}};
  makeTimeMonotone(clean);
  EXPECT_EQ(clean.rates, (std::vector<double>{1e9, 1e10}));
}

TEST(CalibrationFittingTest, NoisyGridBecomesMonotoneAlongEveryAxis) {
  GemmCurve curve;
  curve.m = curve.n = {16, 256};
  curve.k = {64};
  // (256, 16) ran absurdly fast: 16x the FLOPs of (16, 16) in less time.
  curve.flopsPerSecond = {{{1e9}, {4e9}}, {{1e12}, {1e10}}};
  makeTimeMonotone(curve);
  double smallest = 2.0 * 16 * 16 * 64 / 1e9;
  EXPECT_DOUBLE_EQ(curve.flopsPerSecond[1][0][0],
                   2.0 * 256 * 16 * 64 / smallest);
  // Every axis is now monotone in time.
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 2; ++j) {
      double time =
          2 * curve.m[i] * curve.n[j] * 64 / curve.flopsPerSecond[i][j][0];
      if (i > 0)
        EXPECT_GE(time, 2 * curve.m[0] * curve.n[j] * 64 /
                            curve.flopsPerSecond[0][j][0]);
      if (j > 0)
        EXPECT_GE(time, 2 * curve.m[i] * curve.n[0] * 64 /
                            curve.flopsPerSecond[i][0][0]);
    }
}

TEST(CalibrationFittingTest, FitRecoversAnExactLine) {
  // t = 10 us + B / (2 GB/s).
  std::vector<double> bytes = {8192, 65536, 524288, 4194304};
  std::vector<double> seconds;
  for (double b : bytes)
    seconds.push_back(1e-5 + b / 2e9);
  CollectiveFit fit = fitAlphaBeta(bytes, seconds);
  EXPECT_NEAR(fit.latencySeconds, 1e-5, 1e-12);
  EXPECT_NEAR(fit.bandwidthBytesPerSecond, 2e9, 1e-3);
}

TEST(CalibrationFittingTest, NoisyFitsStayPositive) {
  // Falling times (noise): no positive slope, so β comes from the largest
  // message, and a negative intercept gives a tenth of the smallest time.
  CollectiveFit falling = fitAlphaBeta({1e3, 1e6}, {2e-3, 1e-3});
  EXPECT_DOUBLE_EQ(falling.bandwidthBytesPerSecond, 1e6 / 1e-3);
  EXPECT_GT(falling.latencySeconds, 0);
  CollectiveFit steep = fitAlphaBeta({1e3, 1e6}, {1e-6, 1e-2});
  EXPECT_GT(steep.bandwidthBytesPerSecond, 0);
  EXPECT_DOUBLE_EQ(steep.latencySeconds, 1e-7);
}

} // namespace

//===- ActivationTest.cpp - Host activation kernels and gradients ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Activation.h"

#include "HostTestSupport.h"

#include <limits>

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

TEST(ActivationTest, HandComputedValues) {
  std::vector<double> x{-1, 0, 1}, y(3);
  gelu(x.data(), {3}, GeluApproximation::None, y.data());
  // Phi(1) = 0.8413447460685429; gelu(-1) = -1 * Phi(-1) = -(1 - Phi(1)).
  EXPECT_NEAR(y[2], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(y[0], -(1 - 0.8413447460685429), 1e-15);
  EXPECT_EQ(y[1], 0.0);
  gelu(x.data(), {3}, GeluApproximation::Tanh, y.data());
  // 0.5 * (1 + tanh(sqrt(2 / pi) * 1.044715)).
  EXPECT_NEAR(y[2], 0.8411919906082768, 1e-15);
  silu(x.data(), {3}, y.data());
  EXPECT_NEAR(y[2], 0.7310585786300049, 1e-15);
  EXPECT_NEAR(y[0], -(1 - 0.7310585786300049), 1e-15);
  relu(x.data(), {3}, y.data());
  EXPECT_EQ(y, (std::vector<double>{0, 0, 1}));
}

TEST(ActivationTest, ReluKeepsNaN) {
  std::vector<float> x{std::numeric_limits<float>::quiet_NaN(), -2.0f}, y(2);
  relu(x.data(), {2}, y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.0f);
}

TEST(ActivationTest, ReluGradPassesPositiveInputsOnly) {
  std::vector<double> x{-1, 0, 2}, dy{5, 6, 7}, dx(3);
  reluGrad(dy.data(), x.data(), {3}, dx.data());
  // The derivative at 0 is taken as 0, as in PyTorch.
  EXPECT_EQ(dx, (std::vector<double>{0, 0, 7}));
}

TEST(ActivationTest, GradientsMatchFiniteDifferences) {
  Shape shape{3, 7};
  // Keep away from 0, where relu has its kink.
  std::vector<double> x = randomValues(21, 130, -4, 4),
                      w = randomValues(21, 131);
  for (double &v : x)
    if (std::abs(v) < 0.01)
      v = 0.5;
  auto check = [&](auto forward, auto backward, const char *what) {
    std::vector<double> dx(21);
    backward(dx);
    auto loss = [&](const std::vector<double> &v) {
      std::vector<double> y(21);
      forward(v, y);
      return weightedSum(w, y);
    };
    expectAllClose(dx, numericGradient(loss, x), kGradTolerance, what);
  };
  for (GeluApproximation form :
       {GeluApproximation::None, GeluApproximation::Tanh})
    check(
        [&](const std::vector<double> &v, std::vector<double> &y) {
          gelu(v.data(), shape, form, y.data());
        },
        [&](std::vector<double> &dx) {
          geluGrad(w.data(), x.data(), shape, form, dx.data());
        },
        "gelu_grad");
  check([&](const std::vector<double> &v,
            std::vector<double> &y) { silu(v.data(), shape, y.data()); },
        [&](std::vector<double> &dx) {
          siluGrad(w.data(), x.data(), shape, dx.data());
        },
        "silu_grad");
  check([&](const std::vector<double> &v,
            std::vector<double> &y) { relu(v.data(), shape, y.data()); },
        [&](std::vector<double> &dx) {
          reluGrad(w.data(), x.data(), shape, dx.data());
        },
        "relu_grad");
}

TEST(ActivationTest, FloatKernelsAgreeWithDouble) {
  Shape shape{64};
  std::vector<double> x = randomValues(64, 132, -6, 6),
                      w = randomValues(64, 133);
  std::vector<float> xf = toFloat(x), wf = toFloat(w);
  std::vector<double> y(64);
  std::vector<float> yf(64);
  for (GeluApproximation form :
       {GeluApproximation::None, GeluApproximation::Tanh}) {
    gelu(x.data(), shape, form, y.data());
    gelu(xf.data(), shape, form, yf.data());
    expectAllClose(yf, y, 1e-6, "gelu");
    geluGrad(w.data(), x.data(), shape, form, y.data());
    geluGrad(wf.data(), xf.data(), shape, form, yf.data());
    expectAllClose(yf, y, 1e-6, "gelu_grad");
  }
  silu(x.data(), shape, y.data());
  silu(xf.data(), shape, yf.data());
  expectAllClose(yf, y, 1e-6, "silu");
  siluGrad(w.data(), x.data(), shape, y.data());
  siluGrad(wf.data(), xf.data(), shape, yf.data());
  expectAllClose(yf, y, 1e-6, "silu_grad");
  reluGrad(wf.data(), xf.data(), shape, yf.data());
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(yf[i], xf[i] > 0 ? wf[i] : 0.0f);
}

} // namespace

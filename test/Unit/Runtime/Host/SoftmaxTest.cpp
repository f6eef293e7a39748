//===- SoftmaxTest.cpp - Host softmax and log_softmax kernels -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Softmax.h"

#include "HostTestSupport.h"

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

/// Softmax of a [2, 3, 4] tensor along `axis`, by explicit index arithmetic.
std::vector<double> referenceSoftmax(const std::vector<double> &x, int64_t axis,
                                     bool log) {
  const int64_t dims[3] = {2, 3, 4}, strides[3] = {12, 4, 1};
  std::vector<double> y(24);
  for (int64_t e = 0; e < 24; ++e) {
    int64_t coord = (e / strides[axis]) % dims[axis];
    int64_t base = e - coord * strides[axis];
    double sum = 0;
    for (int64_t k = 0; k < dims[axis]; ++k)
      sum += std::exp(x[base + k * strides[axis]]);
    y[e] = log ? x[e] - std::log(sum) : std::exp(x[e]) / sum;
  }
  return y;
}

TEST(SoftmaxTest, HandComputedRow) {
  std::vector<double> x{1, 2, 3}, y(3);
  softmax(x.data(), {3}, 0, y.data());
  double sum = std::exp(1) + std::exp(2) + std::exp(3);
  EXPECT_NEAR(y[0], std::exp(1) / sum, 1e-15);
  EXPECT_NEAR(y[2], std::exp(3) / sum, 1e-15);
  logSoftmax(x.data(), {3}, 0, y.data());
  EXPECT_NEAR(y[1], 2 - std::log(sum), 1e-15);
}

TEST(SoftmaxTest, LargeInputsDoNotOverflow) {
  // exp(1000) overflows a double; subtracting the max must avoid it.
  std::vector<double> x{1000, 1001}, y(2);
  softmax(x.data(), {2}, 0, y.data());
  EXPECT_NEAR(y[0], 1 / (1 + std::exp(1.0)), 1e-15);
  EXPECT_NEAR(y[1], 1 / (1 + std::exp(-1.0)), 1e-15);
  logSoftmax(x.data(), {2}, 0, y.data());
  EXPECT_NEAR(y[0], -std::log1p(std::exp(1.0)), 1e-13);
  std::vector<float> xf{-1e4f, 0.0f}, yf(2);
  softmax(xf.data(), {2}, 0, yf.data());
  EXPECT_EQ(yf[0], 0.0f);
  EXPECT_EQ(yf[1], 1.0f);
}

TEST(SoftmaxTest, EveryAxisMatchesReference) {
  std::vector<double> x = randomValues(24, 20, -3, 3), y(24);
  for (int64_t axis = 0; axis < 3; ++axis) {
    softmax(x.data(), {2, 3, 4}, axis, y.data());
    expectAllClose(y, referenceSoftmax(x, axis, false), 1e-14, "softmax");
    logSoftmax(x.data(), {2, 3, 4}, axis, y.data());
    expectAllClose(y, referenceSoftmax(x, axis, true), 1e-14, "log_softmax");
  }
}

TEST(SoftmaxTest, GradientsMatchFiniteDifferences) {
  Shape shape{2, 3, 4};
  std::vector<double> x = randomValues(24, 21, -2, 2), w = randomValues(24, 22);
  for (int64_t axis = 0; axis < 3; ++axis) {
    for (bool log : {false, true}) {
      auto forward = [&](const std::vector<double> &v) {
        std::vector<double> y(24);
        if (log)
          logSoftmax(v.data(), shape, axis, y.data());
        else
          softmax(v.data(), shape, axis, y.data());
        return y;
      };
      std::vector<double> y = forward(x), dx(24);
      if (log)
        logSoftmaxGrad(y.data(), w.data(), shape, axis, dx.data());
      else
        softmaxGrad(y.data(), w.data(), shape, axis, dx.data());
      expectAllClose(dx,
                     numericGradient(
                         [&](const std::vector<double> &v) {
                           return weightedSum(w, forward(v));
                         },
                         x),
                     kGradTolerance, log ? "log_softmax_grad" : "softmax_grad");
    }
  }
}

TEST(SoftmaxTest, FloatKernelsAgreeWithDouble) {
  Shape shape{4, 33};
  std::vector<double> x = randomValues(132, 23, -5, 5),
                      w = randomValues(132, 24);
  std::vector<float> xf = toFloat(x), wf = toFloat(w);
  std::vector<double> y(132), dx(132);
  std::vector<float> yf(132), dxf(132);
  softmax(x.data(), shape, 1, y.data());
  softmax(xf.data(), shape, 1, yf.data());
  expectAllClose(yf, y, 1e-6, "softmax");
  softmaxGrad(y.data(), w.data(), shape, 1, dx.data());
  softmaxGrad(yf.data(), wf.data(), shape, 1, dxf.data());
  expectAllClose(dxf, dx, 1e-6, "softmax_grad");
  logSoftmax(x.data(), shape, 0, y.data());
  logSoftmax(xf.data(), shape, 0, yf.data());
  expectAllClose(yf, y, 1e-6, "log_softmax");
  logSoftmaxGrad(y.data(), w.data(), shape, 0, dx.data());
  logSoftmaxGrad(yf.data(), wf.data(), shape, 0, dxf.data());
  expectAllClose(dxf, dx, 1e-5, "log_softmax_grad");
}

} // namespace

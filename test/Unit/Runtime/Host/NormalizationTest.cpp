//===- NormalizationTest.cpp - Host layer_norm and rms_norm kernels -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Normalization.h"

#include "HostTestSupport.h"

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

/// PyTorch's LayerNorm written out row by row, affine when gamma is given.
std::vector<double> referenceLayerNorm(const std::vector<double> &x,
                                       int64_t width, const double *gamma,
                                       const double *beta, double eps) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / width; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < width; ++i)
      mean += x[r * width + i] / width;
    for (int64_t i = 0; i < width; ++i)
      var += std::pow(x[r * width + i] - mean, 2) / width;
    for (int64_t i = 0; i < width; ++i) {
      double v = (x[r * width + i] - mean) / std::sqrt(var + eps);
      y[r * width + i] = gamma ? v * gamma[i] + beta[i] : v;
    }
  }
  return y;
}

std::vector<double> referenceRmsNorm(const std::vector<double> &x,
                                     int64_t width, const double *gamma,
                                     double eps) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / width; ++r) {
    double ms = 0;
    for (int64_t i = 0; i < width; ++i)
      ms += x[r * width + i] * x[r * width + i] / width;
    for (int64_t i = 0; i < width; ++i)
      y[r * width + i] =
          x[r * width + i] / std::sqrt(ms + eps) * (gamma ? gamma[i] : 1.0);
  }
  return y;
}

TEST(NormalizationTest, LayerNormOfAHandComputedRow) {
  std::vector<double> x{1, 2, 3, 4}, y(4);
  // mean 2.5, biased variance 1.25.
  layerNorm(x.data(), {4}, static_cast<const double *>(nullptr),
            static_cast<const double *>(nullptr), 1e-5, y.data());
  double rstd = 1.0 / std::sqrt(1.25 + 1e-5);
  EXPECT_NEAR(y[0], -1.5 * rstd, 1e-15);
  EXPECT_NEAR(y[3], 1.5 * rstd, 1e-15);
  std::vector<double> gamma{2, 2, 2, 2}, beta{0, 0, 0, 1};
  layerNorm(x.data(), {4}, gamma.data(), beta.data(), 1e-5, y.data());
  EXPECT_NEAR(y[0], -3.0 * rstd, 1e-15);
  EXPECT_NEAR(y[3], 3.0 * rstd + 1.0, 1e-15);
}

TEST(NormalizationTest, LayerNormMatchesReference) {
  Shape shape{2, 3, 5};
  std::vector<double> x = randomValues(30, 1, -3, 3);
  std::vector<double> gamma = randomValues(5, 2), beta = randomValues(5, 3);
  std::vector<double> y(30);
  layerNorm(x.data(), shape, gamma.data(), beta.data(), 1e-5, y.data());
  expectAllClose(y, referenceLayerNorm(x, 5, gamma.data(), beta.data(), 1e-5),
                 1e-13);
  layerNorm(x.data(), shape, static_cast<const double *>(nullptr),
            static_cast<const double *>(nullptr), 1e-3, y.data());
  expectAllClose(y, referenceLayerNorm(x, 5, nullptr, nullptr, 1e-3), 1e-13);
}

TEST(NormalizationTest, RmsNormOfAHandComputedRow) {
  std::vector<double> x{3, 4}, gamma{1, 0.5}, y(2);
  // mean square 12.5.
  rmsNorm(x.data(), {1, 2}, gamma.data(), 1e-6, y.data());
  EXPECT_NEAR(y[0], 3 / std::sqrt(12.5 + 1e-6), 1e-15);
  EXPECT_NEAR(y[1], 2 / std::sqrt(12.5 + 1e-6), 1e-15);
}

TEST(NormalizationTest, RmsNormMatchesReference) {
  std::vector<double> x = randomValues(24, 4, -2, 2),
                      gamma = randomValues(8, 5);
  std::vector<double> y(24);
  rmsNorm(x.data(), {3, 8}, gamma.data(), 1e-5, y.data());
  expectAllClose(y, referenceRmsNorm(x, 8, gamma.data(), 1e-5), 1e-13);
  rmsNorm(x.data(), {3, 8}, static_cast<const double *>(nullptr), 1e-5,
          y.data());
  expectAllClose(y, referenceRmsNorm(x, 8, nullptr, 1e-5), 1e-13);
}

TEST(NormalizationTest, LayerNormGradMatchesFiniteDifferences) {
  Shape shape{3, 6};
  double eps = 1e-5;
  std::vector<double> x = randomValues(18, 6, -2, 2), w = randomValues(18, 7);
  std::vector<double> gamma = randomValues(6, 8), beta = randomValues(6, 9);
  auto loss = [&](const std::vector<double> &xv, const std::vector<double> &g,
                  const std::vector<double> &b) {
    std::vector<double> y(18);
    layerNorm(xv.data(), shape, g.data(), b.data(), eps, y.data());
    return weightedSum(w, y);
  };
  std::vector<double> dx(18), dgamma(6), dbeta(6);
  layerNormGrad(w.data(), x.data(), shape, gamma.data(), eps, dx.data(),
                dgamma.data(), dbeta.data());
  expectAllClose(
      dx,
      numericGradient(
          [&](const std::vector<double> &v) { return loss(v, gamma, beta); },
          x),
      kGradTolerance, "dx");
  expectAllClose(
      dgamma,
      numericGradient(
          [&](const std::vector<double> &v) { return loss(x, v, beta); },
          gamma),
      kGradTolerance, "dgamma");
  expectAllClose(
      dbeta,
      numericGradient(
          [&](const std::vector<double> &v) { return loss(x, gamma, v); },
          beta),
      kGradTolerance, "dbeta");
}

TEST(NormalizationTest, LayerNormGradWithoutAffineMatchesFiniteDifferences) {
  Shape shape{2, 2, 5};
  std::vector<double> x = randomValues(20, 10, -2, 2), w = randomValues(20, 11);
  std::vector<double> dx(20);
  layerNormGrad(w.data(), x.data(), shape, static_cast<const double *>(nullptr),
                1e-4, dx.data(), static_cast<double *>(nullptr),
                static_cast<double *>(nullptr));
  auto loss = [&](const std::vector<double> &v) {
    std::vector<double> y(20);
    layerNorm(v.data(), shape, static_cast<const double *>(nullptr),
              static_cast<const double *>(nullptr), 1e-4, y.data());
    return weightedSum(w, y);
  };
  expectAllClose(dx, numericGradient(loss, x), kGradTolerance);
}

TEST(NormalizationTest, RmsNormGradMatchesFiniteDifferences) {
  Shape shape{4, 5};
  double eps = 1e-5;
  std::vector<double> x = randomValues(20, 12, -2, 2), w = randomValues(20, 13);
  std::vector<double> gamma = randomValues(5, 14);
  auto loss = [&](const std::vector<double> &xv, const double *g) {
    std::vector<double> y(20);
    rmsNorm(xv.data(), shape, g, eps, y.data());
    return weightedSum(w, y);
  };
  std::vector<double> dx(20), dgamma(5);
  rmsNormGrad(w.data(), x.data(), shape, gamma.data(), eps, dx.data(),
              dgamma.data());
  expectAllClose(
      dx,
      numericGradient(
          [&](const std::vector<double> &v) { return loss(v, gamma.data()); },
          x),
      kGradTolerance, "dx");
  expectAllClose(
      dgamma,
      numericGradient(
          [&](const std::vector<double> &v) { return loss(x, v.data()); },
          gamma),
      kGradTolerance, "dgamma");
  rmsNormGrad(w.data(), x.data(), shape, static_cast<const double *>(nullptr),
              eps, dx.data(), static_cast<double *>(nullptr));
  expectAllClose(
      dx,
      numericGradient(
          [&](const std::vector<double> &v) { return loss(v, nullptr); }, x),
      kGradTolerance, "dx without gamma");
}

TEST(NormalizationTest, FloatKernelsAgreeWithDouble) {
  Shape shape{3, 16};
  std::vector<double> x = randomValues(48, 15, -4, 4), w = randomValues(48, 16);
  std::vector<double> gamma = randomValues(16, 17), beta = randomValues(16, 18);
  std::vector<float> xf = toFloat(x), wf = toFloat(w), gf = toFloat(gamma),
                     bf = toFloat(beta);
  std::vector<double> y(48), dx(48), dg(16), db(16);
  std::vector<float> yf(48), dxf(48), dgf(16), dbf(16);
  layerNorm(x.data(), shape, gamma.data(), beta.data(), 1e-5, y.data());
  layerNorm(xf.data(), shape, gf.data(), bf.data(), 1e-5, yf.data());
  expectAllClose(yf, y, 1e-5, "layer_norm");
  layerNormGrad(w.data(), x.data(), shape, gamma.data(), 1e-5, dx.data(),
                dg.data(), db.data());
  layerNormGrad(wf.data(), xf.data(), shape, gf.data(), 1e-5, dxf.data(),
                dgf.data(), dbf.data());
  expectAllClose(dxf, dx, 1e-5, "layer_norm_grad dx");
  expectAllClose(dgf, dg, 1e-5, "layer_norm_grad dgamma");
  rmsNorm(x.data(), shape, gamma.data(), 1e-5, y.data());
  rmsNorm(xf.data(), shape, gf.data(), 1e-5, yf.data());
  expectAllClose(yf, y, 1e-5, "rms_norm");
  rmsNormGrad(w.data(), x.data(), shape, gamma.data(), 1e-5, dx.data(),
              dg.data());
  rmsNormGrad(wf.data(), xf.data(), shape, gf.data(), 1e-5, dxf.data(),
              dgf.data());
  expectAllClose(dxf, dx, 1e-5, "rms_norm_grad dx");
}

} // namespace

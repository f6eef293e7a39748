//===- Normalization.cpp - Host layer_norm and rms_norm kernels -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// One pass per row computes the statistics in double; a second pass writes
// the row. The gradients recompute the statistics (the ops keep none) and
// accumulate dgamma/dbeta over rows in a double scratch row, rounded once.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Normalization.h"

#include <cmath>
#include <vector>

namespace loom::runtime::host {

namespace {

/// Splits `shape` into (rows, D) for a normalization over the last dim.
void rowsAndWidth(const Shape &shape, int64_t &rows, int64_t &width) {
  width = shape.back();
  rows = width == 0 ? 0 : numElements(shape) / width;
}

/// Mean and `rsqrt(var + eps)` of one row, the variance biased and taken
/// around the mean in a second pass (more accurate than E[x^2] - E[x]^2).
template <typename T>
void meanAndRstd(const T *x, int64_t width, double eps, double &mean,
                 double &rstd) {
  double sum = 0;
  for (int64_t i = 0; i < width; ++i)
    sum += x[i];
  mean = sum / width;
  double sq = 0;
  for (int64_t i = 0; i < width; ++i) {
    double c = x[i] - mean;
    sq += c * c;
  }
  rstd = 1.0 / std::sqrt(sq / width + eps);
}

/// `rsqrt(mean(x^2) + eps)` of one row.
template <typename T> double rmsRstd(const T *x, int64_t width, double eps) {
  double sq = 0;
  for (int64_t i = 0; i < width; ++i)
    sq += static_cast<double>(x[i]) * x[i];
  return 1.0 / std::sqrt(sq / width + eps);
}

} // namespace

template <typename T>
void layerNorm(const T *input, const Shape &shape, const T *gamma,
               const T *beta, double eps, T *result) {
  int64_t rows, width;
  rowsAndWidth(shape, rows, width);
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = input + r * width;
    T *y = result + r * width;
    double mean, rstd;
    meanAndRstd(x, width, eps, mean, rstd);
    for (int64_t i = 0; i < width; ++i) {
      double v = (x[i] - mean) * rstd;
      if (gamma)
        v = v * gamma[i] + beta[i];
      y[i] = static_cast<T>(v);
    }
  }
}

template <typename T>
void rmsNorm(const T *input, const Shape &shape, const T *gamma, double eps,
             T *result) {
  int64_t rows, width;
  rowsAndWidth(shape, rows, width);
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = input + r * width;
    T *y = result + r * width;
    double rstd = rmsRstd(x, width, eps);
    for (int64_t i = 0; i < width; ++i) {
      double v = x[i] * rstd;
      if (gamma)
        v *= gamma[i];
      y[i] = static_cast<T>(v);
    }
  }
}

template <typename T>
void layerNormGrad(const T *grad, const T *input, const Shape &shape,
                   const T *gamma, double eps, T *dx, T *dgamma, T *dbeta) {
  int64_t rows, width;
  rowsAndWidth(shape, rows, width);
  std::vector<double> dgammaAcc(gamma ? width : 0, 0.0);
  std::vector<double> dbetaAcc(gamma ? width : 0, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = input + r * width;
    const T *dy = grad + r * width;
    T *out = dx + r * width;
    double mean, rstd;
    meanAndRstd(x, width, eps, mean, rstd);
    // sum(g) and sum(g * xhat), g = grad * gamma.
    double sumG = 0, sumGXhat = 0;
    for (int64_t i = 0; i < width; ++i) {
      double xhat = (x[i] - mean) * rstd;
      double g = gamma ? static_cast<double>(dy[i]) * gamma[i] : dy[i];
      sumG += g;
      sumGXhat += g * xhat;
      if (gamma) {
        dgammaAcc[i] += dy[i] * xhat;
        dbetaAcc[i] += dy[i];
      }
    }
    double meanG = sumG / width, meanGXhat = sumGXhat / width;
    for (int64_t i = 0; i < width; ++i) {
      double xhat = (x[i] - mean) * rstd;
      double g = gamma ? static_cast<double>(dy[i]) * gamma[i] : dy[i];
      out[i] = static_cast<T>(rstd * (g - meanG - xhat * meanGXhat));
    }
  }
  if (gamma) {
    for (int64_t i = 0; i < width; ++i) {
      dgamma[i] = static_cast<T>(dgammaAcc[i]);
      dbeta[i] = static_cast<T>(dbetaAcc[i]);
    }
  }
}

template <typename T>
void rmsNormGrad(const T *grad, const T *input, const Shape &shape,
                 const T *gamma, double eps, T *dx, T *dgamma) {
  int64_t rows, width;
  rowsAndWidth(shape, rows, width);
  std::vector<double> dgammaAcc(gamma ? width : 0, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = input + r * width;
    const T *dy = grad + r * width;
    T *out = dx + r * width;
    double rstd = rmsRstd(x, width, eps);
    double sumGXhat = 0;
    for (int64_t i = 0; i < width; ++i) {
      double xhat = x[i] * rstd;
      double g = gamma ? static_cast<double>(dy[i]) * gamma[i] : dy[i];
      sumGXhat += g * xhat;
      if (gamma)
        dgammaAcc[i] += dy[i] * xhat;
    }
    double meanGXhat = sumGXhat / width;
    for (int64_t i = 0; i < width; ++i) {
      double xhat = x[i] * rstd;
      double g = gamma ? static_cast<double>(dy[i]) * gamma[i] : dy[i];
      out[i] = static_cast<T>(rstd * (g - xhat * meanGXhat));
    }
  }
  if (gamma)
    for (int64_t i = 0; i < width; ++i)
      dgamma[i] = static_cast<T>(dgammaAcc[i]);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void layerNorm<T>(const T *, const Shape &, const T *, const T *,   \
                             double, T *);                                     \
  template void rmsNorm<T>(const T *, const Shape &, const T *, double, T *);  \
  template void layerNormGrad<T>(const T *, const T *, const Shape &,          \
                                 const T *, double, T *, T *, T *);            \
  template void rmsNormGrad<T>(const T *, const T *, const Shape &, const T *, \
                               double, T *, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

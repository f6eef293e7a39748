//===- Activation.cpp - Host activation kernels and gradients -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The formulas are the ones the ODS descriptions give; the GELU form is
// chosen once per call, outside the element loop.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Activation.h"

#include <cmath>

namespace loom::runtime::host {

namespace {

constexpr double kSqrt2 = 1.4142135623730950488;
constexpr double kSqrt2OverPi = 0.79788456080286535588; // sqrt(2 / pi)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kGeluCubic = 0.044715;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

} // namespace

template <typename T>
void gelu(const T *input, const Shape &shape, GeluApproximation approximate,
          T *result) {
  int64_t n = numElements(shape);
  if (approximate == GeluApproximation::None) {
    for (int64_t e = 0; e < n; ++e) {
      double x = input[e];
      result[e] = static_cast<T>(0.5 * x * (1.0 + std::erf(x / kSqrt2)));
    }
    return;
  }
  for (int64_t e = 0; e < n; ++e) {
    double x = input[e];
    double u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
    result[e] = static_cast<T>(0.5 * x * (1.0 + std::tanh(u)));
  }
}

template <typename T> void silu(const T *input, const Shape &shape, T *result) {
  int64_t n = numElements(shape);
  for (int64_t e = 0; e < n; ++e) {
    double x = input[e];
    result[e] = static_cast<T>(x * sigmoid(x));
  }
}

template <typename T> void relu(const T *input, const Shape &shape, T *result) {
  int64_t n = numElements(shape);
  for (int64_t e = 0; e < n; ++e) {
    T x = input[e];
    // `x > 0` is false for NaN, which must pass through unchanged.
    result[e] = x > T(0) || std::isnan(x) ? x : T(0);
  }
}

template <typename T>
void geluGrad(const T *dy, const T *x, const Shape &shape,
              GeluApproximation approximate, T *dx) {
  int64_t n = numElements(shape);
  if (approximate == GeluApproximation::None) {
    for (int64_t e = 0; e < n; ++e) {
      double v = x[e];
      double cdf = 0.5 * (1.0 + std::erf(v / kSqrt2));
      double pdf = std::exp(-0.5 * v * v) * kInvSqrt2Pi;
      dx[e] = static_cast<T>(dy[e] * (cdf + v * pdf));
    }
    return;
  }
  for (int64_t e = 0; e < n; ++e) {
    double v = x[e];
    double t = std::tanh(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
    double d = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * kSqrt2OverPi *
                                     (1.0 + 3.0 * kGeluCubic * v * v);
    dx[e] = static_cast<T>(dy[e] * d);
  }
}

template <typename T>
void siluGrad(const T *dy, const T *x, const Shape &shape, T *dx) {
  int64_t n = numElements(shape);
  for (int64_t e = 0; e < n; ++e) {
    double v = x[e];
    double s = sigmoid(v);
    dx[e] = static_cast<T>(dy[e] * s * (1.0 + v * (1.0 - s)));
  }
}

template <typename T>
void reluGrad(const T *dy, const T *x, const Shape &shape, T *dx) {
  int64_t n = numElements(shape);
  for (int64_t e = 0; e < n; ++e)
    dx[e] = x[e] > T(0) ? dy[e] : T(0);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void gelu<T>(const T *, const Shape &, GeluApproximation, T *);     \
  template void silu<T>(const T *, const Shape &, T *);                        \
  template void relu<T>(const T *, const Shape &, T *);                        \
  template void geluGrad<T>(const T *, const T *, const Shape &,               \
                            GeluApproximation, T *);                           \
  template void siluGrad<T>(const T *, const T *, const Shape &, T *);         \
  template void reluGrad<T>(const T *, const T *, const Shape &, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

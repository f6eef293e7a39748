//===- HostTestSupport.h - Helpers for the host kernel tests ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Deterministic test data, elementwise comparison, and central finite
// differences: each gradient kernel is checked against the derivative of
// `loss(x) = sum(w * forward(x))` for a random weight `w`, which is exactly
// the VJP the kernel computes with `dy = w`.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TEST_UNIT_RUNTIME_HOST_HOSTTESTSUPPORT_H
#define LOOM_TEST_UNIT_RUNTIME_HOST_HOSTTESTSUPPORT_H

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace loom::runtime::host::test {

/// `n` values uniform on [lo, hi), the same for the same `seed`.
inline std::vector<double> randomValues(size_t n, uint64_t seed,
                                        double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 engine(seed);
  std::vector<double> values(n);
  for (double &v : values)
    v = lo + (hi - lo) * (static_cast<double>(engine() >> 11) * 0x1.0p-53);
  return values;
}

/// Rounds every value to float.
inline std::vector<float> toFloat(const std::vector<double> &values) {
  return std::vector<float>(values.begin(), values.end());
}

/// sum(w * y).
inline double weightedSum(const std::vector<double> &w,
                          const std::vector<double> &y) {
  double sum = 0;
  for (size_t i = 0; i < y.size(); ++i)
    sum += w[i] * y[i];
  return sum;
}

/// The central-difference gradient of `loss` at `x` (step `h`).
inline std::vector<double>
numericGradient(const std::function<double(const std::vector<double> &)> &loss,
                std::vector<double> x, double h = 1e-5) {
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double saved = x[i];
    x[i] = saved + h;
    double up = loss(x);
    x[i] = saved - h;
    double down = loss(x);
    x[i] = saved;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

/// Expects `actual` to equal `expected` elementwise within
/// `rtol * max(1, max |expected|)`: relative to the size of the whole
/// tensor, so small entries of a large gradient are not over-constrained.
template <typename A, typename B>
void expectAllClose(const std::vector<A> &actual,
                    const std::vector<B> &expected, double rtol,
                    const char *what = "") {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double scale = 1.0;
  for (B e : expected)
    scale = std::max(scale, std::abs(static_cast<double>(e)));
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(static_cast<double>(actual[i]),
                static_cast<double>(expected[i]), rtol * scale)
        << what << " at element " << i;
}

/// The tolerance of gradient kernels against finite differences in double.
constexpr double kGradTolerance = 1e-6;

} // namespace loom::runtime::host::test

#endif // LOOM_TEST_UNIT_RUNTIME_HOST_HOSTTESTSUPPORT_H

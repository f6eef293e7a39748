//===- Softmax.cpp - Host softmax and log_softmax kernels -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The tensor is viewed as [outer, n, inner] around `axis`; each of the
// outer * inner lanes is a strided row of n elements. A lane is gathered into
// a double scratch row, processed, and scattered back, so the arithmetic is
// the same whatever the axis.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace loom::runtime::host {

namespace {

/// The [outer, n, inner] view of `shape` around `axis`.
struct Lanes {
  int64_t outer = 1, n = 1, inner = 1;

  Lanes(const Shape &shape, int64_t axis) {
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    n = shape[axis];
    for (size_t d = axis + 1; d < shape.size(); ++d)
      inner *= shape[d];
  }

  /// Calls `fn(base)` for the offset of the first element of every lane; the
  /// lane's elements are at base + k * inner.
  template <typename Fn> void forEach(Fn fn) const {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        fn(o * n * inner + i);
  }
};

/// Max over a lane, NaN if any element is NaN (so a NaN row stays NaN).
double laneMax(const std::vector<double> &row) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : row) {
    if (std::isnan(v))
      return v;
    m = std::max(m, v);
  }
  return m;
}

} // namespace

template <typename T>
void softmax(const T *input, const Shape &shape, int64_t axis, T *result) {
  Lanes lanes(shape, axis);
  std::vector<double> row(lanes.n);
  lanes.forEach([&](int64_t base) {
    for (int64_t k = 0; k < lanes.n; ++k)
      row[k] = input[base + k * lanes.inner];
    double m = laneMax(row);
    double sum = 0;
    for (double &v : row) {
      v = std::exp(v - m);
      sum += v;
    }
    for (int64_t k = 0; k < lanes.n; ++k)
      result[base + k * lanes.inner] = static_cast<T>(row[k] / sum);
  });
}

template <typename T>
void logSoftmax(const T *input, const Shape &shape, int64_t axis, T *result) {
  Lanes lanes(shape, axis);
  std::vector<double> row(lanes.n);
  lanes.forEach([&](int64_t base) {
    for (int64_t k = 0; k < lanes.n; ++k)
      row[k] = input[base + k * lanes.inner];
    double m = laneMax(row);
    double sum = 0;
    for (double v : row)
      sum += std::exp(v - m);
    double logSum = std::log(sum);
    for (int64_t k = 0; k < lanes.n; ++k)
      result[base + k * lanes.inner] = static_cast<T>(row[k] - m - logSum);
  });
}

template <typename T>
void softmaxGrad(const T *output, const T *grad, const Shape &shape,
                 int64_t axis, T *result) {
  Lanes lanes(shape, axis);
  lanes.forEach([&](int64_t base) {
    double dot = 0;
    for (int64_t k = 0; k < lanes.n; ++k) {
      int64_t at = base + k * lanes.inner;
      dot += static_cast<double>(grad[at]) * output[at];
    }
    for (int64_t k = 0; k < lanes.n; ++k) {
      int64_t at = base + k * lanes.inner;
      result[at] = static_cast<T>(output[at] * (grad[at] - dot));
    }
  });
}

template <typename T>
void logSoftmaxGrad(const T *output, const T *grad, const Shape &shape,
                    int64_t axis, T *result) {
  Lanes lanes(shape, axis);
  lanes.forEach([&](int64_t base) {
    double sum = 0;
    for (int64_t k = 0; k < lanes.n; ++k)
      sum += grad[base + k * lanes.inner];
    for (int64_t k = 0; k < lanes.n; ++k) {
      int64_t at = base + k * lanes.inner;
      result[at] =
          static_cast<T>(grad[at] - std::exp(double(output[at])) * sum);
    }
  });
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void softmax<T>(const T *, const Shape &, int64_t, T *);            \
  template void logSoftmax<T>(const T *, const Shape &, int64_t, T *);         \
  template void softmaxGrad<T>(const T *, const T *, const Shape &, int64_t,   \
                               T *);                                           \
  template void logSoftmaxGrad<T>(const T *, const T *, const Shape &,         \
                                  int64_t, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

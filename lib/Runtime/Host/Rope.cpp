//===- Rope.cpp - Host rotary position embedding kernel -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The inverse frequencies are computed once per call; cos and sin once per
// (row, frequency), shared by the two elements of each rotated pair:
//   y[i]       = x[i] * cos - x[i + D/2] * sin
//   y[i + D/2] = x[i + D/2] * cos + x[i] * sin        for i < D/2,
// which is `x * cos(angle) + rotate_half(x) * sin(angle)` written out.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Rope.h"

#include <cmath>
#include <vector>

namespace loom::runtime::host {

template <typename T>
void rope(const T *input, const Shape &shape, const int64_t *positions,
          const Shape &positionsShape, double theta, bool inverse, T *result) {
  int64_t b = shape[0], heads = shape[1], seq = shape[2], d = shape[3];
  int64_t half = d / 2;
  std::vector<double> invFreq(half), cosRow(half), sinRow(half);
  for (int64_t i = 0; i < half; ++i)
    invFreq[i] = std::pow(theta, -2.0 * static_cast<double>(i) / d);
  bool perBatch = positions && positionsShape.size() == 2;
  double sign = inverse ? -1.0 : 1.0;
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t s = 0; s < seq; ++s) {
      int64_t pos = !positions ? s : positions[perBatch ? bi * seq + s : s];
      for (int64_t i = 0; i < half; ++i) {
        double angle = static_cast<double>(pos) * invFreq[i];
        cosRow[i] = std::cos(angle);
        sinRow[i] = sign * std::sin(angle);
      }
      for (int64_t h = 0; h < heads; ++h) {
        int64_t base = ((bi * heads + h) * seq + s) * d;
        const T *x = input + base;
        T *y = result + base;
        for (int64_t i = 0; i < half; ++i) {
          double lo = x[i], hi = x[i + half];
          y[i] = static_cast<T>(lo * cosRow[i] - hi * sinRow[i]);
          y[i + half] = static_cast<T>(hi * cosRow[i] + lo * sinRow[i]);
        }
      }
    }
  }
}

template void rope<float>(const float *, const Shape &, const int64_t *,
                          const Shape &, double, bool, float *);
template void rope<double>(const double *, const Shape &, const int64_t *,
                           const Shape &, double, bool, double *);

} // namespace loom::runtime::host

//===- Reduction.cpp - Reductions on the host -----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Reduction.h"

#include <cmath>
#include <limits>

namespace loom::runtime::host {

template <typename T>
void reduce(ReduceKind kind, const T *in, const Shape &shape,
            const std::vector<int64_t> &axes, T *out) {
  size_t rank = shape.size();
  std::vector<bool> reduced(rank, false);
  int64_t reducedCount = 1;
  for (int64_t axis : axes) {
    reduced[axis] = true;
    reducedCount *= shape[axis];
  }
  // Output strides over the input's dims: 0 on reduced dims, so walking the
  // input in row-major order visits each output element's inputs in order.
  std::vector<int64_t> outStrides(rank, 0);
  int64_t stride = 1, outCount = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d])
      continue;
    outStrides[d] = stride;
    stride *= shape[d];
    outCount *= shape[d];
  }

  T init = T(0);
  if (kind == ReduceKind::Max)
    init = std::numeric_limits<T>::has_infinity
               ? -std::numeric_limits<T>::infinity()
               : std::numeric_limits<T>::lowest();
  for (int64_t i = 0; i < outCount; ++i)
    out[i] = init;

  int64_t count = numElements(shape);
  std::vector<int64_t> index(rank, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (kind == ReduceKind::Max) {
      T v = in[i];
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v) || std::isnan(out[o]))
          out[o] = std::numeric_limits<T>::quiet_NaN();
        else if (v > out[o])
          out[o] = v;
      } else if (v > out[o]) {
        out[o] = v;
      }
    } else {
      out[o] += in[i];
    }
    for (size_t d = rank; d-- > 0;) {
      o += outStrides[d];
      if (++index[d] < shape[d])
        break;
      o -= outStrides[d] * shape[d];
      index[d] = 0;
    }
  }
  if (kind == ReduceKind::Mean && reducedCount > 0)
    for (int64_t i = 0; i < outCount; ++i)
      out[i] /= static_cast<T>(reducedCount);
}

template void reduce<float>(ReduceKind, const float *, const Shape &,
                            const std::vector<int64_t> &, float *);
template void reduce<double>(ReduceKind, const double *, const Shape &,
                             const std::vector<int64_t> &, double *);
template void reduce<int64_t>(ReduceKind, const int64_t *, const Shape &,
                              const std::vector<int64_t> &, int64_t *);

} // namespace loom::runtime::host

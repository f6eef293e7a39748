//===- Reduction.h - Reductions on the host ---------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Host kernels of `loom.reduce_sum`, `reduce_mean` and `reduce_max`. The
// reduced dims may be any subset; `keepdims` does not change the data, only
// the result's shape, so the kernels ignore it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_REDUCTION_H
#define LOOM_RUNTIME_HOST_REDUCTION_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cstdint>
#include <vector>

namespace loom::runtime::host {

enum class ReduceKind { Sum, Mean, Max };

/// Reduces `in` over the dims `axes` (strictly increasing, each in
/// `[0, rank)`) into `out`, which holds the kept dims in row-major order.
/// Mean divides by the product of the reduced sizes; Max propagates NaN.
/// Instantiated for float, double and int64_t (Mean for floats only).
template <typename T>
void reduce(ReduceKind kind, const T *in, const Shape &shape,
            const std::vector<int64_t> &axes, T *out);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_REDUCTION_H

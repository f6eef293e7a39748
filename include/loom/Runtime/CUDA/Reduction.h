//===- Reduction.h - CUDA kernels for reductions ----------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterpart of loom/Runtime/Host/Reduction.h (calling convention:
// CUDA/Elementwise.h): one block per output element. Float sums run in
// double (the host sums in T, so f32 results may differ from the host's in
// the last bits, towards the exact sum); max propagates NaN as the host does.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_REDUCTION_H
#define LOOM_RUNTIME_CUDA_REDUCTION_H

#include "loom/Runtime/Host/Reduction.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace loom::runtime::cuda {

using host::ReduceKind;

/// T: float, double, int64_t.
template <typename T>
void reduce(cudaStream_t stream, ReduceKind kind, const T *in,
            const Shape &shape, const std::vector<int64_t> &axes, T *out);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_REDUCTION_H

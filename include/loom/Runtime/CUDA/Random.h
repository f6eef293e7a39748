//===- Random.h - CUDA kernel of loom.dropout -------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterpart of host::dropout (loom/Runtime/Host/Random.h; calling
// convention: CUDA/Elementwise.h). Each thread computes its element's word
// with the same inline Philox and dropout stream as the host
// (loom/Runtime/Support/Philox.h, `__host__ __device__` under nvcc), so the
// device mask equals the host mask bit for bit, and so do the results: the
// scale is computed on the host in double and rounded to T, and a kept
// element is one product in T, as on the host.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_RANDOM_H
#define LOOM_RUNTIME_CUDA_RANDOM_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace loom::runtime::cuda {

/// loom.dropout over the block of a [globalShape] input at `blockOffset`
/// with shape `blockShape` (device buffers `input` and `result` hold that
/// block), drawing from the stream of (`seed`, `runSeed`, `step`). T: float,
/// double.
template <typename T>
void dropout(cudaStream_t stream, const T *input, const Shape &globalShape,
             const Shape &blockOffset, const Shape &blockShape, double rate,
             int64_t seed, uint64_t runSeed, uint64_t step, T *result);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_RANDOM_H

//===- Rope.h - CUDA kernel for rotary position embeddings ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterpart of loom/Runtime/Host/Rope.h (calling convention:
// CUDA/Elementwise.h): one thread per rotated pair, angles in double.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_ROPE_H
#define LOOM_RUNTIME_CUDA_ROPE_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace loom::runtime::cuda {

template <typename T>
void rope(cudaStream_t stream, const T *input, const Shape &shape,
          const int64_t *positions, const Shape &positionsShape, double theta,
          bool inverse, T *result);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_ROPE_H

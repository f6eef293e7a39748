//===- Softmax.h - CUDA kernels for softmax and its gradient ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Softmax.h (calling convention:
// CUDA/Elementwise.h). One thread block per lane (a line of elements along
// `axis`); maxima and sums are reduced in double in a fixed tree order, so
// results are deterministic and within a few ulps of the host's sequential
// sums.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_SOFTMAX_H
#define LOOM_RUNTIME_CUDA_SOFTMAX_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace loom::runtime::cuda {

template <typename T>
void softmax(cudaStream_t stream, const T *input, const Shape &shape,
             int64_t axis, T *result);
template <typename T>
void logSoftmax(cudaStream_t stream, const T *input, const Shape &shape,
                int64_t axis, T *result);
template <typename T>
void softmaxGrad(cudaStream_t stream, const T *output, const T *grad,
                 const Shape &shape, int64_t axis, T *result);
template <typename T>
void logSoftmaxGrad(cudaStream_t stream, const T *output, const T *grad,
                    const Shape &shape, int64_t axis, T *result);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_SOFTMAX_H

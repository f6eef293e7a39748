//===- Activation.h - CUDA kernels for activations --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Activation.h (calling convention:
// CUDA/Elementwise.h). The math is evaluated in double and rounded to T once,
// as on the host; results differ from the host's only where the device's
// erf/tanh/exp differ from the C library's in the last bit.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_ACTIVATION_H
#define LOOM_RUNTIME_CUDA_ACTIVATION_H

#include "loom/Runtime/Host/Activation.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

namespace loom::runtime::cuda {

using host::GeluApproximation;

template <typename T>
void gelu(cudaStream_t stream, const T *input, const Shape &shape,
          GeluApproximation approximate, T *result);
template <typename T>
void silu(cudaStream_t stream, const T *input, const Shape &shape, T *result);
template <typename T>
void relu(cudaStream_t stream, const T *input, const Shape &shape, T *result);

template <typename T>
void geluGrad(cudaStream_t stream, const T *dy, const T *x, const Shape &shape,
              GeluApproximation approximate, T *dx);
template <typename T>
void siluGrad(cudaStream_t stream, const T *dy, const T *x, const Shape &shape,
              T *dx);
template <typename T>
void reluGrad(cudaStream_t stream, const T *dy, const T *x, const Shape &shape,
              T *dx);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_ACTIVATION_H

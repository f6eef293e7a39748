//===- Normalization.h - CUDA kernels for layer and RMS norm ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Normalization.h (calling
// convention: CUDA/Elementwise.h): one thread block per row of the last dim,
// statistics in double. The parameter gradients (dgamma, dbeta) sum over
// rows; a second kernel does that with one thread per column, walking the
// rows in order as the host does, so they are deterministic too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_NORMALIZATION_H
#define LOOM_RUNTIME_CUDA_NORMALIZATION_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

namespace loom::runtime::cuda {

template <typename T>
void layerNorm(cudaStream_t stream, const T *input, const Shape &shape,
               const T *gamma, const T *beta, double eps, T *result);
template <typename T>
void rmsNorm(cudaStream_t stream, const T *input, const Shape &shape,
             const T *gamma, double eps, T *result);
template <typename T>
void layerNormGrad(cudaStream_t stream, const T *grad, const T *input,
                   const Shape &shape, const T *gamma, double eps, T *dx,
                   T *dgamma, T *dbeta);
template <typename T>
void rmsNormGrad(cudaStream_t stream, const T *grad, const T *input,
                 const Shape &shape, const T *gamma, double eps, T *dx,
                 T *dgamma);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_NORMALIZATION_H

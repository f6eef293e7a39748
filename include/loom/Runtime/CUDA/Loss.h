//===- Loss.h - CUDA kernels for the cross-entropy loss ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Loss.h (calling convention:
// CUDA/Elementwise.h). One block per row computes the row's log-sum-exp in
// double; the loss adds the per-row terms in row order in one block, so it
// is deterministic. A label out of range (without `offset`) is recorded in
// `errors` instead of returned. `dloss` stays on the device (a pointer to the
// rank-0 tensor); `offset`, the first vocabulary entry of this rank's block,
// is a constant of the emitted rank (nullptr: not vocab-parallel).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_LOSS_H
#define LOOM_RUNTIME_CUDA_LOSS_H

#include "loom/Runtime/CUDA/DeviceError.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace loom::runtime::cuda {

template <typename T>
void crossEntropyLocal(cudaStream_t stream, const T *logits,
                       const Shape &logitsShape, const int64_t *labels,
                       int64_t ignoreIndex, const int64_t *offset, bool sum,
                       T *result, ErrorSink errors = {});

template <typename T>
void crossEntropyGradLocal(cudaStream_t stream, const T *logits,
                           const Shape &logitsShape, const int64_t *labels,
                           const T *dloss, int64_t ignoreIndex,
                           const int64_t *offset, bool sum, T *result,
                           ErrorSink errors = {});

template <typename T>
void labelCount(cudaStream_t stream, const int64_t *labels, int64_t count,
                int64_t ignoreIndex, T *result);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_LOSS_H

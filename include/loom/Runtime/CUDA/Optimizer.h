//===- Optimizer.h - CUDA kernels for optimizer updates ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Optimizer.h (calling convention:
// CUDA/Elementwise.h). The formulas run in double per element, as on the
// host. AdamW's `step` stays on the device: it is a pointer to the rank-0
// step tensor (S: int64_t or T), read by every thread, so the update needs
// no synchronization.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_OPTIMIZER_H
#define LOOM_RUNTIME_CUDA_OPTIMIZER_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

namespace loom::runtime::cuda {

/// loom.sgd_update; `momentumBuf` and `newMomentumBuf` are both null or both
/// set. The learning rate is `lr * lrScale[0]` (in f64) when `lrScale` (a
/// device scalar, the step's `lr_scale`) is set, `lr` otherwise.
template <typename T>
void sgdUpdate(cudaStream_t stream, const T *param, const T *grad,
               const T *momentumBuf, const Shape &shape, double lr,
               const T *lrScale, double momentum, double weightDecay,
               double dampening, bool nesterov, T *newParam, T *newMomentumBuf);

/// loom.adamw_update, with the steps taken so far at `step[0]` and the
/// learning rate scaled as sgdUpdate's.
template <typename T, typename S>
void adamwUpdate(cudaStream_t stream, const T *param, const T *grad,
                 const T *expAvg, const T *expAvgSq, const Shape &shape,
                 const S *step, double lr, const T *lrScale, double beta1,
                 double beta2, double eps, double weightDecay, T *newParam,
                 T *newExpAvg, T *newExpAvgSq);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_OPTIMIZER_H

//===- LossScaling.h - CUDA kernels of dynamic loss scaling -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/LossScaling.h (calling
// convention: CUDA/Elementwise.h). Every pointer is device memory, the
// rank-0 condition, scale, tracker and count included, so a step that keeps
// its state on the device never copies them to the host. The count is one
// block's sum (an exact integer in double), the same whatever the order.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_LOSSSCALING_H
#define LOOM_RUNTIME_CUDA_LOSSSCALING_H

#include <cuda_runtime_api.h>

#include <cstdint>

namespace loom::runtime::cuda {

/// loom.nonfinite_count of `count` elements into `result[0]`.
template <typename T>
void nonfiniteCount(cudaStream_t stream, const T *input, int64_t count,
                    T *result);

/// loom.select: `result` = `condition[0] != 0 ? onTrue : onFalse` (NaN is
/// not 0), `count` elements of type E (T or int64_t).
template <typename T, typename E>
void selectWhole(cudaStream_t stream, const T *condition, const E *onTrue,
                 const E *onFalse, int64_t count, E *result);

/// loom.update_loss_scale (GradScaler's update), one thread.
template <typename T>
void updateLossScale(cudaStream_t stream, const T *scale,
                     const int64_t *tracker, const T *nonfinite,
                     double growthFactor, double backoffFactor,
                     int64_t growthInterval, T *newScale, int64_t *newTracker);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_LOSSSCALING_H

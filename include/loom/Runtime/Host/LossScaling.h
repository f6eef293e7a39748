//===- LossScaling.h - Host kernels of dynamic loss scaling -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom.nonfinite_count, loom.select and loom.update_loss_scale
// (include/loom/Dialect/Loom/IR/Ops/LossScaling.td): the pieces of
// torch.cuda.amp.GradScaler an fp16-mixed step is built from. The
// interpreter runs these too, so emitted host programs equal it bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_LOSSSCALING_H
#define LOOM_RUNTIME_HOST_LOSSSCALING_H

#include <cstdint>

namespace loom::runtime::host {

/// loom.nonfinite_count: writes to `result[0]` the number of the `count`
/// elements of `input` that are +inf, -inf or NaN.
template <typename T>
void nonfiniteCount(const T *input, int64_t count, T *result);

/// loom.select: copies `onTrue` to `result` when `condition` is not zero
/// (NaN included), else `onFalse`; `count` elements of type E (the run's
/// float type or int64_t).
template <typename T, typename E>
void selectWhole(T condition, const E *onTrue, const E *onFalse, int64_t count,
                 E *result);

/// loom.update_loss_scale: GradScaler's update of `scale` and its growth
/// `tracker` after a step with `nonfinite` non-finite gradient elements.
template <typename T>
void updateLossScale(T scale, int64_t tracker, T nonfinite, double growthFactor,
                     double backoffFactor, int64_t growthInterval, T *newScale,
                     int64_t *newTracker);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_LOSSSCALING_H

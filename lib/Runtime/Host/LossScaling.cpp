//===- LossScaling.cpp - Host kernels of dynamic loss scaling -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The count is exact (an integer count held in T: f32 counts are exact up
// to 2^24 non-finite elements, and only zero versus non-zero matters). The
// scale's products are computed in T, as GradScaler's f32 scale tensor is
// multiplied in f32 by `_amp_update_scale_`.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/LossScaling.h"

#include <algorithm>
#include <cmath>

namespace loom::runtime::host {

template <typename T>
void nonfiniteCount(const T *input, int64_t count, T *result) {
  int64_t n = 0;
  for (int64_t i = 0; i < count; ++i)
    n += !std::isfinite(input[i]);
  result[0] = static_cast<T>(n);
}

template <typename T, typename E>
void selectWhole(T condition, const E *onTrue, const E *onFalse, int64_t count,
                 E *result) {
  // `!(c == 0)`: a NaN condition selects onTrue (a NaN count is not clean).
  const E *chosen = !(condition == T(0)) ? onTrue : onFalse;
  if (chosen != result)
    std::copy(chosen, chosen + count, result);
}

template <typename T>
void updateLossScale(T scale, int64_t tracker, T nonfinite, double growthFactor,
                     double backoffFactor, int64_t growthInterval, T *newScale,
                     int64_t *newTracker) {
  if (!(nonfinite == T(0))) {
    *newScale = scale * static_cast<T>(backoffFactor);
    *newTracker = 0;
  } else if (tracker + 1 == growthInterval) {
    *newScale = scale * static_cast<T>(growthFactor);
    *newTracker = 0;
  } else {
    *newScale = scale;
    *newTracker = tracker + 1;
  }
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void nonfiniteCount<T>(const T *, int64_t, T *);                    \
  template void selectWhole<T, T>(T, const T *, const T *, int64_t, T *);      \
  template void selectWhole<T, int64_t>(T, const int64_t *, const int64_t *,   \
                                        int64_t, int64_t *);                   \
  template void updateLossScale<T>(T, int64_t, T, double, double, int64_t,     \
                                   T *, int64_t *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

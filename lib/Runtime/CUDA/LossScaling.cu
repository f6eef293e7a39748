//===- LossScaling.cu - CUDA kernels of dynamic loss scaling --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// nonfinite_count (one block, a strided count summed by blockSum: exact,
// since every partial count is an integer below 2^53), select (a strided
// copy of the chosen operand, every thread reading the device-side
// condition) and update_loss_scale (one thread), each the host kernel's
// arithmetic.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "loom/Runtime/CUDA/LossScaling.h"

namespace loom::runtime::cuda {

using namespace detail;

namespace {

template <typename T>
__global__ void nonfiniteCountKernel(const T *input, int64_t count,
                                     T *result) {
  __shared__ double shared[kRowThreads / 32];
  double n = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
    n += (isnan(input[i]) || isinf(input[i])) ? 1.0 : 0.0;
  n = blockSum(n, shared);
  if (threadIdx.x == 0)
    result[0] = static_cast<T>(n);
}

template <typename T, typename E>
__global__ void selectKernel(const T *condition, const E *onTrue,
                             const E *onFalse, int64_t count, E *result) {
  const E *chosen = !(condition[0] == T(0)) ? onTrue : onFalse;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    result[i] = chosen[i];
}

template <typename T>
__global__ void updateLossScaleKernel(const T *scale, const int64_t *tracker,
                                      const T *nonfinite, double growthFactor,
                                      double backoffFactor,
                                      int64_t growthInterval, T *newScale,
                                      int64_t *newTracker) {
  T s = scale[0];
  int64_t t = tracker[0];
  if (!(nonfinite[0] == T(0))) {
    newScale[0] = s * static_cast<T>(backoffFactor);
    newTracker[0] = 0;
  } else if (t + 1 == growthInterval) {
    newScale[0] = s * static_cast<T>(growthFactor);
    newTracker[0] = 0;
  } else {
    newScale[0] = s;
    newTracker[0] = t + 1;
  }
}

} // namespace

template <typename T>
void nonfiniteCount(cudaStream_t stream, const T *input, int64_t count,
                    T *result) {
  LOOM_LAUNCH(nonfiniteCountKernel<T>, 1, kRowThreads, stream, input, count,
              result);
}

template <typename T, typename E>
void selectWhole(cudaStream_t stream, const T *condition, const E *onTrue,
                 const E *onFalse, int64_t count, E *result) {
  // A named kernel: the macro would split a template argument list.
  auto *kernel = &selectKernel<T, E>;
  if (count > 0)
    LOOM_LAUNCH(kernel, blocksFor(count), kThreads, stream, condition, onTrue,
                onFalse, count, result);
}

template <typename T>
void updateLossScale(cudaStream_t stream, const T *scale,
                     const int64_t *tracker, const T *nonfinite,
                     double growthFactor, double backoffFactor,
                     int64_t growthInterval, T *newScale,
                     int64_t *newTracker) {
  LOOM_LAUNCH(updateLossScaleKernel<T>, 1, 1, stream, scale, tracker,
              nonfinite, growthFactor, backoffFactor, growthInterval, newScale,
              newTracker);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void nonfiniteCount<T>(cudaStream_t, const T *, int64_t, T *);      \
  template void selectWhole<T, T>(cudaStream_t, const T *, const T *,          \
                                  const T *, int64_t, T *);                    \
  template void selectWhole<T, int64_t>(cudaStream_t, const T *,               \
                                        const int64_t *, const int64_t *,      \
                                        int64_t, int64_t *);                   \
  template void updateLossScale<T>(cudaStream_t, const T *, const int64_t *,   \
                                   const T *, double, double, int64_t, T *,    \
                                   int64_t *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::cuda

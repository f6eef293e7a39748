//===- Launch.h - Shared helpers of the CUDA kernels ------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Runtime/CUDA's .cu files: launch geometry, shapes passed to
// kernels by value, warp and block reductions in double, and the recording
// of data errors (DeviceError.h). Reductions go through shuffles in a fixed
// tree order, so every kernel is deterministic for a given launch.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUDA_LAUNCH_H
#define LOOM_LIB_RUNTIME_CUDA_LAUNCH_H

#include "loom/Runtime/CUDA/Check.h"
#include "loom/Runtime/CUDA/DeviceError.h"
#include "loom/Runtime/CUDA/Elementwise.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace loom::runtime::cuda::detail {

inline constexpr int kThreads = 256;
/// Threads of a block that reduces one row (a multiple of the warp size).
inline constexpr int kRowThreads = 128;

/// Blocks for a grid-stride loop over `count` elements: enough to fill the
/// GPU several times over; the loop covers the rest.
inline unsigned blocksFor(int64_t count) {
  return static_cast<unsigned>(
      std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, 1 << 16));
}

/// Iterates `i` over [0, n) across the whole grid.
#define LOOM_GRID_LOOP(i, n)                                                   \
  for (int64_t i =                                                             \
           static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;        \
       i < (n); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

/// A shape and per-dim strides, passed to a kernel by value.
struct Dims {
  int rank = 0;
  int64_t size[kMaxRank];
  int64_t stride[kMaxRank];
};

/// Stops on a rank beyond kMaxRank: the emitter never produces one, so this
/// is a bug in Loom, not a user error.
inline void checkRank(size_t rank, const char *kernel) {
  if (rank > static_cast<size_t>(kMaxRank)) {
    std::fprintf(stderr, "loom: rank %d: %s: tensor of rank %zu exceeds %d\n",
                 reportedRank(), kernel, rank, kMaxRank);
    std::abort();
  }
}

/// `shape` with `strides` (row-major strides when empty).
inline Dims makeDims(const Shape &shape, const std::vector<int64_t> &strides,
                     const char *kernel) {
  checkRank(shape.size(), kernel);
  Dims dims;
  dims.rank = static_cast<int>(shape.size());
  int64_t running = 1;
  for (int d = dims.rank - 1; d >= 0; --d) {
    dims.size[d] = shape[d];
    dims.stride[d] = strides.empty() ? running : strides[d];
    running *= shape[d];
  }
  return dims;
}

/// Rows of the last dim: [rows, width].
inline void rowsAndWidth(const Shape &shape, int64_t &rows, int64_t &width) {
  width = shape.empty() ? 1 : shape.back();
  rows = width == 0 ? 0 : numElements(shape) / width;
}

/// Launches with a checked launch; `blocks` may be 0 (nothing to do). The
/// CUDA emulator (LOOM_CUDA_EMULATOR, plain C++) has no `<<<...>>>`: its
/// launch function runs the same kernel over the same grid.
#ifdef LOOM_CUDA_EMULATOR
#define LOOM_KERNEL_CALL(kernel, blocks, threads, stream, ...)                 \
  ::loom::cudaemu::launch(kernel, static_cast<unsigned>(blocks), (threads),    \
                          (stream), __VA_ARGS__)
#else
#define LOOM_KERNEL_CALL(kernel, blocks, threads, stream, ...)                 \
  kernel<<<static_cast<unsigned>(blocks), (threads), 0, (stream)>>>(           \
      __VA_ARGS__)
#endif
#define LOOM_LAUNCH(kernel, blocks, threads, stream, ...)                      \
  do {                                                                         \
    if ((blocks) > 0) {                                                        \
      LOOM_KERNEL_CALL(kernel, blocks, threads, stream, __VA_ARGS__);          \
      LOOM_CUDA_CHECK(cudaGetLastError());                                     \
    }                                                                          \
  } while (false)

#if defined(__CUDACC__) || defined(LOOM_CUDA_EMULATOR)

/// Sum over a warp; every lane gets the result.
__device__ inline double warpSum(double v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// Max over a warp (NaN wins); every lane gets the result.
__device__ inline double warpMax(double v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    double o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = (isnan(v) || isnan(o)) ? (isnan(v) ? v : o) : fmax(v, o);
  }
  return v;
}

/// warpSum and warpMax in float (the low-precision attention kernels).
__device__ inline float warpSum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline float warpMax(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    float o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = (isnan(v) || isnan(o)) ? (isnan(v) ? v : o) : fmaxf(v, o);
  }
  return v;
}

/// Sum over a block of kRowThreads threads; every thread gets the result.
/// `shared` holds kRowThreads / 32 doubles.
__device__ inline double blockSum(double v, double *shared) {
  v = warpSum(v);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  double total = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w)
    total += shared[w];
  return total;
}

/// Max over a block (NaN wins), as blockSum.
__device__ inline double blockMax(double v, double *shared) {
  v = warpMax(v);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  double m = shared[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w)
    m = (isnan(m) || isnan(shared[w])) ? (isnan(m) ? m : shared[w])
                                       : fmax(m, shared[w]);
  return m;
}

/// Records a data error unless an earlier one was recorded this step.
__device__ inline void raiseError(ErrorSink sink, DeviceErrorKind kind,
                                  int64_t value, int64_t index, int64_t bound,
                                  int64_t extra = 0) {
  if (!sink.slot)
    return;
  if (atomicCAS(&sink.slot->tag, 0ull, sink.tag) != 0ull)
    return;
  sink.slot->kind = static_cast<int64_t>(kind);
  sink.slot->value = value;
  sink.slot->index = index;
  sink.slot->bound = bound;
  sink.slot->extra = extra;
}

#endif // __CUDACC__ || LOOM_CUDA_EMULATOR

} // namespace loom::runtime::cuda::detail

#endif // LOOM_LIB_RUNTIME_CUDA_LAUNCH_H

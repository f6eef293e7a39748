//===- Kernel.h - CUDA emulator: the kernel language ------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The part of CUDA C++ that Loom's kernels use, as plain C++ for the CUDA
// emulator (docs/Codegen.md, "The CUDA emulator"):
//
//   - the qualifiers `__global__`, `__device__`, `__host__` (empty) and
//     `__shared__` (one object per OS thread: the threads of a block are
//     fibers of one OS thread, and blocks run one after another);
//   - the built-in variables threadIdx, blockIdx, blockDim, gridDim;
//   - `__syncthreads()`, `__shfl_xor_sync()`, `__shfl_sync()`, `atomicCAS()`
//     and the bit casts and integer min/max of the device library;
//   - `loom::cudaemu::launch(kernel, grid, block, stream, args...)`, which
//     stands for `kernel<<<grid, block, 0, stream>>>(args...)`.
//
// Every CUDA thread is a fiber (Boost.Context) with a stack of its own, so
// barriers and shuffles are real rendezvous points: a thread that reaches
// one waits until every thread the barrier names has reached it. Misuse that
// is undefined on a GPU (threads waiting at different barriers, a shuffle
// naming a lane that exited or is not in the mask) stops the program with a
// message instead of hanging or returning garbage.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CUDA_EMULATOR_KERNEL_H
#define LOOM_CUDA_EMULATOR_KERNEL_H

#include "cuda_runtime_api.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local

// Inline and constant-initialized: every read is a plain TLS load, with no
// initialization wrapper call (a kernel reads them in every loop).
inline thread_local uint3 threadIdx{};
inline thread_local uint3 blockIdx{};
inline thread_local dim3 blockDim{};
inline thread_local dim3 gridDim{};

namespace loom::cudaemu {

/// Runs `body(closure)` once per thread of `grid` x `block`, as a launch on
/// `stream` would (in the stream's order: later, on a created stream);
/// records cudaErrorInvalidConfiguration (cudaGetLastError) for a geometry a
/// GPU rejects.
cudaError_t launchGrid(dim3 grid, dim3 block, cudaStream_t stream,
                       void (*body)(void *), std::shared_ptr<void> closure);

/// Waits until every live thread of the block has called it.
void blockBarrier();

/// The value `bits` of lane `lane ^ laneMask` (within groups of `width`
/// lanes), exchanged among the lanes of `mask` in the caller's warp.
uint64_t shuffleXor(unsigned mask, uint64_t bits, int laneMask, int width);

/// The value `bits` of lane `sourceLane` (within the caller's group of
/// `width` lanes), exchanged among the lanes of `mask` in the caller's warp.
uint64_t shuffleIndex(unsigned mask, uint64_t bits, int sourceLane, int width);

/// `kernel<<<grid, block, 0, stream>>>(args...)`: each thread calls the
/// kernel with its own copies of the arguments, converted once to the
/// parameter types as a launch does.
template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block,
                   cudaStream_t stream, Args &&...args) {
  using Arguments = std::tuple<std::decay_t<Params>...>;
  struct Closure {
    void (*kernel)(Params...);
    Arguments arguments;
  };
  // Shared: the launch may run after this call returns.
  auto closure = std::make_shared<Closure>(
      Closure{kernel, Arguments(std::forward<Args>(args)...)});
  return launchGrid(
      grid, block, stream,
      [](void *opaque) {
        auto *c = static_cast<Closure *>(opaque);
        Arguments copy = c->arguments;
        std::apply(c->kernel, std::move(copy));
      },
      std::move(closure));
}

} // namespace loom::cudaemu

inline void __syncthreads() { loom::cudaemu::blockBarrier(); }

namespace loom::cudaemu {
/// `value` passed through `exchange` (a shuffle of 64-bit patterns).
template <typename T, typename Exchange>
T shuffleValue(T value, Exchange exchange) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                "the emulator shuffles values of at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  bits = exchange(bits);
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}
} // namespace loom::cudaemu

template <typename T>
T __shfl_xor_sync(unsigned mask, T value, int laneMask, int width = 32) {
  return loom::cudaemu::shuffleValue(value, [&](uint64_t bits) {
    return loom::cudaemu::shuffleXor(mask, bits, laneMask, width);
  });
}

template <typename T>
T __shfl_sync(unsigned mask, T value, int sourceLane, int width = 32) {
  return loom::cudaemu::shuffleValue(value, [&](uint64_t bits) {
    return loom::cudaemu::shuffleIndex(mask, bits, sourceLane, width);
  });
}

/// Compare-and-swap; the threads of the emulator never run at once, so a
/// plain read-modify-write is atomic.
inline unsigned long long atomicCAS(unsigned long long *address,
                                    unsigned long long compare,
                                    unsigned long long value) {
  unsigned long long old = *address;
  if (old == compare)
    *address = value;
  return old;
}

inline unsigned __float_as_uint(float value) {
  unsigned bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float __uint_as_float(unsigned bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The device library's integer min and max (host C++ has only std::).
inline int max(int a, int b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }

#endif // LOOM_CUDA_EMULATOR_KERNEL_H

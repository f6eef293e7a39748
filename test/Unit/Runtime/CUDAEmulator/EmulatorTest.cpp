//===- EmulatorTest.cpp - The CUDA emulator's own contract ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA emulator (lib/Runtime/CUDAEmulator) stands in for the GPU in CI,
// so a bug in it would hide bugs in the CUDA backend. These cases pin what it
// promises, independently of Loom's kernels:
//
//   - launches: every (blockIdx, threadIdx) runs once with the right
//     blockDim/gridDim, invalid geometries run nothing and are reported by
//     cudaGetLastError, each thread has its own copy of the arguments;
//   - `__syncthreads`, `__shfl_xor_sync` and `__shfl_sync` are real
//     rendezvous (block-wide exchanges, butterfly reductions, sub-warp widths,
//     partial warps), and their misuse stops the program with a message (death
//     tests);
//   - device memory: alignment, the 0xFF fill, copies in every direction and
//     their checks, 2-D copies, memset, frees; streams, events, devices;
//   - cublasGemmStridedBatchedEx against a naive column-major reference, its
//     16-bit outputs against the f32 result rounded by exhaustive search, and
//     its argument checks;
//   - NCCL on one MPI rank (a singleton MPI job in a child process): the
//     collectives move the bytes and check their buffers; a send nobody
//     receives stops after $LOOM_CUDA_EMULATOR_P2P_TIMEOUT_S, as NCCL's
//     rendezvous send would hang.
//
// Kernels are written in the emulator's CUDA dialect (Kernel.h) and launched
// with loom::cudaemu::launch, as the emulated CUDA runtime does.
//
//===----------------------------------------------------------------------===//

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <mpi.h>

#include "gtest/gtest.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

using loom::cudaemu::launch;

namespace {

/// A device array of `size` elements, freed on scope exit.
template <typename T> class DeviceArray {
public:
  explicit DeviceArray(size_t size) : size(size) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void **>(&data), bytes()),
              cudaSuccess);
  }
  explicit DeviceArray(const std::vector<T> &values)
      : DeviceArray(values.size()) {
    upload(values);
  }
  ~DeviceArray() { EXPECT_EQ(cudaFree(data), cudaSuccess); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  T *get() const { return data; }
  size_t bytes() const { return size * sizeof(T); }
  void upload(const std::vector<T> &values) {
    ASSERT_EQ(values.size(), size);
    ASSERT_EQ(cudaMemcpy(data, values.data(), bytes(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> values(size);
    EXPECT_EQ(cudaMemcpy(values.data(), data, bytes(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return values;
  }

private:
  T *data = nullptr;
  size_t size;
};

/// Clears the error a previous case may have left for cudaGetLastError.
void clearLastError() { (void)cudaGetLastError(); }

unsigned linearThread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

unsigned linearBlock() {
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

//===----------------------------------------------------------------------===//
// Launch geometry
//===----------------------------------------------------------------------===//

/// Counts each (block, thread) pair's runs and records what each thread saw
/// of the geometry.
__global__ void countRuns(int *runs, unsigned *seen) {
  unsigned threadsPerBlock = blockDim.x * blockDim.y * blockDim.z;
  unsigned slot = linearBlock() * threadsPerBlock + linearThread();
  runs[slot] += 1;
  unsigned *mine = seen + 6 * slot;
  mine[0] = blockDim.x;
  mine[1] = blockDim.y;
  mine[2] = blockDim.z;
  mine[3] = gridDim.x;
  mine[4] = gridDim.y;
  mine[5] = gridDim.z;
}

/// Launches countRuns over `grid` x `block` and checks each pair ran once
/// with the launch's geometry.
void expectEveryThreadOnce(dim3 grid, dim3 block) {
  size_t blocks = size_t(grid.x) * grid.y * grid.z;
  size_t threads = size_t(block.x) * block.y * block.z;
  DeviceArray<int> runs(std::vector<int>(blocks * threads, 0));
  DeviceArray<unsigned> seen(blocks * threads * 6);
  clearLastError();
  ASSERT_EQ(launch(countRuns, grid, block, nullptr, runs.get(), seen.get()),
            cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<int> counts = runs.download();
  std::vector<unsigned> geometry = seen.download();
  for (size_t slot = 0; slot < counts.size(); ++slot) {
    ASSERT_EQ(counts[slot], 1)
        << "block " << slot / threads << " thread " << slot % threads;
    const unsigned *g = geometry.data() + 6 * slot;
    ASSERT_EQ(g[0], block.x);
    ASSERT_EQ(g[1], block.y);
    ASSERT_EQ(g[2], block.z);
    ASSERT_EQ(g[3], grid.x);
    ASSERT_EQ(g[4], grid.y);
    ASSERT_EQ(g[5], grid.z);
  }
}

TEST(EmulatorLaunchTest, EveryThreadOfA2DGridRunsOnce) {
  expectEveryThreadOnce(dim3(3, 2), dim3(8, 4));
}

TEST(EmulatorLaunchTest, EveryThreadOfA3DGridRunsOnce) {
  expectEveryThreadOnce(dim3(2, 3, 2), dim3(4, 2, 3));
}

TEST(EmulatorLaunchTest, LargestBlocksRunEveryThreadOnce) {
  expectEveryThreadOnce(dim3(1), dim3(1024));
  expectEveryThreadOnce(dim3(2), dim3(1, 16, 64));
}

/// Counts every thread that runs into one counter.
__global__ void countAll(int *runs) { *runs += 1; }

/// Launches countAll with an invalid geometry: nothing may run.
void expectInvalidConfiguration(dim3 grid, dim3 block) {
  DeviceArray<int> runs(std::vector<int>(1, 0));
  clearLastError();
  EXPECT_EQ(launch(countAll, grid, block, nullptr, runs.get()),
            cudaErrorInvalidConfiguration)
      << "grid (" << grid.x << ", " << grid.y << ", " << grid.z << ") block ("
      << block.x << ", " << block.y << ", " << block.z << ")";
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(runs.download()[0], 0) << "a rejected launch ran a thread";
}

TEST(EmulatorLaunchTest, InvalidConfigurationsRunNothing) {
  expectInvalidConfiguration(dim3(0), dim3(32));
  expectInvalidConfiguration(dim3(1, 0), dim3(32));
  expectInvalidConfiguration(dim3(1, 1, 0), dim3(32));
  expectInvalidConfiguration(dim3(1), dim3(0));
  expectInvalidConfiguration(dim3(1), dim3(32, 1, 0));
  expectInvalidConfiguration(dim3(1), dim3(1025));
  expectInvalidConfiguration(dim3(1), dim3(32, 33));
  expectInvalidConfiguration(dim3(1), dim3(1, 1, 65));
  expectInvalidConfiguration(dim3(1, 65536), dim3(1));
  expectInvalidConfiguration(dim3(1, 1, 65536), dim3(1));
}

/// Changes its by-value parameter, waits for the whole block, then stores
/// it: with shared arguments, later threads would see earlier increments.
__global__ void bumpOwnCopy(int *out, int value) {
  value += 1 + static_cast<int>(linearThread());
  __syncthreads();
  out[linearBlock() * blockDim.x + linearThread()] = value;
}

TEST(EmulatorLaunchTest, EachThreadGetsItsOwnArguments) {
  const int blocks = 3, threads = 64, base = 1000;
  DeviceArray<int> out(blocks * threads);
  ASSERT_EQ(launch(bumpOwnCopy, dim3(blocks), dim3(threads), nullptr, out.get(),
                   base),
            cudaSuccess);
  std::vector<int> values = out.download();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t)
      EXPECT_EQ(values[b * threads + t], base + 1 + t)
          << "block " << b << " thread " << t;
}

/// Takes a double parameter from an int argument, as a launch converts.
__global__ void storeConverted(double *out, double value) { *out = value / 2; }

TEST(EmulatorLaunchTest, ArgumentsConvertToTheParameterTypes) {
  DeviceArray<double> out(1);
  ASSERT_EQ(launch(storeConverted, dim3(1), dim3(1), nullptr, out.get(), 3),
            cudaSuccess);
  EXPECT_EQ(out.download()[0], 1.5);
}

//===----------------------------------------------------------------------===//
// __syncthreads
//===----------------------------------------------------------------------===//

/// Each thread publishes its value, waits, reads its neighbour's, waits
/// again (so no one overwrites a slot still being read) and repeats.
__global__ void rotateThroughShared(const int *in, int *out, int rounds) {
  __shared__ int slots[1024];
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  unsigned t = linearThread();
  unsigned base = linearBlock() * n;
  int value = in[base + t];
  for (int r = 0; r < rounds; ++r) {
    slots[t] = value;
    __syncthreads();
    value = slots[(t + 1) % n];
    __syncthreads();
  }
  out[base + t] = value;
}

void expectRotation(dim3 grid, dim3 block, int rounds) {
  unsigned n = block.x * block.y * block.z;
  unsigned blocks = grid.x * grid.y * grid.z;
  std::vector<int> input(size_t(n) * blocks);
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = static_cast<int>(i * 7 + 3);
  DeviceArray<int> in(input);
  DeviceArray<int> out(input.size());
  ASSERT_EQ(launch(rotateThroughShared, grid, block, nullptr, in.get(),
                   out.get(), rounds),
            cudaSuccess);
  std::vector<int> result = out.download();
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < n; ++t)
      ASSERT_EQ(result[b * n + t], input[b * n + (t + rounds) % n])
          << n << " threads, block " << b << ", thread " << t;
}

TEST(EmulatorSyncthreadsTest, SharedExchangeIsRightFor32Threads) {
  expectRotation(dim3(1), dim3(32), 1);
}

TEST(EmulatorSyncthreadsTest, SharedExchangeIsRightFor96Threads) {
  expectRotation(dim3(1), dim3(96), 1);
  expectRotation(dim3(1), dim3(32, 3), 5);
}

TEST(EmulatorSyncthreadsTest, SharedExchangeIsRightFor1024Threads) {
  expectRotation(dim3(1), dim3(1024), 3);
}

TEST(EmulatorSyncthreadsTest, EachBlockOfAGridExchangesItsOwnValues) {
  expectRotation(dim3(2, 2), dim3(64), 2);
}

/// Threads at or past `active` return at once; the others still rotate
/// among themselves through two barriers per round.
__global__ void rotateAmongFirst(int *out, unsigned active) {
  __shared__ int slots[1024];
  unsigned t = threadIdx.x;
  if (t >= active)
    return;
  int value = static_cast<int>(t * t);
  for (int r = 0; r < 2; ++r) {
    slots[t] = value;
    __syncthreads();
    value = slots[(t + 1) % active];
    __syncthreads();
  }
  out[t] = value;
}

TEST(EmulatorSyncthreadsTest, ThreadsThatExitEarlyDoNotBlockTheBarrier) {
  const unsigned threads = 96, active = 40;
  DeviceArray<int> out(std::vector<int>(threads, -1));
  ASSERT_EQ(launch(rotateAmongFirst, dim3(1), dim3(threads), nullptr, out.get(),
                   active),
            cudaSuccess);
  std::vector<int> result = out.download();
  for (unsigned t = 0; t < threads; ++t) {
    unsigned source = (t + 2) % active;
    EXPECT_EQ(result[t], t < active ? int(source * source) : -1)
        << "thread " << t;
  }
}

/// Odd threads leave after the first barrier; even ones meet at a second.
__global__ void oddThreadsLeaveMidway(int *out) {
  __shared__ int slots[1024];
  unsigned t = threadIdx.x;
  slots[t] = static_cast<int>(t) + 100;
  __syncthreads();
  int first = slots[blockDim.x - 1 - t];
  if (t % 2)
    return;
  __syncthreads();
  slots[t] = first;
  __syncthreads();
  out[t] = slots[(t + 2) % blockDim.x];
}

TEST(EmulatorSyncthreadsTest, ThreadsThatExitBetweenBarriersDoNotBlockThem) {
  const unsigned threads = 64;
  DeviceArray<int> out(std::vector<int>(threads, -1));
  ASSERT_EQ(
      launch(oddThreadsLeaveMidway, dim3(1), dim3(threads), nullptr, out.get()),
      cudaSuccess);
  std::vector<int> result = out.download();
  for (unsigned t = 0; t < threads; ++t) {
    unsigned source = (t + 2) % threads;
    EXPECT_EQ(result[t], t % 2 ? -1 : int(threads - 1 - source) + 100)
        << "thread " << t;
  }
}

//===----------------------------------------------------------------------===//
// __shfl_xor_sync
//===----------------------------------------------------------------------===//

/// Butterfly sum over groups of `width` lanes (offsets width/2 ... 1); a
/// warp past `fullWarps` uses `tailMask` and offsets below `tailWidth`.
__global__ void butterflySum(const long long *in, long long *out, int width,
                             unsigned tailMask, int tailWidth) {
  unsigned t = linearThread();
  bool tail = (t / 32 + 1) * 32 > blockDim.x * blockDim.y * blockDim.z;
  unsigned mask = tail ? tailMask : 0xffffffffu;
  int span = tail ? tailWidth : width;
  long long value = in[t];
  for (int offset = span / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(mask, value, offset, width);
  out[t] = value;
}

/// Runs butterflySum over `threads` lanes and checks each lane holds the
/// sum of its group (`tailWidth` lanes in a partial last warp).
void expectGroupSums(unsigned threads, int width, unsigned tailMask = 0,
                     int tailWidth = 0) {
  std::vector<long long> input(threads);
  for (unsigned t = 0; t < threads; ++t)
    input[t] = (long long)t * t * 3 + 1;
  DeviceArray<long long> in(input);
  DeviceArray<long long> out(threads);
  ASSERT_EQ(launch(butterflySum, dim3(1), dim3(threads), nullptr, in.get(),
                   out.get(), width, tailMask, tailWidth),
            cudaSuccess);
  std::vector<long long> result = out.download();
  for (unsigned t = 0; t < threads; ++t) {
    bool tail = (t / 32 + 1) * 32 > threads;
    unsigned group = tail ? unsigned(tailWidth) : unsigned(width);
    unsigned first = t / group * group;
    long long expected = 0;
    for (unsigned s = first; s < first + group; ++s)
      expected += input[s];
    ASSERT_EQ(result[t], expected) << "lane " << t << ", width " << width;
  }
}

TEST(EmulatorShuffleTest, ButterflySumOverFullWarpsIsTheWarpSum) {
  expectGroupSums(32, 32);
  expectGroupSums(128, 32);
}

TEST(EmulatorShuffleTest, Width16GroupsStayWithinTheirGroup) {
  expectGroupSums(64, 16);
}

TEST(EmulatorShuffleTest, Width8GroupsStayWithinTheirGroup) {
  expectGroupSums(64, 8);
}

TEST(EmulatorShuffleTest, PartialLastWarpShufflesItsOwnLanes) {
  // Second warp: lanes 32..47, mask 0xffff, a 16-lane butterfly.
  expectGroupSums(48, 32, 0xffffu, 16);
}

/// Each lane reads lane ^ laneMask within groups of `width` lanes.
__global__ void exchangeXor(const int *in, int *out, int laneMask, int width) {
  unsigned t = threadIdx.x;
  out[t] = __shfl_xor_sync(0xffffffffu, in[t], laneMask, width);
}

TEST(EmulatorShuffleTest, ALaterGroupReadsTheCallersOwnValue) {
  // CUDA: lanes may read earlier groups of `width` lanes; a source in a
  // later group returns the caller's own value.
  std::vector<int> input(32);
  for (int t = 0; t < 32; ++t)
    input[t] = 10 * t + 1;
  DeviceArray<int> in(input);
  DeviceArray<int> out(32);
  ASSERT_EQ(launch(exchangeXor, dim3(1), dim3(32), nullptr, in.get(), out.get(),
                   16, 16),
            cudaSuccess);
  std::vector<int> result = out.download();
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(result[t], t < 16 ? input[t] : input[t - 16]) << "lane " << t;
}

/// Each lane reads lane `source(t)` within groups of `width` lanes.
__global__ void exchangeIndexed(const int *in, int *out, int width) {
  unsigned t = threadIdx.x;
  // The source is per lane: here each lane names another one.
  int source = static_cast<int>((t * 7 + 3) % 32);
  out[t] = __shfl_sync(0xffffffffu, in[t], source, width);
}

TEST(EmulatorShuffleTest, IndexedShuffleReadsTheNamedLaneOfTheGroup) {
  std::vector<int> input(64);
  for (int t = 0; t < 64; ++t)
    input[t] = 10 * t + 1;
  DeviceArray<int> in(input);
  for (int width : {32, 8}) {
    DeviceArray<int> out(64);
    ASSERT_EQ(launch(exchangeIndexed, dim3(1), dim3(64), nullptr, in.get(),
                     out.get(), width),
              cudaSuccess);
    std::vector<int> result = out.download();
    for (int t = 0; t < 64; ++t) {
      // CUDA: the source lane modulo the width, in the caller's group.
      int source = (t * 7 + 3) % 32 % width + t / width * width;
      EXPECT_EQ(result[t], input[source])
          << "lane " << t << ", width " << width;
    }
  }
}

/// Lanes 0-15 and 16-31 run separate butterflies with disjoint masks.
__global__ void halfWarpSums(int *out) {
  unsigned t = threadIdx.x;
  unsigned mask = t < 16 ? 0x0000ffffu : 0xffff0000u;
  int value = static_cast<int>(t) + 1;
  for (int offset = 8; offset > 0; offset /= 2)
    value += __shfl_xor_sync(mask, value, offset);
  out[t] = value;
}

TEST(EmulatorShuffleTest, DisjointMasksOfOneWarpShuffleSeparately) {
  DeviceArray<int> out(32);
  ASSERT_EQ(launch(halfWarpSums, dim3(1), dim3(32), nullptr, out.get()),
            cudaSuccess);
  std::vector<int> result = out.download();
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(result[t], t < 16 ? 136 : 392) << "lane " << t;
}

/// Warp 0 reduces by shuffles and exits while warp 1 waits at
/// __syncthreads for it: the barrier must open once warp 0 has exited.
__global__ void warpExitsWhileOthersWait(int *out) {
  __shared__ int slots[64];
  unsigned t = threadIdx.x;
  if (t < 32) {
    int value = static_cast<int>(t);
    for (int offset = 16; offset > 0; offset /= 2)
      value += __shfl_xor_sync(0xffffffffu, value, offset);
    out[t] = value;
    return;
  }
  slots[t] = static_cast<int>(t) * 2;
  __syncthreads();
  out[t] = slots[32 + (t + 1) % 32];
}

TEST(EmulatorShuffleTest, AWarpMayExitWhileAnotherWaitsAtSyncthreads) {
  DeviceArray<int> out(64);
  ASSERT_EQ(
      launch(warpExitsWhileOthersWait, dim3(1), dim3(64), nullptr, out.get()),
      cudaSuccess);
  std::vector<int> result = out.download();
  for (int t = 0; t < 64; ++t)
    EXPECT_EQ(result[t], t < 32 ? 496 : (32 + (t + 1) % 32) * 2)
        << "thread " << t;
}

/// Swaps neighbouring lanes' values of type T.
template <typename T> __global__ void swapPairs(const T *in, T *out) {
  unsigned t = threadIdx.x;
  out[t] = __shfl_xor_sync(0xffffffffu, in[t], 1);
}

template <typename T> void expectBitExactSwap(const std::vector<T> &input) {
  ASSERT_EQ(input.size(), 32u);
  DeviceArray<T> in(input);
  DeviceArray<T> out(32);
  ASSERT_EQ(
      launch(swapPairs<T>, dim3(1), dim3(32), nullptr, in.get(), out.get()),
      cudaSuccess);
  std::vector<T> result = out.download();
  for (int t = 0; t < 32; ++t)
    EXPECT_EQ(std::memcmp(&result[t], &input[t ^ 1], sizeof(T)), 0)
        << "lane " << t;
}

TEST(EmulatorShuffleTest, FloatsDoublesAndInt64sSurviveBitExact) {
  std::vector<float> floats(32);
  std::vector<double> doubles(32);
  std::vector<int64_t> ints(32);
  for (int t = 0; t < 32; ++t) {
    floats[t] = std::ldexp(1.0f + t / 64.0f, t - 16);
    doubles[t] = std::ldexp(1.0 + t / 1e9, 900 - 60 * t);
    ints[t] = static_cast<int64_t>(0x0123456789abcdefULL * (t + 1)) *
              (t % 2 ? -1 : 1);
  }
  floats[2] = -0.0f;
  floats[5] = std::numeric_limits<float>::denorm_min();
  doubles[7] = -std::numeric_limits<double>::infinity();
  doubles[8] = std::numeric_limits<double>::denorm_min();
  ints[9] = std::numeric_limits<int64_t>::min();
  expectBitExactSwap(floats);
  expectBitExactSwap(doubles);
  expectBitExactSwap(ints);
}

//===----------------------------------------------------------------------===//
// Misuse of barriers and shuffles (death tests)
//===----------------------------------------------------------------------===//

/// In block `badBlock`, lanes 0-15 enter a full-warp shuffle and lanes
/// 16-31 __syncthreads: neither barrier can ever open. Other blocks are fine.
__global__ void shuffleAgainstBarrier(int *out, unsigned badBlock) {
  unsigned t = threadIdx.x;
  if (blockIdx.x != badBlock)
    out[t] = __shfl_xor_sync(0xffffffffu, int(t), 1);
  else if (t < 16)
    out[t] = __shfl_xor_sync(0xffffffffu, int(t), 1);
  else
    __syncthreads();
}

/// Every lane but the last shuffles with a mask naming all 32 lanes.
__global__ void shuffleNamingAnExitedLane(int *out) {
  unsigned t = threadIdx.x;
  if (t == 31)
    return;
  out[t] = __shfl_xor_sync(0xffffffffu, int(t), 1);
}

/// A full-warp mask in a block of 16 threads.
__global__ void shuffleNamingAMissingLane(int *out) {
  unsigned t = threadIdx.x;
  out[t] = __shfl_xor_sync(0xffffffffu, int(t), 1);
}

/// The caller's lane is not in its own mask.
__global__ void shuffleLeavingOutTheCaller(int *out) {
  unsigned t = threadIdx.x;
  out[t] = __shfl_xor_sync(t == 3 ? 0xfffffff7u : 0xffffffffu, int(t), 1);
}

/// Lane 0 reads lane 1, which the mask leaves out.
__global__ void shuffleReadingOutsideTheMask(int *out) {
  unsigned t = threadIdx.x;
  if (t == 0 || t >= 2)
    out[t] = __shfl_xor_sync(0xfffffffdu, int(t), 1);
}

/// A shuffle width that is not a power of two.
__global__ void shuffleWithWidth12(int *out) {
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1, 12);
}

/// A kernel that launches a kernel.
__global__ void launchFromAKernel(int *out) {
  (void)launch(shuffleWithWidth12, dim3(1), dim3(32), nullptr, out);
}

class EmulatorMisuseDeathTest : public ::testing::Test {
protected:
  void SetUp() override {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  }
  /// Host memory the misbehaving kernels may scribble on.
  int scratch[64] = {};
};

TEST_F(EmulatorMisuseDeathTest, ShuffleAgainstSyncthreadsIsADeadlock) {
  EXPECT_DEATH((void)launch(shuffleAgainstBarrier, dim3(1), dim3(32), nullptr,
                            scratch, 0u),
               "kernel deadlock in block \\(0, 0, 0\\): no barrier can "
               "open; threads wait at \\[0: a shuffle\\]");
}

TEST_F(EmulatorMisuseDeathTest, DeadlockNamesTheBlock) {
  // Blocks 0 and 1 shuffle correctly; block 2 deadlocks.
  EXPECT_DEATH((void)launch(shuffleAgainstBarrier, dim3(3), dim3(32), nullptr,
                            scratch, 2u),
               "kernel deadlock in block \\(2, 0, 0\\)");
}

TEST_F(EmulatorMisuseDeathTest, ShuffleNamingAnExitedLaneStops) {
  EXPECT_DEATH((void)launch(shuffleNamingAnExitedLane, dim3(1), dim3(32),
                            nullptr, scratch),
               "lane 31 of warp 0 exited while its warp waits in a shuffle");
}

TEST_F(EmulatorMisuseDeathTest, ShuffleNamingALaneTheBlockLacksStops) {
  EXPECT_DEATH((void)launch(shuffleNamingAMissingLane, dim3(1), dim3(16),
                            nullptr, scratch),
               "names lane 16, which the block of 16 threads does not have");
}

TEST_F(EmulatorMisuseDeathTest, ShuffleLeavingOutTheCallerStops) {
  EXPECT_DEATH((void)launch(shuffleLeavingOutTheCaller, dim3(1), dim3(32),
                            nullptr, scratch),
               "lane 3 calls with a mask that leaves it out");
}

TEST_F(EmulatorMisuseDeathTest, ShuffleReadingOutsideTheMaskStops) {
  EXPECT_DEATH((void)launch(shuffleReadingOutsideTheMask, dim3(1), dim3(32),
                            nullptr, scratch),
               "lane 0 reads lane 1, which is not in the mask");
}

TEST_F(EmulatorMisuseDeathTest, ShuffleWidthMustBeAPowerOfTwo) {
  EXPECT_DEATH(
      (void)launch(shuffleWithWidth12, dim3(1), dim3(32), nullptr, scratch),
      "width 12 is not a power of two");
}

TEST_F(EmulatorMisuseDeathTest, SyncthreadsOutsideAKernelStops) {
  EXPECT_DEATH(__syncthreads(), "__syncthreads called outside a kernel");
}

TEST_F(EmulatorMisuseDeathTest, ShuffleOutsideAKernelStops) {
  EXPECT_DEATH((void)__shfl_xor_sync(0xffffffffu, 1, 1),
               "__shfl_xor_sync called outside a kernel");
}

TEST_F(EmulatorMisuseDeathTest, LaunchInsideAKernelStops) {
  EXPECT_DEATH(
      (void)launch(launchFromAKernel, dim3(1), dim3(1), nullptr, scratch),
      "dynamic parallelism is not emulated");
}

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//

TEST(EmulatorMemoryTest, AllocationsAreAlignedAndFilledWith0xFF) {
  for (size_t bytes : {size_t(1), size_t(3), size_t(255), size_t(257),
                       size_t(4096), size_t(10000)}) {
    void *pointer = nullptr;
    ASSERT_EQ(cudaMalloc(&pointer, bytes), cudaSuccess);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pointer) % 256, 0u)
        << bytes << " bytes";
    std::vector<unsigned char> host(bytes, 0);
    ASSERT_EQ(cudaMemcpy(host.data(), pointer, bytes, cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(host[i], 0xFF) << "byte " << i << " of " << bytes;
    EXPECT_EQ(cudaFree(pointer), cudaSuccess);
  }
  // Unwritten memory reads as NaN, so a kernel reading it shows up.
  DeviceArray<float> floats(4);
  DeviceArray<double> doubles(4);
  EXPECT_TRUE(std::isnan(floats.download()[3]));
  EXPECT_TRUE(std::isnan(doubles.download()[3]));
}

TEST(EmulatorMemoryTest, ZeroByteAllocationIsNull) {
  void *pointer = reinterpret_cast<void *>(0x1);
  EXPECT_EQ(cudaMalloc(&pointer, 0), cudaSuccess);
  EXPECT_EQ(pointer, nullptr);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
}

TEST(EmulatorMemoryTest, EveryCopyKindMovesTheBytes) {
  std::vector<int> source = {1, 2, 3, 4, 5, 6, 7, 8};
  size_t bytes = source.size() * sizeof(int);
  DeviceArray<int> a(source.size()), b(source.size());
  std::vector<int> host(source.size(), 0), back(source.size(), 0);

  ASSERT_EQ(cudaMemcpy(host.data(), source.data(), bytes, cudaMemcpyHostToHost),
            cudaSuccess);
  EXPECT_EQ(host, source);
  ASSERT_EQ(cudaMemcpy(a.get(), source.data(), bytes, cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), b.get(), bytes, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(back, source);

  // cudaMemcpyDefault infers each side, and async copies on the default
  // stream run at once.
  std::vector<int> other = {8, 7, 6, 5, 4, 3, 2, 1};
  ASSERT_EQ(cudaMemcpyAsync(a.get(), other.data(), bytes, cudaMemcpyDefault),
            cudaSuccess);
  std::vector<int> viaDefault(other.size(), 0);
  ASSERT_EQ(cudaMemcpy(viaDefault.data(), a.get(), bytes, cudaMemcpyDefault),
            cudaSuccess);
  EXPECT_EQ(viaDefault, other);
}

TEST(EmulatorMemoryTest, WrongDirectionsFailAndLeaveTheDestination) {
  DeviceArray<int> a(std::vector<int>{1, 2, 3, 4});
  DeviceArray<int> b(std::vector<int>{5, 6, 7, 8});
  std::vector<int> host = {9, 9, 9, 9};
  size_t bytes = 4 * sizeof(int);
  clearLastError();

  // HostToDevice whose source is device memory.
  EXPECT_EQ(cudaMemcpy(a.get(), b.get(), bytes, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(a.download(), (std::vector<int>{1, 2, 3, 4}));

  // DeviceToHost whose source is host memory.
  std::vector<int> other = {0, 0, 0, 0};
  EXPECT_EQ(
      cudaMemcpy(host.data(), other.data(), bytes, cudaMemcpyDeviceToHost),
      cudaErrorInvalidValue);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(host, (std::vector<int>{9, 9, 9, 9}));

  // DeviceToHost whose destination is device memory.
  EXPECT_EQ(cudaMemcpy(b.get(), a.get(), bytes, cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  EXPECT_EQ(b.download(), (std::vector<int>{5, 6, 7, 8}));

  // DeviceToDevice with a host side.
  EXPECT_EQ(cudaMemcpy(a.get(), host.data(), bytes, cudaMemcpyDeviceToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(a.download(), (std::vector<int>{1, 2, 3, 4}));

  // HostToHost with a device side.
  EXPECT_EQ(cudaMemcpy(host.data(), a.get(), bytes, cudaMemcpyHostToHost),
            cudaErrorInvalidValue);
  EXPECT_EQ(host, (std::vector<int>{9, 9, 9, 9}));

  // A kind that is none of the five.
  EXPECT_EQ(
      cudaMemcpy(host.data(), a.get(), bytes, static_cast<cudaMemcpyKind>(7)),
      cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(host, (std::vector<int>{9, 9, 9, 9}));
  clearLastError();
}

TEST(EmulatorMemoryTest, CopiesPastTheEndOfAnAllocationFail) {
  // 100 bytes requested: the allocation ends there, not at the 256 bytes
  // the emulator rounds up to.
  void *device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 100), cudaSuccess);
  std::vector<unsigned char> host(200, 0x11);
  ASSERT_EQ(cudaMemcpy(device, host.data(), 100, cudaMemcpyHostToDevice),
            cudaSuccess);
  clearLastError();

  std::vector<unsigned char> out(200, 0x22);
  EXPECT_EQ(cudaMemcpy(out.data(), device, 101, cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  EXPECT_EQ(out, std::vector<unsigned char>(200, 0x22));
  EXPECT_EQ(cudaMemcpy(out.data(), static_cast<char *>(device) + 60, 41,
                       cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  EXPECT_EQ(out, std::vector<unsigned char>(200, 0x22));

  std::vector<unsigned char> fresh(200, 0x33);
  EXPECT_EQ(cudaMemcpy(static_cast<char *>(device) + 50, fresh.data(), 51,
                       cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(device, fresh.data(), 101, cudaMemcpyDefault),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);

  // The exact end is fine, and nothing above was written.
  ASSERT_EQ(cudaMemcpy(out.data(), device, 100, cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (size_t i = 0; i < 100; ++i)
    ASSERT_EQ(out[i], 0x11) << "byte " << i;
  EXPECT_EQ(cudaFree(device), cudaSuccess);
}

TEST(EmulatorMemoryTest, FreeingWhatIsNotAnAllocationFails) {
  clearLastError();
  int onHost = 0;
  EXPECT_EQ(cudaFree(&onHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);

  void *device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 64), cudaSuccess);
  EXPECT_EQ(cudaFree(static_cast<char *>(device) + 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
  // Freed memory is no longer device memory: a second free or a copy fails.
  EXPECT_EQ(cudaFree(device), cudaErrorInvalidValue);
  char byte = 0;
  EXPECT_EQ(cudaMemcpy(&byte, device, 1, cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  clearLastError();
}

TEST(EmulatorMemoryTest, AsyncAllocationsFollowTheirStream) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  void *device = nullptr;
  ASSERT_EQ(cudaMallocAsync(&device, 512, stream), cudaSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(device) % 256, 0u);
  EXPECT_EQ(cudaMemsetAsync(device, 0, 512, stream), cudaSuccess);
  EXPECT_EQ(cudaFreeAsync(device, stream), cudaSuccess);
  EXPECT_EQ(cudaFreeAsync(device, stream), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  clearLastError();
}

TEST(EmulatorMemoryTest, DefaultPoolTakesAReleaseThresholdOnly) {
  clearLastError();
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  EXPECT_NE(pool, nullptr);
  uint64_t threshold = UINT64_MAX;
  EXPECT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
                                    &threshold),
            cudaSuccess);
  EXPECT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold,
                                    nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPoolSetAttribute(nullptr, cudaMemPoolAttrReleaseThreshold,
                                    &threshold),
            cudaErrorInvalidValue);
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, count), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaDeviceGetDefaultMemPool(nullptr, 0), cudaErrorInvalidValue);
  clearLastError();
}

TEST(EmulatorMemoryTest, Memcpy2DHonoursBothPitches) {
  // A 5 x 6 int matrix with a host pitch of 10 ints, to a device pitch of 8
  // ints, and back to a host pitch of 7 ints.
  const size_t rows = 5, cols = 6;
  const size_t hostPitch = 10, devicePitch = 8, backPitch = 7;
  std::vector<int> source(rows * hostPitch);
  for (size_t i = 0; i < source.size(); ++i)
    source[i] = static_cast<int>(i);
  DeviceArray<int> device(std::vector<int>(rows * devicePitch, -7));
  ASSERT_EQ(cudaMemcpy2DAsync(device.get(), devicePitch * sizeof(int),
                              source.data(), hostPitch * sizeof(int),
                              cols * sizeof(int), rows, cudaMemcpyHostToDevice),
            cudaSuccess);
  std::vector<int> onDevice = device.download();
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < devicePitch; ++c)
      ASSERT_EQ(onDevice[r * devicePitch + c],
                c < cols ? source[r * hostPitch + c] : -7)
          << "row " << r << " column " << c;

  std::vector<int> back(rows * backPitch, -9);
  ASSERT_EQ(cudaMemcpy2DAsync(back.data(), backPitch * sizeof(int),
                              device.get(), devicePitch * sizeof(int),
                              cols * sizeof(int), rows, cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < backPitch; ++c)
      ASSERT_EQ(back[r * backPitch + c],
                c < cols ? source[r * hostPitch + c] : -9)
          << "row " << r << " column " << c;
}

TEST(EmulatorMemoryTest, Memcpy2DChecksRowsAndSpans) {
  DeviceArray<int> device(std::vector<int>(16, 5));
  std::vector<int> host(64, 1);
  clearLastError();
  // A row wider than the pitch.
  EXPECT_EQ(cudaMemcpy2DAsync(device.get(), 4 * sizeof(int), host.data(),
                              8 * sizeof(int), 5 * sizeof(int), 2,
                              cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  // 4 rows at a pitch of 5 ints span 19 ints of a 16-int allocation.
  EXPECT_EQ(cudaMemcpy2DAsync(device.get(), 5 * sizeof(int), host.data(),
                              5 * sizeof(int), 4 * sizeof(int), 4,
                              cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  // The wrong direction.
  EXPECT_EQ(cudaMemcpy2DAsync(host.data(), 4 * sizeof(int), device.get(),
                              4 * sizeof(int), 4 * sizeof(int), 2,
                              cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(device.download(), std::vector<int>(16, 5));
  EXPECT_EQ(host, std::vector<int>(64, 1));
}

TEST(EmulatorMemoryTest, MemsetWritesExactlyItsRange) {
  DeviceArray<unsigned char> device(std::vector<unsigned char>(64, 0x00));
  ASSERT_EQ(cudaMemset(device.get() + 8, 0x5A, 16), cudaSuccess);
  std::vector<unsigned char> bytes = device.download();
  for (size_t i = 0; i < bytes.size(); ++i)
    ASSERT_EQ(bytes[i], i >= 8 && i < 24 ? 0x5A : 0x00) << "byte " << i;

  clearLastError();
  EXPECT_EQ(cudaMemset(device.get() + 60, 0x77, 5), cudaErrorInvalidValue);
  std::vector<unsigned char> host(8, 0);
  EXPECT_EQ(cudaMemset(host.data(), 0x77, 8), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(host, std::vector<unsigned char>(8, 0));
  EXPECT_EQ(device.download()[60], 0x00);
}

//===----------------------------------------------------------------------===//
// Streams, events and devices
//===----------------------------------------------------------------------===//

__global__ void setOne(int *out) { *out = 1; }

TEST(EmulatorStreamTest, StreamsAndEventsWorkUntilDestroyed) {
  cudaStream_t stream = nullptr, nonBlocking = nullptr;
  cudaEvent_t event = nullptr, untimed = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking),
            cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&event), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming),
            cudaSuccess);
  EXPECT_NE(stream, nonBlocking);

  DeviceArray<int> flag(std::vector<int>{0});
  EXPECT_EQ(launch(setOne, dim3(1), dim3(1), stream, flag.get()), cudaSuccess);
  EXPECT_EQ(flag.download()[0], 1);
  EXPECT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(nonBlocking, event), cudaSuccess);
  EXPECT_EQ(cudaEventSynchronize(event), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  // Destroy everything first: a handle created afterwards could reuse a
  // destroyed one's address.
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(nonBlocking), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(untimed), cudaSuccess);
  clearLastError();

  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaErrorInvalidResourceHandle);
  int value = 0;
  EXPECT_EQ(cudaMemcpyAsync(flag.get(), &value, sizeof(int),
                            cudaMemcpyHostToDevice, stream),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaMemsetAsync(flag.get(), 0, sizeof(int), stream),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(launch(setOne, dim3(1), dim3(1), nonBlocking, flag.get()),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(flag.download()[0], 1) << "work on a destroyed stream ran";
  EXPECT_EQ(cudaEventRecord(event, nullptr), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventSynchronize(event), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamWaitEvent(nullptr, event),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventDestroy(event), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamDestroy(nullptr), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
}

TEST(EmulatorStreamTest, InvalidFlagsAreRejected) {
  cudaStream_t stream = nullptr;
  clearLastError();
  EXPECT_EQ(cudaStreamCreateWithFlags(&stream, 0x10), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamCreate(nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaEventCreate(nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST(EmulatorStreamTest, ErrorsHaveTheToolkitsNames) {
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidConfiguration),
               "cudaErrorInvalidConfiguration");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidResourceHandle),
               "cudaErrorInvalidResourceHandle");
}

class EmulatorDeviceDeathTest : public ::testing::Test {
protected:
  void SetUp() override {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  }
};

/// Exits 0 when the device count is `expected` and exactly devices
/// [0, expected) can be selected. The count is read once per process, so
/// each case runs in a fresh one (a threadsafe death test re-executes the
/// binary).
[[noreturn]] void exitWithDeviceCheck(const char *environment, int expected) {
  if (environment)
    setenv("LOOM_CUDA_EMULATOR_DEVICES", environment, /*overwrite=*/1);
  else
    unsetenv("LOOM_CUDA_EMULATOR_DEVICES");
  int count = -1, current = -1;
  cudaError_t status = cudaGetDeviceCount(&count);
  bool ok = count == expected &&
            status == (expected ? cudaSuccess : cudaErrorNoDevice) &&
            cudaSetDevice(expected) == cudaErrorInvalidDevice &&
            cudaSetDevice(-1) == cudaErrorInvalidDevice;
  if (expected > 0)
    ok = ok && cudaSetDevice(expected - 1) == cudaSuccess &&
         cudaGetDevice(&current) == cudaSuccess && current == expected - 1;
  std::exit(ok ? 0 : 1);
}

TEST_F(EmulatorDeviceDeathTest, DefaultIsEightDevices) {
  EXPECT_EXIT(exitWithDeviceCheck(nullptr, 8), ::testing::ExitedWithCode(0),
              "");
}

TEST_F(EmulatorDeviceDeathTest, EnvironmentSetsTheDeviceCount) {
  EXPECT_EXIT(exitWithDeviceCheck("3", 3), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(exitWithDeviceCheck("0", 0), ::testing::ExitedWithCode(0), "");
}

TEST_F(EmulatorDeviceDeathTest, MalformedDeviceCountStops) {
  EXPECT_DEATH(exitWithDeviceCheck("four", 4),
               "LOOM_CUDA_EMULATOR_DEVICES must be a device count in "
               "\\[0, 1024\\], not 'four'");
}

//===----------------------------------------------------------------------===//
// cuBLAS
//===----------------------------------------------------------------------===//

template <typename T> struct BlasTypes;
template <> struct BlasTypes<float> {
  static constexpr cudaDataType_t data = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};
template <> struct BlasTypes<double> {
  static constexpr cudaDataType_t data = CUDA_R_64F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
};

/// One strided-batched GEMM problem in cuBLAS's column-major terms.
struct GemmShape {
  cublasOperation_t transa, transb;
  int m, n, k;
  int lda, ldb, ldc;
  long long strideA, strideB, strideC;
  int batches;

  long long aRows() const { return transa == CUBLAS_OP_N ? m : k; }
  long long aCols() const { return transa == CUBLAS_OP_N ? k : m; }
  long long bRows() const { return transb == CUBLAS_OP_N ? k : n; }
  long long bCols() const { return transb == CUBLAS_OP_N ? n : k; }
  /// Elements an operand needs over all batches.
  static size_t extent(long long ld, long long cols, long long stride,
                       int batches) {
    return size_t(stride * (batches - 1) + ld * cols);
  }
};

/// C[b] = alpha op(A[b]) op(B[b]) + beta C[b], one multiply-add at a time.
template <typename T>
std::vector<T> referenceGemm(const GemmShape &s, T alpha,
                             const std::vector<T> &a, const std::vector<T> &b,
                             T beta, std::vector<T> c) {
  for (int batch = 0; batch < s.batches; ++batch) {
    const T *A = a.data() + batch * s.strideA;
    const T *B = b.data() + batch * s.strideB;
    T *C = c.data() + batch * s.strideC;
    for (int j = 0; j < s.n; ++j)
      for (int i = 0; i < s.m; ++i) {
        T sum = 0;
        for (int p = 0; p < s.k; ++p) {
          T x = s.transa == CUBLAS_OP_N ? A[i + p * s.lda] : A[p + i * s.lda];
          T y = s.transb == CUBLAS_OP_N ? B[p + j * s.ldb] : B[j + p * s.ldb];
          sum += x * y;
        }
        T &out = C[i + j * s.ldc];
        out = alpha * sum + (beta == T(0) ? T(0) : beta * out);
      }
  }
  return c;
}

/// Values with few significant bits, so both sides round the same way.
template <typename T> std::vector<T> patterned(size_t size, int seed) {
  std::vector<T> values(size);
  for (size_t i = 0; i < size; ++i)
    values[i] = T(int((i * 37 + seed * 11) % 17) - 8) / T(4);
  return values;
}

/// Runs one GEMM on the emulator and compares every element of C (padding
/// included, which must keep its value) with the reference.
template <typename T>
void expectGemmMatchesReference(const GemmShape &s, T alpha, T beta,
                                bool uninitializedC = false) {
  std::vector<T> a = patterned<T>(
      GemmShape::extent(s.lda, s.aCols(), s.strideA, s.batches), 1);
  std::vector<T> b = patterned<T>(
      GemmShape::extent(s.ldb, s.bCols(), s.strideB, s.batches), 2);
  std::vector<T> c =
      patterned<T>(GemmShape::extent(s.ldc, s.n, s.strideC, s.batches), 3);
  DeviceArray<T> dA(a), dB(b), dC(c.size());
  if (uninitializedC)
    c.assign(c.size(), std::numeric_limits<T>::quiet_NaN());
  else
    dC.upload(c);
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasGemmStridedBatchedEx(
                handle, s.transa, s.transb, s.m, s.n, s.k, &alpha, dA.get(),
                BlasTypes<T>::data, s.lda, s.strideA, dB.get(),
                BlasTypes<T>::data, s.ldb, s.strideB, &beta, dC.get(),
                BlasTypes<T>::data, s.ldc, s.strideC, s.batches,
                BlasTypes<T>::compute, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  std::vector<T> expected = referenceGemm(s, alpha, a, b, beta, c);
  std::vector<T> actual = dC.download();
  T tolerance = std::numeric_limits<T>::epsilon() * 64;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(expected[i])) {
      ASSERT_TRUE(std::isnan(actual[i])) << "C padding element " << i;
      continue;
    }
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1 + std::abs(expected[i])))
        << "C element " << i << " (transa " << s.transa << ", transb "
        << s.transb << ")";
  }
}

/// A non-square problem with padded leading dimensions and gaps between
/// batches; `strideB` 0 broadcasts B over the batches.
GemmShape paddedShape(cublasOperation_t transa, cublasOperation_t transb,
                      bool broadcastB) {
  GemmShape s{transa, transb, 5, 3, 4, 0, 0, 0, 0, 0, 0, 3};
  s.lda = int(s.aRows()) + 2;
  s.ldb = int(s.bRows()) + 1;
  s.ldc = s.m + 3;
  s.strideA = s.lda * s.aCols() + 7;
  s.strideB = broadcastB ? 0 : s.ldb * s.bCols() + 5;
  s.strideC = s.ldc * s.n + 4;
  return s;
}

template <typename T> class EmulatorBlasTest : public ::testing::Test {};
using BlasElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(EmulatorBlasTest, BlasElementTypes);

TYPED_TEST(EmulatorBlasTest, AllTransposesMatchTheColumnMajorReference) {
  for (cublasOperation_t transa : {CUBLAS_OP_N, CUBLAS_OP_T})
    for (cublasOperation_t transb : {CUBLAS_OP_N, CUBLAS_OP_T}) {
      SCOPED_TRACE(testing::Message()
                   << "transa " << transa << ", transb " << transb);
      expectGemmMatchesReference<TypeParam>(
          paddedShape(transa, transb, /*broadcastB=*/false), TypeParam(1.5),
          TypeParam(-0.5));
    }
}

TYPED_TEST(EmulatorBlasTest, StrideZeroBroadcastsAnOperand) {
  for (cublasOperation_t transa : {CUBLAS_OP_N, CUBLAS_OP_T})
    expectGemmMatchesReference<TypeParam>(
        paddedShape(transa, CUBLAS_OP_T, /*broadcastB=*/true), TypeParam(2),
        TypeParam(0.25));
  GemmShape broadcastA = paddedShape(CUBLAS_OP_N, CUBLAS_OP_N, false);
  broadcastA.strideA = 0;
  expectGemmMatchesReference<TypeParam>(broadcastA, TypeParam(-1),
                                        TypeParam(1));
}

TYPED_TEST(EmulatorBlasTest, ConjugateTransposeOfRealsIsTranspose) {
  expectGemmMatchesReference<TypeParam>(
      paddedShape(CUBLAS_OP_C, CUBLAS_OP_C, false), TypeParam(1),
      TypeParam(0.5));
}

TYPED_TEST(EmulatorBlasTest, BetaZeroIgnoresUninitializedC) {
  // Fresh device memory is NaN; with beta 0 cuBLAS does not read C.
  expectGemmMatchesReference<TypeParam>(
      paddedShape(CUBLAS_OP_T, CUBLAS_OP_N, false), TypeParam(0.75),
      TypeParam(0), /*uninitializedC=*/true);
}

TYPED_TEST(EmulatorBlasTest, EmptyInnerDimensionScalesC) {
  GemmShape s{CUBLAS_OP_N, CUBLAS_OP_N, 4, 3, 0, 4, 1, 6, 0, 0, 20, 2};
  expectGemmMatchesReference<TypeParam>(s, TypeParam(3), TypeParam(-2));
}

/// A bf16 or f16 GEMM output type and its values, written here without the
/// emulator's bit manipulations so the two cannot share a mistake.
struct SixteenBitType {
  cudaDataType_t type;
  bool isBF16() const { return type == CUDA_R_16BF; }

  /// The value of a finite or infinite pattern (no NaN is used here).
  double value(uint16_t bits) const {
    double sign = bits & 0x8000u ? -1.0 : 1.0;
    int fractionBits = isBF16() ? 7 : 10, bias = isBF16() ? 127 : 15;
    int exponent = (bits & 0x7fffu) >> fractionBits;
    int fraction = bits & ((1 << fractionBits) - 1);
    if (exponent == (isBF16() ? 0xff : 0x1f))
      return sign * std::numeric_limits<double>::infinity();
    if (exponent == 0)
      return sign * std::ldexp(fraction, 1 - bias - fractionBits);
    return sign * std::ldexp(fraction + (1 << fractionBits),
                             exponent - bias - fractionBits);
  }

  /// The nearest finite pattern to `x` by exhaustive search, ties to the
  /// even pattern: IEEE round to nearest even for values in range.
  uint16_t nearest(double x) const {
    uint16_t best = 0;
    double bestDistance = std::numeric_limits<double>::infinity();
    for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
      double v = value(static_cast<uint16_t>(bits));
      if (std::isinf(v))
        continue;
      double distance = std::abs(v - x);
      if (distance < bestDistance ||
          (distance == bestDistance && (bits & 1u) == 0 && (best & 1u))) {
        best = static_cast<uint16_t>(bits);
        bestDistance = distance;
      }
    }
    return best;
  }

  /// Patterns of small multiples of 1/8 (exact in both types) plus, per
  /// element, a fraction bf16 and f16 hold at 1..2 (k / 128).
  std::vector<uint16_t> patterned(size_t size, int seed) const {
    std::vector<uint16_t> bits(size);
    for (size_t i = 0; i < size; ++i) {
      double x = (int((i * 37 + seed * 11) % 17) - 8) / 8.0 +
                 int((i * 13 + seed) % 128) / 128.0;
      bits[i] = nearest(x);
      EXPECT_EQ(value(bits[i]), x) << "input values must be exact";
    }
    return bits;
  }
};

/// One 16-bit-output GEMM on the emulator against the same GEMM with an f32
/// output (the reference sum, which the emulator's 16-bit-input path has
/// always computed as the host does) rounded once by `nearest`, bit for bit;
/// C's padding keeps its bits.
void expectSixteenBitGemmIsTheRoundedF32Gemm(SixteenBitType t,
                                             const GemmShape &s, float alpha,
                                             float beta) {
  std::vector<uint16_t> a =
      t.patterned(GemmShape::extent(s.lda, s.aCols(), s.strideA, s.batches), 1);
  std::vector<uint16_t> b =
      t.patterned(GemmShape::extent(s.ldb, s.bCols(), s.strideB, s.batches), 2);
  std::vector<uint16_t> c =
      t.patterned(GemmShape::extent(s.ldc, s.n, s.strideC, s.batches), 3);
  std::vector<float> cWide(c.size());
  for (size_t i = 0; i < c.size(); ++i)
    cWide[i] = static_cast<float>(t.value(c[i]));
  DeviceArray<uint16_t> dA(a), dB(b), dC(c);
  DeviceArray<float> dCWide(cWide);
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  for (auto [output, target] :
       {std::pair<cudaDataType_t, void *>{t.type, dC.get()},
        {CUDA_R_32F, dCWide.get()}})
    ASSERT_EQ(cublasGemmStridedBatchedEx(
                  handle, s.transa, s.transb, s.m, s.n, s.k, &alpha, dA.get(),
                  t.type, s.lda, s.strideA, dB.get(), t.type, s.ldb, s.strideB,
                  &beta, target, output, s.ldc, s.strideC, s.batches,
                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  std::vector<uint16_t> actual = dC.download();
  std::vector<float> sums = dCWide.download();
  size_t rounded = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    uint16_t expected = sums[i] == cWide[i] ? c[i] : t.nearest(sums[i]);
    rounded += t.value(expected) != sums[i];
    ASSERT_EQ(actual[i], expected)
        << "C element " << i << ": f32 sum " << sums[i] << " (transa "
        << s.transa << ", transb " << s.transb << ")";
  }
  EXPECT_GT(rounded, 0u) << "no result needed rounding: a weak test";
}

class EmulatorSixteenBitOutputTest
    : public ::testing::TestWithParam<cudaDataType_t> {};
INSTANTIATE_TEST_SUITE_P(BF16AndF16, EmulatorSixteenBitOutputTest,
                         ::testing::Values(CUDA_R_16BF, CUDA_R_16F));

TEST_P(EmulatorSixteenBitOutputTest, ResultIsTheF32UpdateRoundedOnce) {
  for (cublasOperation_t transa : {CUBLAS_OP_N, CUBLAS_OP_T})
    for (cublasOperation_t transb : {CUBLAS_OP_N, CUBLAS_OP_T})
      expectSixteenBitGemmIsTheRoundedF32Gemm(
          {GetParam()}, paddedShape(transa, transb, /*broadcastB=*/false), 1.5f,
          -0.5f);
  expectSixteenBitGemmIsTheRoundedF32Gemm(
      {GetParam()}, paddedShape(CUBLAS_OP_N, CUBLAS_OP_T, /*broadcastB=*/true),
      1.0f, 0.0f);
}

TEST_P(EmulatorSixteenBitOutputTest, TiesRoundToTheEvenNeighbour) {
  // [1, 1] . [1, t] = 1 + t. With t half the output's spacing at 1 (2^-8 in
  // bf16, 2^-11 in f16) the sum lies halfway between 1 (even) and the next
  // value (odd): 1. With t three halves of it, halfway between that odd
  // value and the even one above: the even one. Truncation or rounding
  // half up gets one of the two wrong.
  SixteenBitType t{GetParam()};
  double half = t.isBF16() ? 0x1p-8 : 0x1p-11;
  DeviceArray<uint16_t> a(std::vector<uint16_t>{t.nearest(1), t.nearest(1)});
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  for (auto [tail, expected] :
       {std::pair<double, double>{half, 1.0}, {3 * half, 1.0 + 4 * half}}) {
    DeviceArray<uint16_t> b(
        std::vector<uint16_t>{t.nearest(1), t.nearest(tail)});
    DeviceArray<uint16_t> c(1);
    float alpha = 1, beta = 0; // beta 0: C's initial NaN fill is not read.
    ASSERT_EQ(cublasGemmStridedBatchedEx(
                  handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 2, &alpha, a.get(),
                  t.type, 1, 0, b.get(), t.type, 2, 0, &beta, c.get(), t.type,
                  1, 0, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(t.value(c.download()[0]), expected) << "1 + " << tail;
  }
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
}

/// Fixed operands for the argument checks: 4 x 4 f32 matrices.
class EmulatorBlasArgumentsTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
    // C is written only by a call that succeeds.
    EXPECT_EQ(c.download(), std::vector<float>(16, 7.0f));
  }
  /// A 4 x 4 x 4 product with the given overrides.
  cublasStatus_t gemm(int m, int n, int k, int lda, int ldb, int ldc,
                      cudaDataType_t atype = CUDA_R_32F,
                      cudaDataType_t btype = CUDA_R_32F,
                      cudaDataType_t ctype = CUDA_R_32F,
                      cublasComputeType_t compute = CUBLAS_COMPUTE_32F,
                      const void *aPointer = nullptr,
                      cublasOperation_t transa = CUBLAS_OP_N, int batches = 1,
                      long long strideC = 16) {
    return cublasGemmStridedBatchedEx(handle, transa, CUBLAS_OP_N, m, n, k,
                                      &alpha, aPointer ? aPointer : a.get(),
                                      atype, lda, 16, b.get(), btype, ldb, 16,
                                      &beta, c.get(), ctype, ldc, strideC,
                                      batches, compute, CUBLAS_GEMM_DEFAULT);
  }

  cublasHandle_t handle = nullptr;
  float alpha = 1, beta = 0;
  DeviceArray<float> a{std::vector<float>(16, 1.0f)};
  DeviceArray<float> b{std::vector<float>(16, 2.0f)};
  DeviceArray<float> c{std::vector<float>(16, 7.0f)};
};

TEST_F(EmulatorBlasArgumentsTest, LeadingDimensionsTooSmallAreInvalid) {
  EXPECT_EQ(gemm(4, 4, 4, 3, 4, 4), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gemm(4, 4, 4, 4, 3, 4), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 3), CUBLAS_STATUS_INVALID_VALUE);
  // Transposed, A is stored k x m: lda must cover k = 2, not m = 4.
  EXPECT_EQ(gemm(4, 2, 2, 1, 4, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                 CUBLAS_COMPUTE_32F, nullptr, CUBLAS_OP_T),
            CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(EmulatorBlasArgumentsTest, NegativeSizesAreInvalid) {
  EXPECT_EQ(gemm(-1, 4, 4, 4, 4, 4), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gemm(4, -1, 4, 4, 4, 4), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gemm(4, 4, -1, 4, 4, 4), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                 CUBLAS_COMPUTE_32F, nullptr, CUBLAS_OP_N, /*batches=*/-1),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                 CUBLAS_COMPUTE_32F, nullptr,
                 static_cast<cublasOperation_t>(5)),
            CUBLAS_STATUS_INVALID_VALUE);
}

TEST_F(EmulatorBlasArgumentsTest, MismatchedOrUnsupportedTypesAreNotSupported) {
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_64F),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_64F),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                 CUBLAS_COMPUTE_64F),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                 CUBLAS_COMPUTE_16F),
            CUBLAS_STATUS_NOT_SUPPORTED);
  // A 16-bit output is the inputs' type, summed in f32.
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_16F, CUDA_R_16F, CUDA_R_16BF,
                 CUBLAS_COMPUTE_32F),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF,
                 CUBLAS_COMPUTE_16F),
            CUBLAS_STATUS_NOT_SUPPORTED);
}

TEST_F(EmulatorBlasArgumentsTest, HostOperandFailsToExecute) {
  std::vector<float> onHost(16, 1.0f);
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                 CUBLAS_COMPUTE_32F, onHost.data()),
            CUBLAS_STATUS_EXECUTION_FAILED);
}

TEST_F(EmulatorBlasArgumentsTest, BatchesPastTheAllocationFailToExecute) {
  // Two batches at a stride of 16 need 32 elements; A, B and C hold 16.
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                 CUBLAS_COMPUTE_32F, nullptr, CUBLAS_OP_N, /*batches=*/2),
            CUBLAS_STATUS_EXECUTION_FAILED);
}

TEST_F(EmulatorBlasArgumentsTest, NullHandleIsNotInitialized) {
  cublasHandle_t real = handle;
  handle = nullptr;
  EXPECT_EQ(gemm(4, 4, 4, 4, 4, 4), CUBLAS_STATUS_NOT_INITIALIZED);
  handle = real;
}

TEST_F(EmulatorBlasArgumentsTest, StreamsMustBeLive) {
  cudaStream_t stream = nullptr, got = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasGetStream(handle, &got), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, stream);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_INVALID_VALUE);
  clearLastError();
}

//===----------------------------------------------------------------------===//
// NCCL over MPI, one rank
//===----------------------------------------------------------------------===//

TEST(EmulatorNcclTest, CommunicatorsNeedMPIAndAValidRank) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 2, id, 2), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRank(&comm, 2, id, -1), ncclInvalidArgument);
  // This process never initializes MPI (the MPI cases run in children).
  EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclInvalidUsage);
  EXPECT_NE(std::strstr(ncclGetLastError(nullptr), "not initialized"), nullptr);
  EXPECT_EQ(comm, nullptr);
}

/// Stops the child process with `what` on stderr unless `ok`.
void require(bool ok, const char *what) {
  if (ok)
    return;
  std::fprintf(stderr, "check failed: %s\n", what);
  std::exit(1);
}

/// One rank's collectives over a singleton MPI job; exits 0 when every
/// check holds.
[[noreturn]] void exitWithOneRankCollectives(const std::string &session) {
  setenv("OMPI_MCA_orte_tmpdir_base", session.c_str(), /*overwrite=*/1);
  setenv("PRTE_MCA_prte_tmpdir_base", session.c_str(), /*overwrite=*/1);
  require(MPI_Init(nullptr, nullptr) == MPI_SUCCESS, "MPI_Init");
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  require(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
  require(ncclCommInitRank(&comm, 2, id, 0) == ncclInvalidUsage,
          "a 2-rank communicator of 1 process is refused");
  require(ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess, "ncclCommInitRank");
  int count = 0, rank = -1;
  require(ncclCommCount(comm, &count) == ncclSuccess && count == 1,
          "ncclCommCount");
  require(ncclCommUserRank(comm, &rank) == ncclSuccess && rank == 0,
          "ncclCommUserRank");

  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 4.0f};
  const size_t bytes = values.size() * sizeof(float);
  float *send = nullptr, *recv = nullptr;
  require(cudaMalloc(reinterpret_cast<void **>(&send), bytes) == cudaSuccess &&
              cudaMalloc(reinterpret_cast<void **>(&recv), bytes) ==
                  cudaSuccess,
          "cudaMalloc");
  require(cudaMemcpy(send, values.data(), bytes, cudaMemcpyHostToDevice) ==
              cudaSuccess,
          "upload");
  auto received = [&](const float *device) {
    std::vector<float> host(values.size(), 0.0f);
    require(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost) ==
                cudaSuccess,
            "download");
    return host;
  };
  auto clear = [&] {
    require(cudaMemset(recv, 0, bytes) == cudaSuccess, "cudaMemset");
  };

  // On one rank every collective is a copy (an average divides by 1).
  clear();
  require(ncclAllReduce(send, recv, 4, ncclFloat32, ncclSum, comm, nullptr) ==
                  ncclSuccess &&
              received(recv) == values,
          "ncclAllReduce sum");
  clear();
  require(ncclAllReduce(send, recv, 4, ncclFloat32, ncclAvg, comm, nullptr) ==
                  ncclSuccess &&
              received(recv) == values,
          "ncclAllReduce avg");
  clear();
  require(ncclAllGather(send, recv, 4, ncclFloat32, comm, nullptr) ==
                  ncclSuccess &&
              received(recv) == values,
          "ncclAllGather");
  clear();
  require(ncclReduceScatter(send, recv, 4, ncclFloat32, ncclMax, comm,
                            nullptr) == ncclSuccess &&
              received(recv) == values,
          "ncclReduceScatter");
  clear();
  require(ncclBroadcast(send, recv, 4, ncclFloat32, 0, comm, nullptr) ==
                  ncclSuccess &&
              received(recv) == values,
          "ncclBroadcast");
  clear();
  require(ncclGroupStart() == ncclSuccess &&
              ncclSend(send, 4, ncclFloat32, 0, comm, nullptr) == ncclSuccess &&
              ncclRecv(recv, 4, ncclFloat32, 0, comm, nullptr) == ncclSuccess &&
              ncclGroupEnd() == ncclSuccess && received(recv) == values,
          "a grouped send and receive to self");

  // Host buffers, buffers too short, absent peers and types not emulated
  // are invalid arguments, and leave the receive buffer alone.
  clear();
  std::vector<float> host(values);
  require(ncclAllReduce(host.data(), recv, 4, ncclFloat32, ncclSum, comm,
                        nullptr) == ncclInvalidArgument,
          "a host send buffer");
  require(std::strstr(ncclGetLastError(comm),
                      "is not inside one device allocation") != nullptr,
          "ncclGetLastError names the buffer");
  require(ncclAllReduce(send, recv, 5, ncclFloat32, ncclSum, comm, nullptr) ==
              ncclInvalidArgument,
          "a count past the end of the buffers");
  require(ncclBroadcast(send, recv, 4, ncclFloat32, 1, comm, nullptr) ==
              ncclInvalidArgument,
          "a root outside the communicator");
  require(ncclAllReduce(send, recv, 4, ncclFloat16, ncclSum, comm, nullptr) ==
              ncclInvalidArgument,
          "a data type that is not emulated");
  require(received(recv) == std::vector<float>(4, 0.0f),
          "failed calls leave recvbuff");

  require(ncclCommDestroy(comm) == ncclSuccess, "ncclCommDestroy");
  require(cudaFree(send) == cudaSuccess && cudaFree(recv) == cudaSuccess,
          "cudaFree");
  MPI_Finalize();
  std::exit(0);
}

class EmulatorNcclDeathTest : public ::testing::Test {
protected:
  void SetUp() override {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  }
};

TEST_F(EmulatorNcclDeathTest, OneRankCollectivesMoveAndCheckTheirBuffers) {
  // An Open MPI session directory of its own, removed here: tests run MPI
  // jobs in parallel, and jobs sharing the per-user one race to create and
  // remove it (test/Utils/mpirun-in-own-session.sh). The "threadsafe" death
  // test child runs this body again: it takes the parent's directory from
  // the environment.
  const char *sessionVariable = "LOOM_EMULATOR_TEST_MPI_SESSION";
  std::string session;
  if (const char *inherited = std::getenv(sessionVariable)) {
    session = inherited;
  } else {
    const char *tmp = std::getenv("TMPDIR");
    session = std::string(tmp && *tmp ? tmp : "/tmp") +
              "/loom-emulator-test.XXXXXX";
    ASSERT_NE(mkdtemp(session.data()), nullptr);
    setenv(sessionVariable, session.c_str(), /*overwrite=*/1);
  }
  EXPECT_EXIT(exitWithOneRankCollectives(session),
              ::testing::ExitedWithCode(0), "");
  unsetenv(sessionVariable);
  std::error_code ignored;
  std::filesystem::remove_all(session, ignored);
}

/// An ungrouped send that no receive matches, on a singleton MPI job: NCCL's
/// sends are rendezvous, so it would hang; the emulator stops after the
/// timeout instead (an MPI_Send would have buffered it and gone on).
void sendWithoutReceive() {
  require(setenv("LOOM_CUDA_EMULATOR_P2P_TIMEOUT_S", "0.2", 1) == 0, "setenv");
  require(MPI_Init(nullptr, nullptr) == MPI_SUCCESS, "MPI_Init");
  ncclUniqueId id;
  ncclComm_t comm = nullptr;
  require(ncclGetUniqueId(&id) == ncclSuccess &&
              ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess,
          "ncclCommInitRank");
  float *buffer = nullptr;
  require(cudaMalloc(reinterpret_cast<void **>(&buffer), 16) == cudaSuccess,
          "cudaMalloc");
  ncclSend(buffer, 4, ncclFloat32, 0, comm, nullptr);
  std::fprintf(stderr, "the unmatched send returned\n");
  std::exit(0);
}

TEST_F(EmulatorNcclDeathTest, UnmatchedSendStopsAfterTheTimeout) {
  EXPECT_DEATH(sendWithoutReceive(),
               "loom cuda emulator: ncclSend to rank 0 not matched after "
               "0.2 s: NCCL would hang here");
}

} // namespace

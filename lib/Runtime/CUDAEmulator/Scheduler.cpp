//===- Scheduler.cpp - CUDA emulator: kernel launches ---------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A launch is checked when it is made and runs in its stream's order
// (Streams.cpp), its blocks one after another. The threads of a block are
// fibers (Boost.Context) on the calling OS thread, resumed in rounds: each
// round resumes every runnable thread in thread order until it finishes or
// waits at a barrier; then the barriers whose threads have all arrived open.
//
//   - `__syncthreads()` opens when every thread of the block that has not
//     exited waits at it (exited threads count as arrived, as on a GPU);
//   - a shuffle opens when every lane of its mask waits in a shuffle with
//     the same mask. Values pass through a per-warp buffer of two halves,
//     alternating by shuffle generation, so a lane that runs ahead into the
//     next shuffle cannot overwrite a value another lane has yet to read.
//
// A round after which no barrier can open while threads still wait is a
// deadlock (on a GPU: a hang or undefined behaviour); the emulator stops
// with the state of each waiting thread. Stacks come from a pool of mmap'd
// regions with a guard page below each, so a stack overflow faults at once.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "loom_cuda_emulator/Kernel.h"

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace loom::cudaemu {

namespace {

namespace ctx = boost::context;

constexpr size_t kStackBytes = 256 * 1024;
constexpr int kWarpSize = 32;
constexpr unsigned kMaxThreadsPerBlock = 1024;

/// Fiber stacks, reused across blocks and launches (never unmapped).
class StackPool {
public:
  ctx::stack_context allocate() {
    void *base;
    if (!free.empty()) {
      base = free.back();
      free.pop_back();
    } else {
      size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
      void *region = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (region == MAP_FAILED)
        fatal("cannot map a fiber stack");
      mprotect(region, page, PROT_NONE);
      base = static_cast<char *>(region) + page;
    }
    ctx::stack_context stack;
    stack.size = kStackBytes;
    stack.sp = static_cast<char *>(base) + kStackBytes;
    return stack;
  }
  void deallocate(ctx::stack_context &stack) {
    free.push_back(static_cast<char *>(stack.sp) - stack.size);
  }

private:
  std::vector<void *> free;
};

thread_local StackPool stackPool;

/// What a fiber's stack allocator is: a handle on the thread's pool.
struct PooledStack {
  ctx::stack_context allocate() { return stackPool.allocate(); }
  void deallocate(ctx::stack_context &stack) { stackPool.deallocate(stack); }
};

enum class Wait { None, Block, Shuffle, Exited };

struct Thread {
  ctx::fiber fiber;
  Wait wait = Wait::None;
  unsigned mask = 0;
};

struct Warp {
  uint64_t values[2][kWarpSize];
  unsigned generation = 0;
};

/// The block being run on this OS thread.
struct BlockRun {
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  int current = -1;
};

thread_local BlockRun *activeBlock = nullptr;
/// Where a waiting thread returns to: the round loop of runBlock.
thread_local ctx::fiber scheduler;

BlockRun &runningBlock(const char *what) {
  if (!activeBlock || activeBlock->current < 0)
    fatal(std::string(what) + " called outside a kernel");
  return *activeBlock;
}

void waitHere(BlockRun &block, Wait wait, unsigned mask) {
  Thread &self = block.threads[block.current];
  self.wait = wait;
  self.mask = mask;
  scheduler = std::move(scheduler).resume();
}

uint3 coordinates(uint64_t linear, dim3 extent) {
  return {static_cast<unsigned>(linear % extent.x),
          static_cast<unsigned>((linear / extent.x) % extent.y),
          static_cast<unsigned>(linear / (uint64_t(extent.x) * extent.y))};
}

const char *waitName(Wait wait) {
  switch (wait) {
  case Wait::None:
    return "running";
  case Wait::Block:
    return "__syncthreads";
  case Wait::Shuffle:
    return "a shuffle";
  case Wait::Exited:
    return "exited";
  }
  return "?";
}

[[noreturn]] void deadlock(const BlockRun &block) {
  std::string text = "kernel deadlock in block (" +
                     std::to_string(blockIdx.x) + ", " +
                     std::to_string(blockIdx.y) + ", " +
                     std::to_string(blockIdx.z) +
                     "): no barrier can open; threads wait at";
  for (size_t t = 0; t < block.threads.size(); ++t) {
    if (t == 8) {
      text += " ...";
      break;
    }
    text += " [" + std::to_string(t) + ": " +
            waitName(block.threads[t].wait) + "]";
  }
  fatal(text);
}

/// Opens the shuffles whose lanes have all arrived; false if none opened.
bool openShuffles(BlockRun &block) {
  bool opened = false;
  int numThreads = static_cast<int>(block.threads.size());
  for (size_t w = 0; w < block.warps.size(); ++w) {
    int first = static_cast<int>(w) * kWarpSize;
    int last = std::min(first + kWarpSize, numThreads);
    int waiting = -1;
    for (int t = first; t < last; ++t)
      if (block.threads[t].wait == Wait::Shuffle) {
        waiting = t;
        break;
      }
    if (waiting < 0)
      continue;
    unsigned mask = block.threads[waiting].mask;
    bool ready = true;
    for (int lane = 0; lane < kWarpSize && ready; ++lane) {
      if (!(mask >> lane & 1u))
        continue;
      int t = first + lane;
      if (t >= last)
        fatal("a shuffle's mask names lane " + std::to_string(lane) +
              ", which the block of " + std::to_string(numThreads) +
              " threads does not have");
      const Thread &peer = block.threads[t];
      if (peer.wait == Wait::Exited)
        fatal("lane " + std::to_string(lane) + " of warp " +
              std::to_string(w) +
              " exited while its warp waits in a shuffle naming it");
      if (peer.wait == Wait::Shuffle && peer.mask != mask)
        fatal("lanes of warp " + std::to_string(w) +
              " shuffle with different masks");
      ready = peer.wait == Wait::Shuffle;
    }
    if (!ready)
      continue;
    for (int lane = 0; lane < kWarpSize; ++lane)
      if (mask >> lane & 1u)
        block.threads[first + lane].wait = Wait::None;
    ++block.warps[w].generation;
    opened = true;
  }
  return opened;
}

/// Opens __syncthreads when every live thread waits at it.
bool openBlockBarrier(BlockRun &block) {
  bool anyWaiting = false;
  for (const Thread &t : block.threads) {
    if (t.wait == Wait::Exited)
      continue;
    if (t.wait != Wait::Block)
      return false;
    anyWaiting = true;
  }
  if (!anyWaiting)
    return false;
  for (Thread &t : block.threads)
    if (t.wait == Wait::Block)
      t.wait = Wait::None;
  return true;
}

void runBlock(BlockRun &block, unsigned numThreads, void (*body)(void *),
              void *closure) {
  block.threads.clear();
  block.threads.resize(numThreads);
  block.warps.assign((numThreads + kWarpSize - 1) / kWarpSize, Warp());
  for (unsigned t = 0; t < numThreads; ++t)
    block.threads[t].fiber = ctx::fiber(
        std::allocator_arg, PooledStack(),
        [body, closure](ctx::fiber &&caller) {
          scheduler = std::move(caller);
          body(closure);
          return std::move(scheduler);
        });
  while (true) {
    // Live: not exited, whether resumed this round or still waiting from an
    // earlier one (a warp may exit while another waits at __syncthreads).
    bool anyLive = false;
    for (unsigned t = 0; t < numThreads; ++t) {
      Thread &thread = block.threads[t];
      if (thread.wait == Wait::None) {
        block.current = static_cast<int>(t);
        threadIdx = coordinates(t, blockDim);
        thread.fiber = std::move(thread.fiber).resume();
        if (!thread.fiber)
          thread.wait = Wait::Exited;
      }
      if (thread.wait != Wait::Exited)
        anyLive = true;
    }
    block.current = -1;
    if (!anyLive)
      return;
    if (!openShuffles(block) && !openBlockBarrier(block))
      deadlock(block);
  }
}

} // namespace

void blockBarrier() {
  BlockRun &block = runningBlock("__syncthreads");
  waitHere(block, Wait::Block, 0);
}

namespace {

/// The value `bits` of lane `sourceOf(lane)` of the caller's warp,
/// exchanged among the lanes of `mask` (the shuffle named `what`).
template <typename SourceOf>
uint64_t shuffle(const char *what, unsigned mask, uint64_t bits, int width,
                 SourceOf sourceOf) {
  BlockRun &block = runningBlock(what);
  if (width <= 0 || width > kWarpSize || (width & (width - 1)))
    fatal(std::string(what) + ": width " + std::to_string(width) +
          " is not a power of two in [1, 32]");
  int t = block.current;
  int lane = t % kWarpSize;
  if (!(mask >> lane & 1u))
    fatal(std::string(what) + ": lane " + std::to_string(lane) +
          " calls with a mask that leaves it out");
  Warp &warp = block.warps[t / kWarpSize];
  unsigned half = warp.generation & 1u;
  warp.values[half][lane] = bits;
  waitHere(block, Wait::Shuffle, mask);
  int source = sourceOf(lane);
  // A source past the caller's group of `width` lanes reads the caller.
  if (source / width > lane / width)
    return bits;
  if (!(mask >> source & 1u))
    fatal(std::string(what) + ": lane " + std::to_string(lane) +
          " reads lane " + std::to_string(source) +
          ", which is not in the mask");
  return warp.values[half][source];
}

} // namespace

uint64_t shuffleXor(unsigned mask, uint64_t bits, int laneMask, int width) {
  return shuffle("__shfl_xor_sync", mask, bits, width,
                 [&](int lane) { return lane ^ laneMask; });
}

uint64_t shuffleIndex(unsigned mask, uint64_t bits, int sourceLane, int width) {
  // As on a GPU: the source lane within the caller's group of `width`.
  return shuffle("__shfl_sync", mask, bits, width, [&](int lane) {
    return lane / width * width + (sourceLane & (width - 1));
  });
}

cudaError_t launchGrid(dim3 grid, dim3 block, cudaStream_t stream,
                       void (*body)(void *), std::shared_ptr<void> closure) {
  uint64_t threadsPerBlock = uint64_t(block.x) * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threadsPerBlock == 0 ||
      threadsPerBlock > kMaxThreadsPerBlock || block.z > 64 ||
      grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    return recordError(cudaErrorInvalidConfiguration);
  if (!isLiveStream(stream))
    return recordError(cudaErrorInvalidResourceHandle);
  if (activeBlock)
    fatal("a kernel launched another kernel (dynamic parallelism is not "
          "emulated)");
  enqueue(stream,
          [grid, block, threadsPerBlock, body, closure = std::move(closure)] {
            BlockRun run;
            activeBlock = &run;
            gridDim = grid;
            blockDim = block;
            uint64_t numBlocks = uint64_t(grid.x) * grid.y * grid.z;
            for (uint64_t b = 0; b < numBlocks; ++b) {
              blockIdx = coordinates(b, grid);
              runBlock(run, static_cast<unsigned>(threadsPerBlock), body,
                       closure.get());
            }
            activeBlock = nullptr;
          });
  return cudaSuccess;
}

} // namespace loom::cudaemu

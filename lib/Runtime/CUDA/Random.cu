//===- Random.cu - CUDA kernel of loom.dropout ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// One thread per element of the block (grid-stride): decode the element's
// block coordinates, add the block's offset to get its global row-major
// index, draw the word of that index from the dropout stream
// (Support/Philox.h, shared with the host) and keep or zero the element.
// Each thread recomputes its Philox block (10 rounds of two 32x32 products);
// that is cheap next to the memory traffic and keeps threads independent.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "loom/Runtime/CUDA/Random.h"
#include "loom/Runtime/Support/Philox.h"

namespace loom::runtime::cuda {

using namespace detail;

namespace {

/// The block's shape and, per dim, the block offset and the global stride.
struct BlockPlace {
  int rank = 0;
  int64_t size[kMaxRank];
  int64_t offset[kMaxRank];
  int64_t globalStride[kMaxRank];
};

template <typename T>
__global__ void dropoutKernel(const T *in, BlockPlace place, int64_t count,
                              philox::DropoutStream stream, uint64_t threshold,
                              T scale, T *out) {
  LOOM_GRID_LOOP(i, count) {
    int64_t rest = i;
    uint64_t global = 0;
    for (int d = place.rank - 1; d >= 0; --d) {
      global += static_cast<uint64_t>((rest % place.size[d] + place.offset[d]) *
                                      place.globalStride[d]);
      rest /= place.size[d];
    }
    out[i] =
        philox::dropoutKeeps(stream, threshold, global) ? in[i] * scale : T(0);
  }
}

} // namespace

template <typename T>
void dropout(cudaStream_t stream, const T *input, const Shape &globalShape,
             const Shape &blockOffset, const Shape &blockShape, double rate,
             int64_t seed, uint64_t runSeed, uint64_t step, T *result) {
  checkRank(blockShape.size(), "dropout");
  BlockPlace place;
  place.rank = static_cast<int>(blockShape.size());
  int64_t stride = 1;
  for (int d = place.rank - 1; d >= 0; --d) {
    place.size[d] = blockShape[d];
    place.offset[d] = blockOffset[d];
    place.globalStride[d] = stride;
    stride *= globalShape[d];
  }
  int64_t count = numElements(blockShape);
  LOOM_LAUNCH(dropoutKernel<T>, count ? blocksFor(count) : 0, kThreads, stream,
              input, place, count, philox::dropoutStream(seed, runSeed, step),
              philox::dropoutThreshold(rate),
              static_cast<T>(1.0 / (1.0 - rate)), result);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void dropout<T>(cudaStream_t, const T *, const Shape &,             \
                           const Shape &, const Shape &, double, int64_t,      \
                           uint64_t, uint64_t, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::cuda

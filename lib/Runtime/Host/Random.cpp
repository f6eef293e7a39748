//===- Random.cpp - Counter-based random numbers for host kernels ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The block kernels walk their block in row-major order as runs along the
// last dim: within a run the global index grows by one per element, so a
// Philox block is computed once per four elements (cached by its counter).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Random.h"
#include "loom/Runtime/Support/Philox.h"

#include <cmath>
#include <vector>

namespace loom::runtime::host {

namespace {

constexpr double kTwoPow32 = 4294967296.0;
constexpr double kTwoPi = 6.283185307179586476925;

uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

PhiloxKey keyFromSeed(uint64_t seed) { return {lo32(seed), hi32(seed)}; }

/// The four random words of element blocks along one stream: words 2-3 of
/// the counter are fixed, words 0-1 hold the block index i / 4.
class Stream {
public:
  Stream(PhiloxKey key, uint32_t word2, uint32_t word3)
      : key(key), word2(word2), word3(word3) {}

  /// Returns the block of global element index `i`.
  const PhiloxCounter &blockOf(uint64_t i) {
    uint64_t block = i / 4;
    if (!valid || block != cachedBlock) {
      cached = philox4x32({lo32(block), hi32(block), word2, word3}, key);
      cachedBlock = block;
      valid = true;
    }
    return cached;
  }

private:
  PhiloxKey key;
  uint32_t word2, word3;
  PhiloxCounter cached{};
  uint64_t cachedBlock = 0;
  bool valid = false;
};

/// The stream that initializes tensor `tensorId` (see the header's table).
Stream initStream(uint64_t seed, uint64_t tensorId) {
  return Stream(keyFromSeed(seed), lo32(tensorId),
                hi32(tensorId) | 0x80000000u);
}

/// Calls `fn(local, global, length)` for every run of the block along its
/// last dim: `length` elements starting at row-major index `local` in the
/// block and `global` in the global tensor.
template <typename Fn>
void forEachRun(const Shape &globalShape, const Shape &blockOffset,
                const Shape &blockShape, Fn fn) {
  size_t rank = globalShape.size();
  if (numElements(blockShape) == 0)
    return;
  if (rank == 0) {
    fn(int64_t(0), uint64_t(0), int64_t(1));
    return;
  }
  std::vector<int64_t> globalStrides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;)
    globalStrides[d] = globalStrides[d + 1] * globalShape[d + 1];
  int64_t length = blockShape.back();
  int64_t runs = numElements(blockShape) / length;
  std::vector<int64_t> coord(rank, 0); // Block coordinates of the run start.
  for (int64_t run = 0; run < runs; ++run) {
    int64_t global = 0;
    for (size_t d = 0; d < rank; ++d)
      global += (blockOffset[d] + coord[d]) * globalStrides[d];
    fn(run * length, static_cast<uint64_t>(global), length);
    // Advance the odometer over every dim but the last.
    for (size_t d = rank - 1; d-- > 0;) {
      if (++coord[d] < blockShape[d])
        break;
      coord[d] = 0;
    }
  }
}

} // namespace

PhiloxCounter philox4x32(PhiloxCounter c, PhiloxKey key) {
  // The shared host/device definition (Support/Philox.h).
  philox::Block out = philox::philox4x32(
      {{c[0], c[1], c[2], c[3]}},
      static_cast<uint64_t>(key[0]) | static_cast<uint64_t>(key[1]) << 32);
  return {out.word[0], out.word[1], out.word[2], out.word[3]};
}

uint64_t tensorIdFromName(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a 64 offset basis.
  for (unsigned char byte : name) {
    hash ^= byte;
    hash *= 0x100000001b3ull; // FNV-1a 64 prime.
  }
  return hash;
}

template <typename T>
void fillUniform(T *out, const Shape &globalShape, const Shape &blockOffset,
                 const Shape &blockShape, uint64_t seed, uint64_t tensorId,
                 double low, double high) {
  Stream stream = initStream(seed, tensorId);
  double width = high - low;
  forEachRun(globalShape, blockOffset, blockShape,
             [&](int64_t local, uint64_t global, int64_t length) {
               for (int64_t k = 0; k < length; ++k) {
                 uint64_t i = global + k;
                 uint32_t r = stream.blockOf(i)[i % 4];
                 double u = (r + 0.5) / kTwoPow32;
                 out[local + k] = static_cast<T>(low + width * u);
               }
             });
}

template <typename T>
void fillNormal(T *out, const Shape &globalShape, const Shape &blockOffset,
                const Shape &blockShape, uint64_t seed, uint64_t tensorId,
                double mean, double std) {
  Stream stream = initStream(seed, tensorId);
  forEachRun(globalShape, blockOffset, blockShape,
             [&](int64_t local, uint64_t global, int64_t length) {
               for (int64_t k = 0; k < length; ++k) {
                 uint64_t i = global + k;
                 const PhiloxCounter &r = stream.blockOf(i);
                 unsigned first = (i % 4) & ~1u;
                 double u1 = (r[first] + 0.5) / kTwoPow32;
                 double u2 = r[first + 1] / kTwoPow32;
                 double radius = std::sqrt(-2.0 * std::log(u1));
                 double angle = kTwoPi * u2;
                 double z =
                     radius * (i % 2 == 0 ? std::cos(angle) : std::sin(angle));
                 out[local + k] = static_cast<T>(mean + std * z);
               }
             });
}

template <typename T>
void dropout(const T *input, const Shape &globalShape, const Shape &blockOffset,
             const Shape &blockShape, double rate, int64_t seed,
             uint64_t runSeed, uint64_t step, T *result) {
  philox::DropoutStream site = philox::dropoutStream(seed, runSeed, step);
  Stream stream(keyFromSeed(site.key), site.word2, site.word3);
  uint64_t threshold = philox::dropoutThreshold(rate);
  T scale = static_cast<T>(1.0 / (1.0 - rate));
  forEachRun(globalShape, blockOffset, blockShape,
             [&](int64_t local, uint64_t global, int64_t length) {
               for (int64_t k = 0; k < length; ++k) {
                 uint64_t i = global + k;
                 uint32_t r = stream.blockOf(i)[i % 4];
                 result[local + k] =
                     r >= threshold ? input[local + k] * scale : T(0);
               }
             });
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void fillUniform<T>(T *, const Shape &, const Shape &,              \
                               const Shape &, uint64_t, uint64_t, double,      \
                               double);                                        \
  template void fillNormal<T>(T *, const Shape &, const Shape &,               \
                              const Shape &, uint64_t, uint64_t, double,       \
                              double);                                         \
  template void dropout<T>(const T *, const Shape &, const Shape &,            \
                           const Shape &, double, int64_t, uint64_t, uint64_t, \
                           T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

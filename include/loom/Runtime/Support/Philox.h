//===- Philox.h - Philox 4x32-10 and the dropout stream, host and device -===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The one definition of the random bits behind loom.dropout, compiled for
// both the host (the interpreter's and the host programs' kernels,
// host/Random.h) and the device (the CUDA dropout kernel): every function is
// `inline` and, under nvcc, `__host__ __device__`. So a CUDA mask equals the
// host mask bit for bit by construction, and the host instantiation is what
// the unit tests check.
//
// The dropout stream of one dropout site in one training step (loom.dropout's
// ODS description and docs/Runtime.md, "Random numbers"):
//
//   key     = siteSeed XOR mixRunSeed(runSeed)            (lo32 first)
//   counter = (lo32(i / 4), hi32(i / 4), lo32(step), hi32(step) & 0x7fffffff)
//   word    = philox4x32(counter, key)[i % 4]
//   keep    = word >= floor(rate * 2^32)
//
// with `i` the element's global row-major index, `siteSeed` the op's `seed`
// attribute, `runSeed` the run's `--seed` and `step` the 0-based training
// step. mixRunSeed is a multiplication by an odd constant (a bijection of
// 64-bit words that keeps 0 at 0), so distinct run seeds give distinct keys
// for a site, and run seed 0 at step 0 gives the stream the op's seed alone
// defines. Initialization streams set bit 31 of counter word 3, which the
// dropout stream keeps clear, so the two never share a counter.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SUPPORT_PHILOX_H
#define LOOM_RUNTIME_SUPPORT_PHILOX_H

#include <cstdint>

#if defined(__CUDACC__)
#define LOOM_HOST_DEVICE __host__ __device__
#else
#define LOOM_HOST_DEVICE
#endif

namespace loom::runtime::philox {

/// Four 32-bit words: a Philox counter or its output block.
struct Block {
  uint32_t word[4];
};

/// Philox 4x32 with 10 rounds, as Random123's `philox4x32` (bit-exact with
/// its published known-answer vectors). The key is (lo32(key), hi32(key)).
LOOM_HOST_DEVICE inline Block philox4x32(Block c, uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key);
  uint32_t k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c.word[0];
    uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c.word[2];
    Block next;
    next.word[0] = static_cast<uint32_t>(p1 >> 32) ^ c.word[1] ^ k0;
    next.word[1] = static_cast<uint32_t>(p1);
    next.word[2] = static_cast<uint32_t>(p0 >> 32) ^ c.word[3] ^ k1;
    next.word[3] = static_cast<uint32_t>(p0);
    c = next;
  }
  return c;
}

/// The run seed's share of a dropout key: a bijection with 0 -> 0.
LOOM_HOST_DEVICE inline uint64_t mixRunSeed(uint64_t runSeed) {
  return runSeed * 0x9E3779B97F4A7C15ull;
}

/// Where one dropout site draws in one step: the key and counter words 2-3.
struct DropoutStream {
  uint64_t key = 0;
  uint32_t word2 = 0, word3 = 0;
};

/// The stream of the site with seed attribute `siteSeed` at 0-based training
/// `step` of a run seeded with `runSeed` (the file comment's table; steps
/// are taken modulo 2^63).
LOOM_HOST_DEVICE inline DropoutStream
dropoutStream(int64_t siteSeed, uint64_t runSeed, uint64_t step) {
  DropoutStream stream;
  stream.key = static_cast<uint64_t>(siteSeed) ^ mixRunSeed(runSeed);
  stream.word2 = static_cast<uint32_t>(step);
  stream.word3 = static_cast<uint32_t>(step >> 32) & 0x7fffffffu;
  return stream;
}

/// The Philox block holding element `i`'s word (`i % 4` of it).
LOOM_HOST_DEVICE inline Block dropoutBlock(const DropoutStream &stream,
                                           uint64_t i) {
  uint64_t block = i / 4;
  Block counter = {{static_cast<uint32_t>(block),
                    static_cast<uint32_t>(block >> 32), stream.word2,
                    stream.word3}};
  return philox4x32(counter, stream.key);
}

/// The threshold a word must reach to keep its element: floor(rate * 2^32)
/// for `rate` in [0, 1) (a product of a double by a power of two is exact,
/// and truncation of a non-negative value is its floor).
LOOM_HOST_DEVICE inline uint64_t dropoutThreshold(double rate) {
  return static_cast<uint64_t>(rate * 4294967296.0);
}

/// Whether element `i` is kept.
LOOM_HOST_DEVICE inline bool dropoutKeeps(const DropoutStream &stream,
                                          uint64_t threshold, uint64_t i) {
  return dropoutBlock(stream, i).word[i % 4] >= threshold;
}

} // namespace loom::runtime::philox

#endif // LOOM_RUNTIME_SUPPORT_PHILOX_H

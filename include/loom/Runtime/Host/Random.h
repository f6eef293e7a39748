//===- Random.h - Counter-based random numbers for host kernels -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Philox 4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2,
// 3", SC'11) and the kernels built on it: parameter initialization and
// loom.dropout. A counter-based generator is a pure function of (key,
// counter), so each element's random word depends only on the stream's key
// and the element's *global* row-major index `i`: element i reads word
// `i % 4` of the block at counter `i / 4`. Every kernel here fills a block of
// a larger global tensor (`blockOffset`, `blockShape` within `globalShape`),
// so a rank's shard equals the slice of the unsharded tensor, whatever the
// sharding.
//
// Stream layout (words are little-endian halves: lo32 first):
//
//   stream               key                        counter
//   initialization       (lo32(seed), hi32(seed))   (lo32(i/4), hi32(i/4),
//                                                    lo32(id), hi32(id) | 2^31)
//   loom.dropout         siteSeed ^ mix(runSeed)    (lo32(i/4), hi32(i/4),
//                                                    lo32(step),
//                                                    hi32(step) & 0x7fffffff)
//
// with `id` the tensor id, and for dropout the op's seed, the run's seed and
// the 0-based training step (loom/Runtime/Support/Philox.h, which holds the
// one host-and-device definition of the dropout stream). Philox is a
// bijection of the counter for a fixed key, and two streams with the same
// key never share a counter when their words 2-3 differ: so the
// initialization streams of tensors whose ids differ in their low 63 bits
// never overlap, and never overlap a dropout stream (whose word 3 keeps bit
// 31 clear). Bit 63 of a tensor id is ignored.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_RANDOM_H
#define LOOM_RUNTIME_HOST_RANDOM_H

#include "loom/Runtime/Support/Broadcast.h"

#include <array>
#include <cstdint>
#include <string_view>

namespace loom::runtime::host {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// Philox 4x32 with 10 rounds, as Random123's `philox4x32` (bit-exact with
/// its published known-answer vectors).
PhiloxCounter philox4x32(PhiloxCounter counter, PhiloxKey key);

/// A stable 64-bit id for a tensor from its name: FNV-1a 64 of the bytes of
/// `name`, so a parameter's initialization does not depend on the order in
/// which parameters are declared.
uint64_t tensorIdFromName(std::string_view name);

/// Fills the block of a [globalShape] tensor at `blockOffset` with shape
/// `blockShape` (row-major, into `out`) with values uniform on [low, high):
/// `low + (high - low) * u`, `u = (r + 0.5) / 2^32` for element i's word r,
/// computed in double (rounding to float may reach `high`).
template <typename T>
void fillUniform(T *out, const Shape &globalShape, const Shape &blockOffset,
                 const Shape &blockShape, uint64_t seed, uint64_t tensorId,
                 double low, double high);

/// Like fillUniform, with normal values of mean `mean` and standard deviation
/// `std`, by Box-Muller on two 32-bit words: element i uses the pair of words
/// (r[2k], r[2k+1]), k = (i % 4) / 2, of its block,
/// `u1 = (r[2k] + 0.5) / 2^32`, `u2 = r[2k+1] / 2^32`, and
/// `sqrt(-2 ln u1) * cos(2 pi u2)` for even i, `* sin(2 pi u2)` for odd i
/// (so the pair gives two independent normals; |z| stays below 6.8).
template <typename T>
void fillNormal(T *out, const Shape &globalShape, const Shape &blockOffset,
                const Shape &blockShape, uint64_t seed, uint64_t tensorId,
                double mean, double std);

/// loom.dropout over the block of a [globalShape] input at `blockOffset`
/// with shape `blockShape`: `input` and `result` are that block. Element i
/// (global index) keeps iff its word r of the stream of (`seed`, `runSeed`,
/// `step`) (philox::dropoutStream) is >= floor(rate * 2^32), and is then
/// scaled by `1 / (1 - rate)` computed in double and rounded to T; dropped
/// elements are 0. `rate` is in [0, 1). For an unsharded call pass
/// `globalShape` as `blockShape` and a zero offset.
template <typename T>
void dropout(const T *input, const Shape &globalShape, const Shape &blockOffset,
             const Shape &blockShape, double rate, int64_t seed,
             uint64_t runSeed, uint64_t step, T *result);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_RANDOM_H

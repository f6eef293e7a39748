//===- RingAttention.h - Block kernels of ring attention --------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The per-step kernels of ring attention (dist.ring_attention and
// dist.ring_attention_grad) and the zigzag schedule they follow. The
// interpreter and the MPI communicator both drive these kernels in the same
// step order, so a simulated ring and a real one agree bit for bit.
//
// Zigzag split: a sequence split over a group of C devices is cut into 2C
// chunks of L rows; device r computes the queries of chunks r and 2C-1-r (its
// "zigzag block", chunk r first), so with a causal mask every device attends
// the same number of (query, key) pairs. Key/value zigzag blocks travel
// around the ring: at step t device r holds the block of device (r - t) mod C.
//
// Calling convention as README.md, plus: positions are the global sequence
// positions of the block's rows (`int64_t`, one per row); accumulators are
// read and written (the caller initializes them once per ring).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_RINGATTENTION_H
#define LOOM_RUNTIME_HOST_RINGATTENTION_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace loom::runtime::host {

/// The global positions of device `r`'s zigzag block in a group of `n`
/// devices, `chunk` rows per chunk: chunk r's rows, then chunk 2n-1-r's.
std::vector<int64_t> zigzagPositions(int64_t r, int64_t n, int64_t chunk);

/// The device of a group of `n` whose contiguous block holds chunk `c` (of
/// 2n), and the device whose zigzag block holds it.
inline int64_t contiguousOwner(int64_t c) { return c / 2; }
inline int64_t zigzagOwner(int64_t c, int64_t n) {
  return c < n ? c : 2 * n - 1 - c;
}

/// Copies `rows` rows of a [B, H, S, D] tensor `src` (S = `srcSeq`) starting
/// at row `srcRow` into rows `dstRow`.. of `dst` ([B, H, dstSeq, D]).
template <typename T>
void copySequenceRows(const T *src, int64_t srcSeq, int64_t srcRow, T *dst,
                      int64_t dstSeq, int64_t dstRow, int64_t rows,
                      int64_t outer, int64_t width);

/// One forward ring step: merges the attention of `query` ([B, Hq, Sq, D],
/// rows at `queryPositions`) over the key/value block `key` ([B, Hkv, Skv,
/// D]) / `value` ([B, Hkv, Skv, Dv], rows at `keyPositions`) into the
/// running result `out` ([B, Hq, Sq, Dv]) and log-sum-exp `lse` ([B, Hq,
/// Sq]). With `causal`, query row i attends key j iff keyPositions[j] <=
/// queryPositions[i]. Before the first step `out` is 0 and `lse` -inf; a row
/// attending no key of the block keeps its values. The merge is the online
/// softmax: lse' = log(exp(lse) + exp(lse_b)), out' = out exp(lse - lse') +
/// out_b exp(lse_b - lse').
template <typename T>
void attentionBlock(const T *query, const Shape &queryShape, const T *key,
                    const Shape &keyShape, const T *value,
                    const Shape &valueShape, const int64_t *queryPositions,
                    const int64_t *keyPositions, bool causal,
                    std::optional<double> scale, T *out, T *lse);

/// One backward ring step: with the whole ring's `out` and `lse` (the
/// probabilities are exp(s - lse), exact over the whole sequence) and the
/// result gradient `dout`, adds this block's contributions to `dquery`
/// (query's shape) and to the travelling `dkey`, `dvalue` (the block's
/// shapes). Positions and `causal` as in attentionBlock.
template <typename T>
void attentionBlockGrad(const T *query, const Shape &queryShape, const T *key,
                        const Shape &keyShape, const T *value,
                        const Shape &valueShape, const T *out, const T *dout,
                        const T *lse, const int64_t *queryPositions,
                        const int64_t *keyPositions, bool causal,
                        std::optional<double> scale, T *dquery, T *dkey,
                        T *dvalue);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_RINGATTENTION_H

//===- Attention.h - Host scaled-dot-product attention kernels --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernels of loom.attention and loom.attention_grad. `query` is
// [B, Hq, Sq, D], `key` [B, Hkv, Skv, D], `value` [B, Hkv, Skv, Dv]; query head
// h reads key/value head h / (Hq / Hkv). `causal` keeps key j for query i iff
// j <= i + (Skv - Sq) (bottom-right aligned); `mask` (nullable, rank <= 4) is
// added to the scaled scores, numpy-broadcast to [B, Hq, Sq, Skv]. `scale`
// defaults to 1 / sqrt(D). Scores, softmax and products accumulate in double,
// one query row at a time, so no [Sq, Skv] score matrix is kept.
// Calling convention: README.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_ATTENTION_H
#define LOOM_RUNTIME_HOST_ATTENTION_H

#include "loom/Runtime/Support/Broadcast.h"

#include <optional>

namespace loom::runtime::host {

/// loom.attention: `result` ([B, Hq, Sq, Dv]) =
/// `softmax(scale * query @ key^T + mask) @ value` with the masks above.
template <typename T>
void attention(const T *query, const Shape &queryShape, const T *key,
               const Shape &keyShape, const T *value, const Shape &valueShape,
               const T *mask, const Shape &maskShape, bool causal,
               std::optional<double> scale, T *result);

/// loom.attention_grad: `dquery`, `dkey`, `dvalue` (each of its operand's
/// shape) from the forward's operands, its result `out` and the result's
/// gradient `dout` (both [B, Hq, Sq, Dv]). The probabilities are recomputed
/// from query and key; `rowsum(dout * out)` comes from `out`, as in
/// FlashAttention's backward pass. The mask gets no gradient.
template <typename T>
void attentionGrad(const T *query, const Shape &queryShape, const T *key,
                   const Shape &keyShape, const T *value,
                   const Shape &valueShape, const T *out, const T *dout,
                   const T *mask, const Shape &maskShape, bool causal,
                   std::optional<double> scale, T *dquery, T *dkey, T *dvalue);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_ATTENTION_H

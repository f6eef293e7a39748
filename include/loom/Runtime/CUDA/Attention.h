//===- Attention.h - CUDA kernels for scaled dot-product attention -*- C++ -*-//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Attention.h (calling convention:
// CUDA/Elementwise.h): tiled kernels in the manner of FlashAttention (a
// block holds a tile of query rows and walks shared tiles of key and value
// rows with an online softmax; lib/Runtime/CUDA/Attention.cu), computing in
// double as the host does. Causal masking, GQA (query heads sharing a
// key/value head) and an additive broadcast mask behave as on the host. The
// gradient runs one kernel over query tiles (dquery) and one over key tiles
// (dkey, dvalue, summing over the query heads of the group), so nothing is
// accumulated with atomics and results are deterministic. Head dims are
// limited to kMaxAttentionHeadDim (each lane holds its share of a row's
// accumulators in registers).
//
// Mixed precision. attentionLowPrecision and attentionGradLowPrecision are
// for query, key and value that hold bf16 or f16 values (a bf16-mixed
// program's attention, docs/MixedPrecision.md): in an f32 run their kernels
// sum, exponentiate and accumulate in float instead of double. A product of
// two bf16 (f16) values is exact in float, so the scores differ from the
// host's only by float rounding of the sums (relative 2^-24 per addition);
// the results are then rounded to bf16 (f16), where such a difference moves
// an element to the neighbouring bf16 value only when it lies within that
// distance of a rounding boundary. The double conversions the exact kernels
// pay for every operand element are gone. In an f64 run they are the exact
// kernels.
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_ATTENTION_H
#define LOOM_RUNTIME_CUDA_ATTENTION_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <optional>

namespace loom::runtime::cuda {

/// The largest head dim (query/key and value) the kernels take.
inline constexpr int kMaxAttentionHeadDim = 256;

template <typename T>
void attention(cudaStream_t stream, const T *query, const Shape &queryShape,
               const T *key, const Shape &keyShape, const T *value,
               const Shape &valueShape, const T *mask, const Shape &maskShape,
               bool causal, std::optional<double> scale, T *result);

template <typename T>
void attentionGrad(cudaStream_t stream, const T *query, const Shape &queryShape,
                   const T *key, const Shape &keyShape, const T *value,
                   const Shape &valueShape, const T *out, const T *dout,
                   const T *mask, const Shape &maskShape, bool causal,
                   std::optional<double> scale, T *dquery, T *dkey, T *dvalue);

/// attention() of low-precision values (above): float sums in an f32 run.
template <typename T>
void attentionLowPrecision(cudaStream_t stream, const T *query,
                           const Shape &queryShape, const T *key,
                           const Shape &keyShape, const T *value,
                           const Shape &valueShape, const T *mask,
                           const Shape &maskShape, bool causal,
                           std::optional<double> scale, T *result);

/// attentionGrad() of low-precision values (above).
template <typename T>
void attentionGradLowPrecision(
    cudaStream_t stream, const T *query, const Shape &queryShape, const T *key,
    const Shape &keyShape, const T *value, const Shape &valueShape,
    const T *out, const T *dout, const T *mask, const Shape &maskShape,
    bool causal, std::optional<double> scale, T *dquery, T *dkey, T *dvalue);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_ATTENTION_H

//===- Attention.cpp - Host scaled-dot-product attention kernels ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Both kernels walk (batch, query head, query row) and rebuild that row's
// probabilities over the keys with the same helper, so the backward pass sees
// exactly the forward's softmax:
//   1. s_j = scale * q_i . k_j + mask[b, h, i, j] for the keys j the causal
//      limit keeps (all keys without `causal`);
//   2. p_j = exp(s_j - max s) / sum exp(s - max s), p_j = 0 past the limit.
// The backward pass then forms dp_j = dout_i . v_j, delta = dout_i . out_i and
// ds_j = p_j * (dp_j - delta), and accumulates dq_i = scale * sum ds_j k_j,
// dk_j += scale * ds_j q_i, dv_j += p_j dout_i. dk and dv sum over the query
// heads of a group and over the query rows, in double scratch buffers.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace loom::runtime::host {

namespace {

/// q . k over `n` elements, in double, in an order fixed by `n` alone: eight
/// interleaved partial sums (lane l takes elements l, l + 8, ...) added
/// pairwise at the end. The lanes are independent, so the compiler keeps
/// them in vector registers instead of one serial chain of adds (the
/// attention kernels' dot products were a fifth of a GPT-2 step); the result
/// does not depend on the machine, so the interpreter and emitted programs,
/// which share these kernels, still agree bit for bit.
template <typename A, typename B>
double dot(const A *a, const B *b, int64_t n) {
  constexpr int64_t kLanes = 8;
  double lane[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lane[l] += static_cast<double>(a[c + l]) * static_cast<double>(b[c + l]);
  for (int64_t l = 0; c + l < n; ++l)
    lane[l] += static_cast<double>(a[c + l]) * static_cast<double>(b[c + l]);
  return ((lane[0] + lane[4]) + (lane[2] + lane[6])) +
         ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

/// The sizes of one attention problem and the strides of its mask.
struct Problem {
  int64_t b, hq, sq, d, hkv, skv, dv;
  int64_t group; // Query heads per key/value head.
  double scale;
  bool causal;
  std::vector<int64_t> maskStrides; // Over [B, Hq, Sq, Skv]; empty: no mask.

  Problem(const Shape &queryShape, const Shape &keyShape,
          const Shape &valueShape, const void *mask, const Shape &maskShape,
          bool causal, std::optional<double> scaleAttr)
      : b(queryShape[0]), hq(queryShape[1]), sq(queryShape[2]),
        d(queryShape[3]), hkv(keyShape[1]), skv(keyShape[2]), dv(valueShape[3]),
        group(hq / hkv), causal(causal) {
    scale = scaleAttr ? *scaleAttr : 1.0 / std::sqrt(static_cast<double>(d));
    if (mask)
      maskStrides = broadcastStrides({b, hq, sq, skv}, maskShape);
  }

  /// Number of keys query row `i` attends: all of them, or with `causal`
  /// those with j <= i + (Skv - Sq).
  int64_t keysFor(int64_t i) const {
    if (!causal)
      return skv;
    return std::clamp<int64_t>(i + (skv - sq) + 1, 0, skv);
  }

  int64_t queryOffset(int64_t bi, int64_t h, int64_t i) const {
    return ((bi * hq + h) * sq + i) * d;
  }
  int64_t keyOffset(int64_t bi, int64_t h, int64_t j) const {
    return ((bi * hkv + h / group) * skv + j) * d;
  }
  int64_t valueOffset(int64_t bi, int64_t h, int64_t j) const {
    return ((bi * hkv + h / group) * skv + j) * dv;
  }
  int64_t outOffset(int64_t bi, int64_t h, int64_t i) const {
    return ((bi * hq + h) * sq + i) * dv;
  }
};

/// Fills `probs[0, n)` with the softmax of query row (bi, h, i) over its
/// first n = keysFor(i) keys and returns n.
template <typename T>
int64_t rowProbabilities(const Problem &p, const T *query, const T *key,
                         const T *mask, int64_t bi, int64_t h, int64_t i,
                         std::vector<double> &probs) {
  int64_t n = p.keysFor(i);
  const T *q = query + p.queryOffset(bi, h, i);
  double maxScore = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    double s = p.scale * dot(q, key + p.keyOffset(bi, h, j), p.d);
    if (mask) {
      const std::vector<int64_t> &st = p.maskStrides;
      s += mask[bi * st[0] + h * st[1] + i * st[2] + j * st[3]];
    }
    probs[j] = s;
    maxScore = std::max(maxScore, s);
  }
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    probs[j] = std::exp(probs[j] - maxScore);
    sum += probs[j];
  }
  for (int64_t j = 0; j < n; ++j)
    probs[j] /= sum;
  return n;
}

} // namespace

template <typename T>
void attention(const T *query, const Shape &queryShape, const T *key,
               const Shape &keyShape, const T *value, const Shape &valueShape,
               const T *mask, const Shape &maskShape, bool causal,
               std::optional<double> scale, T *result) {
  Problem p(queryShape, keyShape, valueShape, mask, maskShape, causal, scale);
  std::vector<double> probs(p.skv), acc(p.dv);
  for (int64_t bi = 0; bi < p.b; ++bi) {
    for (int64_t h = 0; h < p.hq; ++h) {
      for (int64_t i = 0; i < p.sq; ++i) {
        int64_t n = rowProbabilities(p, query, key, mask, bi, h, i, probs);
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < n; ++j) {
          const T *v = value + p.valueOffset(bi, h, j);
          for (int64_t c = 0; c < p.dv; ++c)
            acc[c] += probs[j] * v[c];
        }
        T *o = result + p.outOffset(bi, h, i);
        for (int64_t c = 0; c < p.dv; ++c)
          o[c] = static_cast<T>(acc[c]);
      }
    }
  }
}

template <typename T>
void attentionGrad(const T *query, const Shape &queryShape, const T *key,
                   const Shape &keyShape, const T *value,
                   const Shape &valueShape, const T *out, const T *dout,
                   const T *mask, const Shape &maskShape, bool causal,
                   std::optional<double> scale, T *dquery, T *dkey, T *dvalue) {
  Problem p(queryShape, keyShape, valueShape, mask, maskShape, causal, scale);
  std::vector<double> dkAcc(numElements(keyShape), 0.0);
  std::vector<double> dvAcc(numElements(valueShape), 0.0);
  std::vector<double> probs(p.skv), dq(p.d);
  for (int64_t bi = 0; bi < p.b; ++bi) {
    for (int64_t h = 0; h < p.hq; ++h) {
      for (int64_t i = 0; i < p.sq; ++i) {
        int64_t n = rowProbabilities(p, query, key, mask, bi, h, i, probs);
        const T *q = query + p.queryOffset(bi, h, i);
        const T *o = out + p.outOffset(bi, h, i);
        const T *dO = dout + p.outOffset(bi, h, i);
        double delta = dot(dO, o, p.dv);
        std::fill(dq.begin(), dq.end(), 0.0);
        for (int64_t j = 0; j < n; ++j) {
          const T *k = key + p.keyOffset(bi, h, j);
          const T *v = value + p.valueOffset(bi, h, j);
          double *dk = dkAcc.data() + p.keyOffset(bi, h, j);
          double *dv = dvAcc.data() + p.valueOffset(bi, h, j);
          double dp = dot(dO, v, p.dv);
          for (int64_t c = 0; c < p.dv; ++c)
            dv[c] += probs[j] * dO[c];
          double ds = p.scale * probs[j] * (dp - delta);
          for (int64_t c = 0; c < p.d; ++c) {
            dq[c] += ds * k[c];
            dk[c] += ds * q[c];
          }
        }
        T *dqOut = dquery + p.queryOffset(bi, h, i);
        for (int64_t c = 0; c < p.d; ++c)
          dqOut[c] = static_cast<T>(dq[c]);
      }
    }
  }
  for (size_t e = 0; e < dkAcc.size(); ++e)
    dkey[e] = static_cast<T>(dkAcc[e]);
  for (size_t e = 0; e < dvAcc.size(); ++e)
    dvalue[e] = static_cast<T>(dvAcc[e]);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void attention<T>(const T *, const Shape &, const T *,              \
                             const Shape &, const T *, const Shape &,          \
                             const T *, const Shape &, bool,                   \
                             std::optional<double>, T *);                      \
  template void attentionGrad<T>(                                              \
      const T *, const Shape &, const T *, const Shape &, const T *,           \
      const Shape &, const T *, const T *, const T *, const Shape &, bool,     \
      std::optional<double>, T *, T *, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

//===- RingAttention.cpp - Block kernels of ring attention ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Both step kernels walk (batch, query head, query row) and score the row
// against the block's keys that its position admits:
//   forward:  s_j = scale q_i . k_j, m = max s, l = sum exp(s - m),
//             out_b = sum exp(s_j - m) v_j / l, lse_b = m + log l, merged
//             into the running (out, lse) by the online softmax;
//   backward: p_j = exp(s_j - lse_i) with the ring's final lse (so p is the
//             whole sequence's softmax), dp_j = dout_i . v_j, delta =
//             dout_i . out_i, ds_j = scale p_j (dp_j - delta); dq_i +=
//             sum ds_j k_j, dk_j += ds_j q_i, dv_j += p_j dout_i.
// Sums run in double and each accumulator is rounded to T once per step, so
// the result depends only on the step order, which the ring fixes.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/RingAttention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace loom::runtime::host {

namespace {

template <typename A, typename B>
double dot(const A *a, const B *b, int64_t n) {
  double sum = 0;
  for (int64_t c = 0; c < n; ++c)
    sum += static_cast<double>(a[c]) * static_cast<double>(b[c]);
  return sum;
}

/// The sizes of one block problem.
struct Block {
  int64_t b, hq, sq, d, hkv, skv, dv, group;
  double scale;

  Block(const Shape &q, const Shape &k, const Shape &v,
        std::optional<double> scaleAttr)
      : b(q[0]), hq(q[1]), sq(q[2]), d(q[3]), hkv(k[1]), skv(k[2]), dv(v[3]),
        group(q[1] / k[1]) {
    scale = scaleAttr ? *scaleAttr : 1.0 / std::sqrt(static_cast<double>(d));
  }
  int64_t row(int64_t bi, int64_t h, int64_t i) const {
    return (bi * hq + h) * sq + i;
  }
  int64_t kvRow(int64_t bi, int64_t h, int64_t j) const {
    return (bi * hkv + h / group) * skv + j;
  }
};

} // namespace

std::vector<int64_t> zigzagPositions(int64_t r, int64_t n, int64_t chunk) {
  std::vector<int64_t> positions;
  positions.reserve(2 * chunk);
  for (int64_t c : {r, 2 * n - 1 - r})
    for (int64_t i = 0; i < chunk; ++i)
      positions.push_back(c * chunk + i);
  return positions;
}

template <typename T>
void copySequenceRows(const T *src, int64_t srcSeq, int64_t srcRow, T *dst,
                      int64_t dstSeq, int64_t dstRow, int64_t rows,
                      int64_t outer, int64_t width) {
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + (o * dstSeq + dstRow) * width,
                src + (o * srcSeq + srcRow) * width, sizeof(T) * rows * width);
}

template <typename T>
void attentionBlock(const T *query, const Shape &queryShape, const T *key,
                    const Shape &keyShape, const T *value,
                    const Shape &valueShape, const int64_t *queryPositions,
                    const int64_t *keyPositions, bool causal,
                    std::optional<double> scale, T *out, T *lse) {
  Block p(queryShape, keyShape, valueShape, scale);
  std::vector<double> scores(p.skv), acc(p.dv);
  const double minusInf = -std::numeric_limits<double>::infinity();
  for (int64_t bi = 0; bi < p.b; ++bi)
    for (int64_t h = 0; h < p.hq; ++h)
      for (int64_t i = 0; i < p.sq; ++i) {
        const T *q = query + p.row(bi, h, i) * p.d;
        double maxScore = minusInf;
        for (int64_t j = 0; j < p.skv; ++j) {
          if (causal && keyPositions[j] > queryPositions[i]) {
            scores[j] = minusInf;
            continue;
          }
          scores[j] = p.scale * dot(q, key + p.kvRow(bi, h, j) * p.d, p.d);
          maxScore = std::max(maxScore, scores[j]);
        }
        if (maxScore == minusInf)
          continue; // No key of this block is visible to the row.
        double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < p.skv; ++j) {
          if (scores[j] == minusInf)
            continue;
          double e = std::exp(scores[j] - maxScore);
          sum += e;
          const T *v = value + p.kvRow(bi, h, j) * p.dv;
          for (int64_t c = 0; c < p.dv; ++c)
            acc[c] += e * v[c];
        }
        double blockLse = maxScore + std::log(sum);
        T *o = out + p.row(bi, h, i) * p.dv;
        T &rowLse = lse[p.row(bi, h, i)];
        double old = static_cast<double>(rowLse);
        if (old == minusInf) {
          for (int64_t c = 0; c < p.dv; ++c)
            o[c] = static_cast<T>(acc[c] / sum);
          rowLse = static_cast<T>(blockLse);
          continue;
        }
        double top = std::max(old, blockLse);
        double merged =
            top + std::log(std::exp(old - top) + std::exp(blockLse - top));
        double keep = std::exp(old - merged);
        double add = std::exp(blockLse - merged) / sum;
        for (int64_t c = 0; c < p.dv; ++c)
          o[c] =
              static_cast<T>(static_cast<double>(o[c]) * keep + acc[c] * add);
        rowLse = static_cast<T>(merged);
      }
}

template <typename T>
void attentionBlockGrad(const T *query, const Shape &queryShape, const T *key,
                        const Shape &keyShape, const T *value,
                        const Shape &valueShape, const T *out, const T *dout,
                        const T *lse, const int64_t *queryPositions,
                        const int64_t *keyPositions, bool causal,
                        std::optional<double> scale, T *dquery, T *dkey,
                        T *dvalue) {
  Block p(queryShape, keyShape, valueShape, scale);
  std::vector<double> dkAcc(numElements(keyShape), 0.0);
  std::vector<double> dvAcc(numElements(valueShape), 0.0);
  std::vector<double> dq(p.d);
  for (int64_t bi = 0; bi < p.b; ++bi)
    for (int64_t h = 0; h < p.hq; ++h)
      for (int64_t i = 0; i < p.sq; ++i) {
        int64_t row = p.row(bi, h, i);
        const T *q = query + row * p.d;
        const T *dO = dout + row * p.dv;
        double rowLse = static_cast<double>(lse[row]);
        double delta = dot(dO, out + row * p.dv, p.dv);
        std::fill(dq.begin(), dq.end(), 0.0);
        bool any = false;
        for (int64_t j = 0; j < p.skv; ++j) {
          if (causal && keyPositions[j] > queryPositions[i])
            continue;
          any = true;
          int64_t kv = p.kvRow(bi, h, j);
          const T *k = key + kv * p.d;
          const T *v = value + kv * p.dv;
          double prob = std::exp(p.scale * dot(q, k, p.d) - rowLse);
          double dp = dot(dO, v, p.dv);
          double *dv = dvAcc.data() + kv * p.dv;
          for (int64_t c = 0; c < p.dv; ++c)
            dv[c] += prob * dO[c];
          double ds = p.scale * prob * (dp - delta);
          double *dk = dkAcc.data() + kv * p.d;
          for (int64_t c = 0; c < p.d; ++c) {
            dq[c] += ds * k[c];
            dk[c] += ds * q[c];
          }
        }
        if (!any)
          continue;
        T *dqOut = dquery + row * p.d;
        for (int64_t c = 0; c < p.d; ++c)
          dqOut[c] = static_cast<T>(static_cast<double>(dqOut[c]) + dq[c]);
      }
  for (size_t e = 0; e < dkAcc.size(); ++e)
    dkey[e] = static_cast<T>(static_cast<double>(dkey[e]) + dkAcc[e]);
  for (size_t e = 0; e < dvAcc.size(); ++e)
    dvalue[e] = static_cast<T>(static_cast<double>(dvalue[e]) + dvAcc[e]);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void copySequenceRows<T>(const T *, int64_t, int64_t, T *, int64_t, \
                                    int64_t, int64_t, int64_t, int64_t);       \
  template void attentionBlock<T>(const T *, const Shape &, const T *,         \
                                  const Shape &, const T *, const Shape &,     \
                                  const int64_t *, const int64_t *, bool,      \
                                  std::optional<double>, T *, T *);            \
  template void attentionBlockGrad<T>(                                         \
      const T *, const Shape &, const T *, const Shape &, const T *,           \
      const Shape &, const T *, const T *, const T *, const int64_t *,         \
      const int64_t *, bool, std::optional<double>, T *, T *, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

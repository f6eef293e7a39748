//===- Attention.cu - CUDA kernels for attention, rope and embeddings -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The sequence-mixing ops: scaled dot-product attention and its gradient
// (Attention.h), rotary embeddings (Rope.h) and embedding lookups and their
// gradients (Embedding.h).
//
// Attention runs one warp per row. The lanes split the head dim: a score is
// a warp-wide sum of lane partial dot products (double), and each lane
// accumulates its columns of the output (or of dquery, dkey, dvalue) in
// double registers, kSlots per lane. The forward pass reads the keys twice
// (max, then exponentials and values); the gradient recomputes the
// probabilities from per-row statistics (max, sum, and delta = dout . out)
// that its query-row kernel stores for its key-row kernel.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "loom/Runtime/CUDA/Attention.h"
#include "loom/Runtime/CUDA/Embedding.h"
#include "loom/Runtime/CUDA/Rope.h"

#include <cmath>
#include <string>

namespace loom::runtime::cuda {

using namespace detail;

namespace {

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

constexpr int kSlots = kMaxAttentionHeadDim / 32;
constexpr int kWarpsPerBlock = 4;

/// The problem's sizes, as the host's Problem struct.
struct AttentionDims {
  int64_t b, hq, sq, d, hkv, skv, dv, group;
  double scale;
  bool causal;
  bool hasMask;
  int64_t maskStride[4]; // Over [B, Hq, Sq, Skv].

  __device__ int64_t keysFor(int64_t i) const {
    if (!causal)
      return skv;
    int64_t n = i + (skv - sq) + 1;
    return n < 0 ? 0 : (n > skv ? skv : n);
  }
  __device__ int64_t queryOffset(int64_t bi, int64_t h, int64_t i) const {
    return ((bi * hq + h) * sq + i) * d;
  }
  __device__ int64_t keyOffset(int64_t bi, int64_t h, int64_t j) const {
    return ((bi * hkv + h / group) * skv + j) * d;
  }
  __device__ int64_t valueOffset(int64_t bi, int64_t h, int64_t j) const {
    return ((bi * hkv + h / group) * skv + j) * dv;
  }
  __device__ int64_t outOffset(int64_t bi, int64_t h, int64_t i) const {
    return ((bi * hq + h) * sq + i) * dv;
  }
};

AttentionDims makeAttentionDims(const Shape &queryShape, const Shape &keyShape,
                                const Shape &valueShape, const void *mask,
                                const Shape &maskShape, bool causal,
                                std::optional<double> scale) {
  AttentionDims p;
  p.b = queryShape[0];
  p.hq = queryShape[1];
  p.sq = queryShape[2];
  p.d = queryShape[3];
  p.hkv = keyShape[1];
  p.skv = keyShape[2];
  p.dv = valueShape[3];
  p.group = p.hkv ? p.hq / p.hkv : 1;
  p.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(p.d));
  p.causal = causal;
  p.hasMask = mask != nullptr;
  if (mask) {
    std::vector<int64_t> strides =
        broadcastStrides({p.b, p.hq, p.sq, p.skv}, maskShape);
    for (int k = 0; k < 4; ++k)
      p.maskStride[k] = strides[k];
  }
  if (p.d > kMaxAttentionHeadDim || p.dv > kMaxAttentionHeadDim) {
    // The emitter rejects larger head dims; reaching this is a Loom bug.
    std::fprintf(stderr, "loom: rank %d: attention head dim %lld exceeds %d\n",
                 reportedRank(), static_cast<long long>(std::max(p.d, p.dv)),
                 kMaxAttentionHeadDim);
    std::abort();
  }
  return p;
}

/// The scaled, masked score of query row `q` and key row `k`, on every lane.
template <typename T>
__device__ double score(const AttentionDims &p, const T *q, const T *k,
                        const T *mask, int64_t bi, int64_t h, int64_t i,
                        int64_t j, int lane) {
  double dot = 0;
  for (int64_t c = lane; c < p.d; c += 32)
    dot += static_cast<double>(q[c]) * k[c];
  double s = p.scale * warpSum(dot);
  if (p.hasMask)
    s += mask[bi * p.maskStride[0] + h * p.maskStride[1] + i * p.maskStride[2] +
              j * p.maskStride[3]];
  return s;
}

/// `a . b` over `n` elements, on every lane.
template <typename T>
__device__ double warpDot(const T *a, const T *b, int64_t n, int lane) {
  double dot = 0;
  for (int64_t c = lane; c < n; c += 32)
    dot += static_cast<double>(a[c]) * b[c];
  return warpSum(dot);
}

/// The row's max score and sum of exponentials.
template <typename T>
__device__ void rowStatistics(const AttentionDims &p, const T *query,
                              const T *key, const T *mask, int64_t bi,
                              int64_t h, int64_t i, int lane, double &maxScore,
                              double &sum) {
  int64_t n = p.keysFor(i);
  const T *q = query + p.queryOffset(bi, h, i);
  maxScore = -INFINITY;
  for (int64_t j = 0; j < n; ++j)
    maxScore = fmax(maxScore, score(p, q, key + p.keyOffset(bi, h, j), mask, bi,
                                    h, i, j, lane));
  sum = 0;
  for (int64_t j = 0; j < n; ++j)
    sum +=
        exp(score(p, q, key + p.keyOffset(bi, h, j), mask, bi, h, i, j, lane) -
            maxScore);
}

/// Decodes a warp's row index into (batch, head, row); false past the end.
__device__ bool warpRow(int64_t rows, int64_t heads, int64_t seq, int64_t &bi,
                        int64_t &h, int64_t &i) {
  int64_t row =
      static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= rows)
    return false;
  i = row % seq;
  h = (row / seq) % heads;
  bi = row / (seq * heads);
  return true;
}

template <typename T>
__global__ void attentionKernel(AttentionDims p, const T *query, const T *key,
                                const T *value, const T *mask, T *result) {
  int64_t bi, h, i;
  if (!warpRow(p.b * p.hq * p.sq, p.hq, p.sq, bi, h, i))
    return;
  int lane = threadIdx.x % 32;
  double maxScore, sum;
  rowStatistics(p, query, key, mask, bi, h, i, lane, maxScore, sum);
  double acc[kSlots] = {};
  const T *q = query + p.queryOffset(bi, h, i);
  int64_t n = p.keysFor(i);
  for (int64_t j = 0; j < n; ++j) {
    double prob =
        exp(score(p, q, key + p.keyOffset(bi, h, j), mask, bi, h, i, j, lane) -
            maxScore) /
        sum;
    const T *v = value + p.valueOffset(bi, h, j);
    for (int t = 0; t < kSlots; ++t) {
      int64_t c = lane + 32 * t;
      if (c < p.dv)
        acc[t] += prob * v[c];
    }
  }
  T *o = result + p.outOffset(bi, h, i);
  for (int t = 0; t < kSlots; ++t) {
    int64_t c = lane + 32 * t;
    if (c < p.dv)
      o[c] = static_cast<T>(acc[t]);
  }
}

/// One warp per query row: dquery, and the row's statistics (max, sum,
/// delta) for attentionKeyGradKernel.
template <typename T>
__global__ void
attentionQueryGradKernel(AttentionDims p, const T *query, const T *key,
                         const T *value, const T *out, const T *dout,
                         const T *mask, T *dquery, double *stats) {
  int64_t bi, h, i;
  if (!warpRow(p.b * p.hq * p.sq, p.hq, p.sq, bi, h, i))
    return;
  int lane = threadIdx.x % 32;
  double maxScore, sum;
  rowStatistics(p, query, key, mask, bi, h, i, lane, maxScore, sum);
  const T *q = query + p.queryOffset(bi, h, i);
  const T *dO = dout + p.outOffset(bi, h, i);
  double delta = warpDot(dO, out + p.outOffset(bi, h, i), p.dv, lane);
  double dq[kSlots] = {};
  int64_t n = p.keysFor(i);
  for (int64_t j = 0; j < n; ++j) {
    const T *k = key + p.keyOffset(bi, h, j);
    double prob = exp(score(p, q, k, mask, bi, h, i, j, lane) - maxScore) / sum;
    double dp = warpDot(dO, value + p.valueOffset(bi, h, j), p.dv, lane);
    double ds = p.scale * prob * (dp - delta);
    for (int t = 0; t < kSlots; ++t) {
      int64_t c = lane + 32 * t;
      if (c < p.d)
        dq[t] += ds * k[c];
    }
  }
  T *dqOut = dquery + p.queryOffset(bi, h, i);
  for (int t = 0; t < kSlots; ++t) {
    int64_t c = lane + 32 * t;
    if (c < p.d)
      dqOut[c] = static_cast<T>(dq[t]);
  }
  if (lane == 0) {
    int64_t row = (bi * p.hq + h) * p.sq + i;
    stats[3 * row] = maxScore;
    stats[3 * row + 1] = sum;
    stats[3 * row + 2] = delta;
  }
}

/// One warp per key row: dkey and dvalue, summed over the query heads that
/// share the key head and over the query rows that attend the key, in the
/// host's order.
template <typename T>
__global__ void
attentionKeyGradKernel(AttentionDims p, const T *query, const T *key,
                       const T *value, const T *dout, const T *mask,
                       const double *stats, T *dkey, T *dvalue) {
  int64_t bi, hk, j;
  if (!warpRow(p.b * p.hkv * p.skv, p.hkv, p.skv, bi, hk, j))
    return;
  int lane = threadIdx.x % 32;
  // Any query head of the group addresses this key/value head.
  const T *k = key + p.keyOffset(bi, hk * p.group, j);
  const T *v = value + p.valueOffset(bi, hk * p.group, j);
  double dk[kSlots] = {}, dv[kSlots] = {};
  for (int64_t h = hk * p.group; h < (hk + 1) * p.group; ++h) {
    for (int64_t i = 0; i < p.sq; ++i) {
      if (j >= p.keysFor(i))
        continue;
      int64_t row = (bi * p.hq + h) * p.sq + i;
      const T *q = query + p.queryOffset(bi, h, i);
      const T *dO = dout + p.outOffset(bi, h, i);
      double prob =
          exp(score(p, q, k, mask, bi, h, i, j, lane) - stats[3 * row]) /
          stats[3 * row + 1];
      double dp = warpDot(dO, v, p.dv, lane);
      double ds = p.scale * prob * (dp - stats[3 * row + 2]);
      for (int t = 0; t < kSlots; ++t) {
        int64_t c = lane + 32 * t;
        if (c < p.dv)
          dv[t] += prob * dO[c];
        if (c < p.d)
          dk[t] += ds * q[c];
      }
    }
  }
  T *dkOut = dkey + ((bi * p.hkv + hk) * p.skv + j) * p.d;
  T *dvOut = dvalue + ((bi * p.hkv + hk) * p.skv + j) * p.dv;
  for (int t = 0; t < kSlots; ++t) {
    int64_t c = lane + 32 * t;
    if (c < p.d)
      dkOut[c] = static_cast<T>(dk[t]);
    if (c < p.dv)
      dvOut[c] = static_cast<T>(dv[t]);
  }
}

int64_t warpBlocks(int64_t rows) {
  return (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
}

//===----------------------------------------------------------------------===//
// Rope
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void ropeKernel(const T *input, int64_t b, int64_t heads,
                           int64_t seq, int64_t d, const int64_t *positions,
                           bool perBatch, double theta, double sign,
                           T *result) {
  int64_t half = d / 2;
  LOOM_GRID_LOOP(e, b * heads * seq * half) {
    int64_t i = e % half;
    int64_t s = (e / half) % seq;
    int64_t h = (e / (half * seq)) % heads;
    int64_t bi = e / (half * seq * heads);
    int64_t pos = !positions ? s : positions[perBatch ? bi * seq + s : s];
    double invFreq = pow(theta, -2.0 * static_cast<double>(i) / d);
    double angle = static_cast<double>(pos) * invFreq;
    double c = cos(angle), sn = sign * sin(angle);
    int64_t base = ((bi * heads + h) * seq + s) * d;
    double lo = input[base + i], hi = input[base + i + half];
    result[base + i] = static_cast<T>(lo * c - hi * sn);
    result[base + i + half] = static_cast<T>(hi * c + lo * sn);
  }
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

/// Row n of the result is table row ids[n] - offset; rows outside the table
/// are zeros (`check`: and an error).
template <typename T>
__global__ void embeddingKernel(const T *table, int64_t rows, int64_t hidden,
                                const int64_t *ids, int64_t count,
                                int64_t offset, bool check, T *result,
                                ErrorSink errors) {
  LOOM_GRID_LOOP(e, count * hidden) {
    int64_t n = e / hidden, h = e % hidden;
    int64_t local = ids[n] - offset;
    if (local < 0 || local >= rows) {
      if (check && h == 0)
        raiseError(errors, DeviceErrorKind::IdOutOfRange, ids[n], n, rows);
      result[e] = T(0);
      continue;
    }
    result[e] = table[local * hidden + h];
  }
}

/// Table row v, column h: the sum of dy's rows listed in
/// order[start[v] .. start[v + 1]].
template <typename T>
__global__ void embeddingGradKernel(const T *dy, int64_t hidden, int64_t rows,
                                    const int64_t *start, const int64_t *order,
                                    T *result) {
  LOOM_GRID_LOOP(e, rows * hidden) {
    int64_t v = e / hidden, h = e % hidden;
    double acc = 0;
    for (int64_t k = start[v]; k < start[v + 1]; ++k)
      acc += dy[order[k] * hidden + h];
    result[e] = static_cast<T>(acc);
  }
}

template <typename T>
Status launchEmbeddingGrad(cudaStream_t stream, const T *dy,
                           const Shape &dyShape, const int64_t *ids,
                           const Shape &idsShape, int64_t offset, int64_t rows,
                           bool check, T *result) {
  int64_t hidden = dyShape.back();
  int64_t count = numElements(idsShape);
  std::vector<int64_t> hostIds(static_cast<size_t>(count));
  if (count > 0)
    LOOM_CUDA_CHECK(cudaMemcpyAsync(hostIds.data(), ids,
                                    count * sizeof(int64_t),
                                    cudaMemcpyDeviceToHost, stream));
  LOOM_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (check)
    for (int64_t n = 0; n < count; ++n)
      if (hostIds[n] < 0 || hostIds[n] >= rows)
        return Status::failure("id " + std::to_string(hostIds[n]) +
                               " at index " + std::to_string(n) +
                               " is outside [0, " + std::to_string(rows) + ")");
  // Bucket the positions by local row, in position order (a counting sort).
  std::vector<int64_t> start(static_cast<size_t>(rows) + 1, 0), order;
  auto local = [&](int64_t n) { return hostIds[n] - offset; };
  auto inBlock = [&](int64_t n) { return local(n) >= 0 && local(n) < rows; };
  for (int64_t n = 0; n < count; ++n)
    if (inBlock(n))
      ++start[local(n) + 1];
  for (int64_t v = 0; v < rows; ++v)
    start[v + 1] += start[v];
  order.resize(static_cast<size_t>(start[rows]));
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  for (int64_t n = 0; n < count; ++n)
    if (inBlock(n))
      order[next[local(n)]++] = n;

  int64_t *deviceStart = nullptr, *deviceOrder = nullptr;
  LOOM_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&deviceStart),
                                  start.size() * sizeof(int64_t), stream));
  LOOM_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&deviceOrder),
                                  (order.size() + 1) * sizeof(int64_t),
                                  stream));
  // Pageable sources are staged before cudaMemcpyAsync returns, so the
  // vectors may go out of scope afterwards.
  LOOM_CUDA_CHECK(cudaMemcpyAsync(deviceStart, start.data(),
                                  start.size() * sizeof(int64_t),
                                  cudaMemcpyHostToDevice, stream));
  if (!order.empty())
    LOOM_CUDA_CHECK(cudaMemcpyAsync(deviceOrder, order.data(),
                                    order.size() * sizeof(int64_t),
                                    cudaMemcpyHostToDevice, stream));
  int64_t total = rows * hidden;
  LOOM_LAUNCH(embeddingGradKernel<T>, total ? blocksFor(total) : 0, kThreads,
              stream, dy, hidden, rows, deviceStart, deviceOrder, result);
  LOOM_CUDA_CHECK(cudaFreeAsync(deviceStart, stream));
  LOOM_CUDA_CHECK(cudaFreeAsync(deviceOrder, stream));
  return Status::success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

template <typename T>
void attention(cudaStream_t stream, const T *query, const Shape &queryShape,
               const T *key, const Shape &keyShape, const T *value,
               const Shape &valueShape, const T *mask, const Shape &maskShape,
               bool causal, std::optional<double> scale, T *result) {
  AttentionDims p = makeAttentionDims(queryShape, keyShape, valueShape, mask,
                                      maskShape, causal, scale);
  LOOM_LAUNCH(attentionKernel<T>, warpBlocks(p.b * p.hq * p.sq),
              32 * kWarpsPerBlock, stream, p, query, key, value, mask, result);
}

template <typename T>
void attentionGrad(cudaStream_t stream, const T *query, const Shape &queryShape,
                   const T *key, const Shape &keyShape, const T *value,
                   const Shape &valueShape, const T *out, const T *dout,
                   const T *mask, const Shape &maskShape, bool causal,
                   std::optional<double> scale, T *dquery, T *dkey, T *dvalue) {
  AttentionDims p = makeAttentionDims(queryShape, keyShape, valueShape, mask,
                                      maskShape, causal, scale);
  int64_t queryRows = p.b * p.hq * p.sq;
  double *stats = nullptr;
  if (queryRows > 0)
    LOOM_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&stats),
                                    3 * queryRows * sizeof(double), stream));
  LOOM_LAUNCH(attentionQueryGradKernel<T>, warpBlocks(queryRows),
              32 * kWarpsPerBlock, stream, p, query, key, value, out, dout,
              mask, dquery, stats);
  LOOM_LAUNCH(attentionKeyGradKernel<T>, warpBlocks(p.b * p.hkv * p.skv),
              32 * kWarpsPerBlock, stream, p, query, key, value, dout, mask,
              stats, dkey, dvalue);
  if (stats)
    LOOM_CUDA_CHECK(cudaFreeAsync(stats, stream));
}

template <typename T>
void rope(cudaStream_t stream, const T *input, const Shape &shape,
          const int64_t *positions, const Shape &positionsShape, double theta,
          bool inverse, T *result) {
  int64_t count = shape[0] * shape[1] * shape[2] * (shape[3] / 2);
  bool perBatch = positions && positionsShape.size() == 2;
  LOOM_LAUNCH(ropeKernel<T>, count ? blocksFor(count) : 0, kThreads, stream,
              input, shape[0], shape[1], shape[2], shape[3], positions,
              perBatch, theta, inverse ? -1.0 : 1.0, result);
}

template <typename T>
void embedding(cudaStream_t stream, const T *table, const Shape &tableShape,
               const int64_t *ids, const Shape &idsShape, T *result,
               ErrorSink errors) {
  int64_t count = numElements(idsShape) * tableShape[1];
  LOOM_LAUNCH(embeddingKernel<T>, count ? blocksFor(count) : 0, kThreads,
              stream, table, tableShape[0], tableShape[1], ids,
              numElements(idsShape), int64_t(0), true, result, errors);
}

template <typename T>
void embeddingBlock(cudaStream_t stream, const T *table,
                    const Shape &tableShape, const int64_t *ids,
                    const Shape &idsShape, int64_t offset, T *result) {
  int64_t count = numElements(idsShape) * tableShape[1];
  LOOM_LAUNCH(embeddingKernel<T>, count ? blocksFor(count) : 0, kThreads,
              stream, table, tableShape[0], tableShape[1], ids,
              numElements(idsShape), offset, false, result, ErrorSink{});
}

template <typename T>
Status embeddingGrad(cudaStream_t stream, const T *dy, const Shape &dyShape,
                     const int64_t *ids, const Shape &idsShape,
                     int64_t vocabSize, T *result) {
  return launchEmbeddingGrad(stream, dy, dyShape, ids, idsShape, 0, vocabSize,
                             true, result);
}

template <typename T>
Status embeddingGradBlock(cudaStream_t stream, const T *dy,
                          const Shape &dyShape, const int64_t *ids,
                          const Shape &idsShape, int64_t offset, int64_t rows,
                          T *result) {
  return launchEmbeddingGrad(stream, dy, dyShape, ids, idsShape, offset, rows,
                             false, result);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void attention<T>(cudaStream_t, const T *, const Shape &,           \
                             const T *, const Shape &, const T *,              \
                             const Shape &, const T *, const Shape &, bool,    \
                             std::optional<double>, T *);                      \
  template void attentionGrad<T>(                                              \
      cudaStream_t, const T *, const Shape &, const T *, const Shape &,        \
      const T *, const Shape &, const T *, const T *, const T *,               \
      const Shape &, bool, std::optional<double>, T *, T *, T *);              \
  template void rope<T>(cudaStream_t, const T *, const Shape &,                \
                        const int64_t *, const Shape &, double, bool, T *);    \
  template void embedding<T>(cudaStream_t, const T *, const Shape &,           \
                             const int64_t *, const Shape &, T *, ErrorSink);  \
  template void embeddingBlock<T>(cudaStream_t, const T *, const Shape &,      \
                                  const int64_t *, const Shape &, int64_t,     \
                                  T *);                                        \
  template Status embeddingGrad<T>(cudaStream_t, const T *, const Shape &,     \
                                   const int64_t *, const Shape &, int64_t,    \
                                   T *);                                       \
  template Status embeddingGradBlock<T>(cudaStream_t, const T *,               \
                                        const Shape &, const int64_t *,        \
                                        const Shape &, int64_t, int64_t, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::cuda

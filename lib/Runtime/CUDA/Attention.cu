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
// Attention is tiled, as FlashAttention is: a block owns a tile of query
// rows of one (batch, head), holds them in shared memory and walks the key
// and value rows in shared tiles, so each key row is read from global
// memory once per tile of query rows instead of once per query row. Within
// a warp, lane j computes the score of key j of the tile (a dot product in
// the head dim's order, in double, as the host computes it) and lane c
// accumulates output columns c, c + 32, ... in double registers; the
// forward keeps a running max and sum (the online softmax), so the S x S
// probabilities are never stored. The gradient recomputes the
// probabilities from per-row statistics (max, sum, and delta = dout . out)
// that its query-tile kernel stores for its key-tile kernel; each kernel
// writes only its own rows, so nothing is accumulated with atomics and
// results are deterministic.
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "loom/Runtime/CUDA/Attention.h"
#include "loom/Runtime/CUDA/Embedding.h"
#include "loom/Runtime/CUDA/Rope.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

namespace loom::runtime::cuda {

using namespace detail;

namespace {

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// The tile geometry of the kernels for head dims up to 32 * Slots.
/// kTile: query (or key) rows a block owns, and key (or query) rows per
/// tile it walks; the largest power of two up to a warp whose four shared
/// tiles of T fit in 46 KiB (a block's static shared memory is at most
/// 48 KiB). Rows are padded to kWidth so that lane j reading row j and lane
/// j + 1 reading row j + 1 at the same column hit different banks.
constexpr int attentionTile(int width, int bytes, int tile = 32) {
  return tile > 1 && 4 * tile * width * bytes > 46 * 1024
             ? attentionTile(width, bytes, tile / 2)
             : tile;
}

template <typename T, int Slots> struct AttentionTiling {
  static constexpr int kWidth = 32 * Slots + 1;
  static constexpr int kTile = attentionTile(kWidth, int(sizeof(T)));
  static constexpr int kWarps = kTile < 8 ? kTile : 8;
  static constexpr int kRowsPerWarp = kTile / kWarps;
  static constexpr int kThreads = 32 * kWarps;
};

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

/// The scaled, masked score of query row `q` and key row `k` (both in shared
/// memory), summed over the head dim in order, in Acc (double as on the
/// host, or float for low-precision inputs).
template <typename Acc, typename T>
__device__ Acc tileScore(const AttentionDims &p, const T *q, const T *k,
                            const T *mask, int64_t bi, int64_t h, int64_t i,
                            int64_t j) {
  Acc dot = 0;
  for (int64_t c = 0; c < p.d; ++c)
    dot += static_cast<Acc>(q[c]) * static_cast<Acc>(k[c]);
  Acc s = static_cast<Acc>(p.scale) * dot;
  if (p.hasMask)
    s += mask[bi * p.maskStride[0] + h * p.maskStride[1] + i * p.maskStride[2] +
              j * p.maskStride[3]];
  return s;
}

/// `a . b` over `n` elements of two rows in shared memory, in order.
template <typename Acc, typename T>
__device__ Acc rowDot(const T *a, const T *b, int64_t n) {
  Acc dot = 0;
  for (int64_t c = 0; c < n; ++c)
    dot += static_cast<Acc>(a[c]) * static_cast<Acc>(b[c]);
  return dot;
}

/// Lane `source`'s value, on every lane.
template <typename Acc>
__device__ inline Acc fromLane(Acc v, int source) {
  return __shfl_sync(0xffffffffu, v, source);
}

/// Adds to a lane's accumulators, for its columns c = lane + 32 t below
/// `columns`, the tile's rows weighted by the lanes' `weight`s: acc[t] +=
/// sum over k of (lane k's weight) * tile[k][c].
template <typename Acc, typename T, int Slots, int Width>
__device__ void accumulateTile(Acc (&acc)[Slots], Acc weight,
                               const T (*tile)[Width], int rows,
                               int64_t columns, int lane) {
  for (int k = 0; k < rows; ++k) {
    Acc wk = fromLane(weight, k);
    for (int t = 0; t < Slots; ++t) {
      int64_t c = lane + 32 * t;
      if (c < columns)
        acc[t] += wk * tile[k][c];
    }
  }
}

/// Writes a lane's accumulators (its columns below `columns`), divided by
/// `divisor`, to the row at `out`.
template <typename Acc, typename T, int Slots>
__device__ void storeRow(T *out, const Acc (&acc)[Slots], int64_t columns,
                         Acc divisor, int lane) {
  for (int t = 0; t < Slots; ++t) {
    int64_t c = lane + 32 * t;
    if (c < columns)
      out[c] = static_cast<T>(acc[t] / divisor);
  }
}

/// Folds one key tile's scores (the lane's key; -inf where it attends
/// none) into a row's running max and sum of exponentials (the online
/// softmax). False, on every lane, while no score so far is finite; else
/// `weight` is the lane's exp(s - max) and `rescale` the factor the
/// earlier sums take.
template <typename Acc>
__device__ inline bool foldScores(Acc s, Acc &runMax, Acc &runSum, Acc &weight,
                                  Acc &rescale) {
  Acc newMax = fmax(runMax, warpMax(s));
  if (newMax == -INFINITY)
    return false;
  weight = s == -INFINITY ? Acc(0) : exp(s - newMax);
  rescale = exp(runMax - newMax);
  runSum = runSum * rescale + warpSum(weight);
  runMax = newMax;
  return true;
}

/// Copies rows [0, count) of a [rows, width] row-major block at `src` into
/// `tile` (rows past `count` are zeros), with the whole block's threads.
template <typename T, int Width>
__device__ void loadTile(T (*tile)[Width], int tileRows, const T *src,
                         int64_t width, int64_t count) {
  for (int64_t e = threadIdx.x; e < tileRows * width; e += blockDim.x) {
    int64_t r = e / width, c = e % width;
    tile[r][c] = r < count ? src[r * width + c] : T(0);
  }
}

/// Decodes a block index into (batch, head, first row of the block's tile).
__device__ inline void tileOf(int64_t heads, int64_t seq, int tile,
                              int64_t &bi, int64_t &h, int64_t &first) {
  int64_t tiles = (seq + tile - 1) / tile;
  int64_t block = blockIdx.x;
  first = (block % tiles) * tile;
  h = (block / tiles) % heads;
  bi = block / (tiles * heads);
}

/// Forward: a block owns kTile query rows of one (batch, head) and walks the
/// key/value rows in tiles of kTile, keeping a running max, sum and weighted
/// sum of values per row (the online softmax); lane j scores key j of the
/// tile, lane c owns output columns c, c + 32, ....
template <typename T, typename Acc, int Slots>
__global__ void attentionKernel(AttentionDims p, const T *query, const T *key,
                                const T *value, const T *mask, T *result) {
  using L = AttentionTiling<T, Slots>;
  constexpr int kTile = L::kTile, kRows = L::kRowsPerWarp;
  __shared__ T qs[kTile][L::kWidth], ks[kTile][L::kWidth],
      vs[kTile][L::kWidth];
  int64_t bi, h, i0;
  tileOf(p.hq, p.sq, kTile, bi, h, i0);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  loadTile(qs, kTile, query + p.queryOffset(bi, h, i0), p.d,
           min(int64_t(kTile), p.sq - i0));
  Acc runMax[kRows], runSum[kRows], acc[kRows][Slots];
  for (int r = 0; r < kRows; ++r) {
    runMax[r] = -INFINITY;
    runSum[r] = 0;
    for (int t = 0; t < Slots; ++t)
      acc[r][t] = 0;
  }
  int64_t keys = p.keysFor(min(i0 + kTile, p.sq) - 1);
  for (int64_t j0 = 0; j0 < keys; j0 += kTile) {
    __syncthreads();
    int64_t count = min(int64_t(kTile), p.skv - j0);
    loadTile(ks, kTile, key + p.keyOffset(bi, h, j0), p.d, count);
    loadTile(vs, kTile, value + p.valueOffset(bi, h, j0), p.dv, count);
    __syncthreads();
    for (int r = 0; r < kRows; ++r) {
      int row = warp * kRows + r;
      int64_t i = i0 + row, j = j0 + lane;
      if (i >= p.sq) // The same for the whole warp.
        continue;
      bool valid = lane < kTile && j < p.keysFor(i);
      Acc s = valid ? tileScore<Acc>(p, qs[row], ks[lane], mask, bi, h, i, j)
                       : -INFINITY;
      Acc weight, rescale;
      if (!foldScores(s, runMax[r], runSum[r], weight, rescale))
        continue;
      for (int t = 0; t < Slots; ++t)
        acc[r][t] *= rescale;
      accumulateTile(acc[r], weight, vs, kTile, p.dv, lane);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    int64_t i = i0 + warp * kRows + r;
    if (i >= p.sq)
      continue;
    // A row that attends no key has a zero sum and zero accumulators.
    storeRow(result + p.outOffset(bi, h, i), acc[r], p.dv,
             runSum[r] > 0 ? runSum[r] : Acc(1), lane);
  }
}

/// dquery, and each row's statistics (max, sum, delta = dout . out) for
/// attentionKeyGradKernel. A block owns kTile query rows: one walk over the
/// key tiles finds each row's max and sum, a second one recomputes the
/// probabilities and accumulates dquery.
template <typename T, typename Acc, int Slots>
__global__ void
attentionQueryGradKernel(AttentionDims p, const T *query, const T *key,
                         const T *value, const T *out, const T *dout,
                         const T *mask, T *dquery, Acc *stats) {
  using L = AttentionTiling<T, Slots>;
  constexpr int kTile = L::kTile, kRows = L::kRowsPerWarp;
  __shared__ T qs[kTile][L::kWidth], dos[kTile][L::kWidth],
      ks[kTile][L::kWidth], vs[kTile][L::kWidth];
  int64_t bi, h, i0;
  tileOf(p.hq, p.sq, kTile, bi, h, i0);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int64_t rows = min(int64_t(kTile), p.sq - i0);
  loadTile(qs, kTile, query + p.queryOffset(bi, h, i0), p.d, rows);
  loadTile(dos, kTile, dout + p.outOffset(bi, h, i0), p.dv, rows);
  Acc rowMax[kRows], rowSum[kRows], delta[kRows], dq[kRows][Slots];
  for (int r = 0; r < kRows; ++r) {
    rowMax[r] = -INFINITY;
    rowSum[r] = 0;
    for (int t = 0; t < Slots; ++t)
      dq[r][t] = 0;
  }
  int64_t keys = p.keysFor(min(i0 + kTile, p.sq) - 1);
  // Pass 1: max and sum of exponentials.
  for (int64_t j0 = 0; j0 < keys; j0 += kTile) {
    __syncthreads();
    loadTile(ks, kTile, key + p.keyOffset(bi, h, j0), p.d,
             min(int64_t(kTile), p.skv - j0));
    __syncthreads();
    for (int r = 0; r < kRows; ++r) {
      int row = warp * kRows + r;
      int64_t i = i0 + row, j = j0 + lane;
      if (i >= p.sq)
        continue;
      bool valid = lane < kTile && j < p.keysFor(i);
      Acc s = valid ? tileScore<Acc>(p, qs[row], ks[lane], mask, bi, h, i, j)
                       : -INFINITY;
      Acc weight, rescale;
      foldScores(s, rowMax[r], rowSum[r], weight, rescale);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    int64_t i = i0 + warp * kRows + r;
    Acc part = 0;
    if (i < p.sq) {
      const T *o = out + p.outOffset(bi, h, i);
      for (int64_t c = lane; c < p.dv; c += 32)
        part += static_cast<Acc>(dos[warp * kRows + r][c]) * o[c];
    }
    delta[r] = warpSum(part);
  }
  // Pass 2: the probabilities again, and dquery.
  for (int64_t j0 = 0; j0 < keys; j0 += kTile) {
    __syncthreads();
    int64_t count = min(int64_t(kTile), p.skv - j0);
    loadTile(ks, kTile, key + p.keyOffset(bi, h, j0), p.d, count);
    loadTile(vs, kTile, value + p.valueOffset(bi, h, j0), p.dv, count);
    __syncthreads();
    for (int r = 0; r < kRows; ++r) {
      int row = warp * kRows + r;
      int64_t i = i0 + row, j = j0 + lane;
      if (i >= p.sq)
        continue;
      Acc ds = 0;
      if (lane < kTile && j < p.keysFor(i) && rowSum[r] > 0) {
        Acc prob =
            exp(tileScore<Acc>(p, qs[row], ks[lane], mask, bi, h, i, j) -
                rowMax[r]) /
            rowSum[r];
        Acc dp = rowDot<Acc>(dos[row], vs[lane], p.dv);
        ds = static_cast<Acc>(p.scale) * prob * (dp - delta[r]);
      }
      accumulateTile(dq[r], ds, ks, kTile, p.d, lane);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    int64_t i = i0 + warp * kRows + r;
    if (i >= p.sq)
      continue;
    storeRow(dquery + p.queryOffset(bi, h, i), dq[r], p.d, Acc(1), lane);
    if (lane == 0) {
      int64_t statsRow = (bi * p.hq + h) * p.sq + i;
      stats[3 * statsRow] = rowMax[r];
      stats[3 * statsRow + 1] = rowSum[r];
      stats[3 * statsRow + 2] = delta[r];
    }
  }
}

/// dkey and dvalue: a block owns kTile key rows of one (batch, key/value
/// head) and walks the query rows that attend them, in tiles of kTile, for
/// every query head of the group; lane i takes query row i of the tile.
template <typename T, typename Acc, int Slots>
__global__ void
attentionKeyGradKernel(AttentionDims p, const T *query, const T *key,
                       const T *value, const T *dout, const T *mask,
                       const Acc *stats, T *dkey, T *dvalue) {
  using L = AttentionTiling<T, Slots>;
  constexpr int kTile = L::kTile, kRows = L::kRowsPerWarp;
  __shared__ T qs[kTile][L::kWidth], dos[kTile][L::kWidth],
      ks[kTile][L::kWidth], vs[kTile][L::kWidth];
  __shared__ Acc rowStats[kTile][3];
  int64_t bi, hk, j0;
  tileOf(p.hkv, p.skv, kTile, bi, hk, j0);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Any query head of the group addresses this key/value head.
  int64_t keys = min(int64_t(kTile), p.skv - j0);
  loadTile(ks, kTile, key + p.keyOffset(bi, hk * p.group, j0), p.d, keys);
  loadTile(vs, kTile, value + p.valueOffset(bi, hk * p.group, j0), p.dv, keys);
  Acc dk[kRows][Slots], dv[kRows][Slots];
  for (int r = 0; r < kRows; ++r)
    for (int t = 0; t < Slots; ++t)
      dk[r][t] = dv[r][t] = 0;
  // The first query row that attends key j0 (causal: keysFor(i) > j0).
  int64_t firstQuery =
      p.causal ? max(int64_t(0), j0 - (p.skv - p.sq)) : int64_t(0);
  for (int64_t h = hk * p.group; h < (hk + 1) * p.group; ++h) {
    for (int64_t i0 = firstQuery; i0 < p.sq; i0 += kTile) {
      __syncthreads();
      int64_t rows = min(int64_t(kTile), p.sq - i0);
      loadTile(qs, kTile, query + p.queryOffset(bi, h, i0), p.d, rows);
      loadTile(dos, kTile, dout + p.outOffset(bi, h, i0), p.dv, rows);
      for (int e = threadIdx.x; e < 3 * kTile; e += blockDim.x) {
        int64_t row = (bi * p.hq + h) * p.sq + i0 + e / 3;
        rowStats[e / 3][e % 3] = e / 3 < rows ? stats[3 * row + e % 3] : Acc(0);
      }
      __syncthreads();
      for (int r = 0; r < kRows; ++r) {
        int row = warp * kRows + r;
        int64_t j = j0 + row, i = i0 + lane;
        if (j >= p.skv)
          continue;
        Acc prob = 0, ds = 0;
        if (lane < kTile && i < p.sq && j < p.keysFor(i) &&
            rowStats[lane][1] > 0) {
          prob = exp(tileScore<Acc>(p, qs[lane], ks[row], mask, bi, h, i, j) -
                     rowStats[lane][0]) /
                 rowStats[lane][1];
          Acc dp = rowDot<Acc>(dos[lane], vs[row], p.dv);
          ds = static_cast<Acc>(p.scale) * prob * (dp - rowStats[lane][2]);
        }
        accumulateTile(dv[r], prob, dos, kTile, p.dv, lane);
        accumulateTile(dk[r], ds, qs, kTile, p.d, lane);
      }
    }
  }
  for (int r = 0; r < kRows; ++r) {
    int64_t j = j0 + warp * kRows + r;
    if (j >= p.skv)
      continue;
    storeRow(dkey + ((bi * p.hkv + hk) * p.skv + j) * p.d, dk[r], p.d, Acc(1),
             lane);
    storeRow(dvalue + ((bi * p.hkv + hk) * p.skv + j) * p.dv, dv[r], p.dv,
             Acc(1), lane);
  }
}

/// Blocks of `tile` rows over `rows` rows of each of `matrices` (batch x
/// heads).
int64_t tileBlocks(int64_t matrices, int64_t rows, int tile) {
  return matrices * ((rows + tile - 1) / tile);
}

/// Calls `launch(std::integral_constant<int, Slots>())` with the smallest
/// Slots (1, 2, 4 or 8) whose 32 * Slots columns hold both head dims.
template <typename Launch>
void withSlots(const AttentionDims &p, Launch &&launch) {
  int64_t dim = std::max(p.d, p.dv);
  if (dim <= 32)
    launch(std::integral_constant<int, 1>());
  else if (dim <= 64)
    launch(std::integral_constant<int, 2>());
  else if (dim <= 128)
    launch(std::integral_constant<int, 4>());
  else
    launch(std::integral_constant<int, 8>());
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

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

/// attention() with the kernels' sums in Acc.
template <typename T, typename Acc>
void launchAttention(cudaStream_t stream, const T *query,
                     const Shape &queryShape, const T *key,
                     const Shape &keyShape, const T *value,
                     const Shape &valueShape, const T *mask,
                     const Shape &maskShape, bool causal,
                     std::optional<double> scale, T *result) {
  AttentionDims p = makeAttentionDims(queryShape, keyShape, valueShape, mask,
                                      maskShape, causal, scale);
  withSlots(p, [&](auto slots) {
    using L = AttentionTiling<T, decltype(slots)::value>;
    auto *kernel = &attentionKernel<T, Acc, decltype(slots)::value>;
    LOOM_LAUNCH(kernel, tileBlocks(p.b * p.hq, p.sq, L::kTile), L::kThreads,
                stream, p, query, key, value, mask, result);
  });
}

/// attentionGrad() with the kernels' sums (and the row statistics) in Acc.
template <typename T, typename Acc>
void launchAttentionGrad(cudaStream_t stream, const T *query,
                         const Shape &queryShape, const T *key,
                         const Shape &keyShape, const T *value,
                         const Shape &valueShape, const T *out, const T *dout,
                         const T *mask, const Shape &maskShape, bool causal,
                         std::optional<double> scale, T *dquery, T *dkey,
                         T *dvalue) {
  AttentionDims p = makeAttentionDims(queryShape, keyShape, valueShape, mask,
                                      maskShape, causal, scale);
  int64_t queryRows = p.b * p.hq * p.sq;
  Acc *stats = nullptr;
  if (queryRows > 0)
    LOOM_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void **>(&stats),
                                    3 * queryRows * sizeof(Acc), stream));
  withSlots(p, [&](auto slots) {
    using L = AttentionTiling<T, decltype(slots)::value>;
    auto *queryKernel =
        &attentionQueryGradKernel<T, Acc, decltype(slots)::value>;
    auto *keyKernel = &attentionKeyGradKernel<T, Acc, decltype(slots)::value>;
    LOOM_LAUNCH(queryKernel, tileBlocks(p.b * p.hq, p.sq, L::kTile),
                L::kThreads, stream, p, query, key, value, out, dout, mask,
                dquery, stats);
    LOOM_LAUNCH(keyKernel, tileBlocks(p.b * p.hkv, p.skv, L::kTile),
                L::kThreads, stream, p, query, key, value, dout, mask, stats,
                dkey, dvalue);
  });
  if (stats)
    LOOM_CUDA_CHECK(cudaFreeAsync(stats, stream));
}

/// The sums of the low-precision kernels: float in an f32 run, double (the
/// interpreter's f64 run) otherwise.
template <typename T>
using LowPrecisionSum = std::conditional_t<std::is_same_v<T, float>, float,
                                           double>;

} // namespace

template <typename T>
void attention(cudaStream_t stream, const T *query, const Shape &queryShape,
               const T *key, const Shape &keyShape, const T *value,
               const Shape &valueShape, const T *mask, const Shape &maskShape,
               bool causal, std::optional<double> scale, T *result) {
  launchAttention<T, double>(stream, query, queryShape, key, keyShape, value,
                             valueShape, mask, maskShape, causal, scale,
                             result);
}

template <typename T>
void attentionLowPrecision(cudaStream_t stream, const T *query,
                           const Shape &queryShape, const T *key,
                           const Shape &keyShape, const T *value,
                           const Shape &valueShape, const T *mask,
                           const Shape &maskShape, bool causal,
                           std::optional<double> scale, T *result) {
  launchAttention<T, LowPrecisionSum<T>>(stream, query, queryShape, key,
                                         keyShape, value, valueShape, mask,
                                         maskShape, causal, scale, result);
}

template <typename T>
void attentionGrad(cudaStream_t stream, const T *query, const Shape &queryShape,
                   const T *key, const Shape &keyShape, const T *value,
                   const Shape &valueShape, const T *out, const T *dout,
                   const T *mask, const Shape &maskShape, bool causal,
                   std::optional<double> scale, T *dquery, T *dkey, T *dvalue) {
  launchAttentionGrad<T, double>(stream, query, queryShape, key, keyShape,
                                 value, valueShape, out, dout, mask, maskShape,
                                 causal, scale, dquery, dkey, dvalue);
}

template <typename T>
void attentionGradLowPrecision(
    cudaStream_t stream, const T *query, const Shape &queryShape, const T *key,
    const Shape &keyShape, const T *value, const Shape &valueShape,
    const T *out, const T *dout, const T *mask, const Shape &maskShape,
    bool causal, std::optional<double> scale, T *dquery, T *dkey, T *dvalue) {
  launchAttentionGrad<T, LowPrecisionSum<T>>(
      stream, query, queryShape, key, keyShape, value, valueShape, out, dout,
      mask, maskShape, causal, scale, dquery, dkey, dvalue);
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
  template void attentionLowPrecision<T>(                                      \
      cudaStream_t, const T *, const Shape &, const T *, const Shape &,        \
      const T *, const Shape &, const T *, const Shape &, bool,                \
      std::optional<double>, T *);                                             \
  template void attentionGradLowPrecision<T>(                                  \
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

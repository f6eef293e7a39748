//===- RingAttention.cpp - Ring attention over MPI ------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Zigzag exchange: each rank's contiguous block is chunks (2i, 2i+1); its
//    even chunk goes to that chunk's zigzag owner by one permutation of the
//    group and its odd chunk by another (each is a bijection: every rank
//    holds exactly one even and one odd chunk in either order).
// 2. Ring: n steps of the block kernel; between steps the key/value blocks
//    (and, backward, their dkey/dvalue accumulators) move one member on
//    (collective permute, shift 1). Backward, a last shift returns the
//    accumulators to their owners. The transfers are blocking here: the
//    host runtime does not overlap them with the block compute.
// 3. The exchange back, with the two permutations inverted.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/MPI/RingAttention.h"

#include "loom/Runtime/Host/RingAttention.h"

#include <limits>
#include <utility>

namespace loom::runtime::mpi {

namespace host = ::loom::runtime::host;

#define LOOM_RETURN_IF_FAILED(expr)                                            \
  do {                                                                         \
    Status status_ = (expr);                                                   \
    if (!status_.ok())                                                         \
      return status_;                                                          \
  } while (false)

namespace {

/// One rank's view of the zigzag split of a group of `n`.
struct Zigzag {
  Communicator &comm;
  const AxisList &axes;
  int64_t n, r;

  /// The chunk of each parity this rank computes (zigzag block: chunk r,
  /// then chunk 2n-1-r; r and 2n-1-r have opposite parities).
  int64_t evenChunk() const { return r % 2 == 0 ? r : 2 * n - 1 - r; }
  bool evenFirst() const { return r % 2 == 0; }

  /// Contiguous blocks -> zigzag blocks of `shape` ([B, H, S, W...]).
  template <typename T>
  Status toZigzag(const T *in, const Shape &shape, std::vector<T> &zig) {
    return exchange(in, shape, zig, /*toZig=*/true);
  }
  template <typename T>
  Status toContiguous(const T *zig, const Shape &shape, T *out) {
    std::vector<T> result;
    LOOM_RETURN_IF_FAILED(exchange(zig, shape, result, /*toZig=*/false));
    std::copy(result.begin(), result.end(), out);
    return Status::success();
  }

private:
  template <typename T>
  Status exchange(const T *in, const Shape &shape, std::vector<T> &result,
                  bool toZig) {
    int64_t seq = shape[2], half = seq / 2, outer = shape[0] * shape[1];
    int64_t width = 1;
    for (size_t d = 3; d < shape.size(); ++d)
      width *= shape[d];
    Shape halfShape = {outer, half, width};
    int64_t halfCount = outer * half * width;
    // The rows of each parity this rank sends: contiguous halves 0 and 1, or
    // the zigzag halves holding its even and odd chunk.
    int64_t evenRow = toZig ? 0 : (evenFirst() ? 0 : half);
    int64_t oddRow = toZig ? half : (evenFirst() ? half : 0);
    std::vector<T> send(2 * halfCount), recv(2 * halfCount);
    host::copySequenceRows<T>(in, seq, evenRow, send.data(), half, 0, half,
                              outer, width);
    host::copySequenceRows<T>(in, seq, oddRow, send.data() + halfCount, half, 0,
                              half, outer, width);
    // Member s's even chunk is 2s (contiguous) or evenChunk(s) (zigzag).
    std::vector<std::pair<int64_t, int64_t>> evenPairs, oddPairs;
    for (int64_t s = 0; s < n; ++s) {
      int64_t even = 2 * s, odd = 2 * s + 1;
      int64_t zigEven = s % 2 == 0 ? s : 2 * n - 1 - s;
      int64_t zigOdd = s % 2 == 0 ? 2 * n - 1 - s : s;
      if (toZig) {
        evenPairs.emplace_back(s, host::zigzagOwner(even, n));
        oddPairs.emplace_back(s, host::zigzagOwner(odd, n));
      } else {
        evenPairs.emplace_back(s, host::contiguousOwner(zigEven));
        oddPairs.emplace_back(s, host::contiguousOwner(zigOdd));
      }
    }
    LOOM_RETURN_IF_FAILED(comm.collectivePermute(send.data(), halfShape, axes,
                                                 evenPairs, recv.data()));
    LOOM_RETURN_IF_FAILED(comm.collectivePermute(send.data() + halfCount,
                                                 halfShape, axes, oddPairs,
                                                 recv.data() + halfCount));
    // Received: this rank's even and odd chunk; place them by the order of
    // the target block.
    result.assign(outer * seq * width, T(0));
    int64_t evenTo = toZig ? (evenFirst() ? 0 : half) : 0;
    int64_t oddTo = toZig ? (evenFirst() ? half : 0) : half;
    host::copySequenceRows<T>(recv.data(), half, 0, result.data(), seq, evenTo,
                              half, outer, width);
    host::copySequenceRows<T>(recv.data() + halfCount, half, 0, result.data(),
                              seq, oddTo, half, outer, width);
    return Status::success();
  }
};

/// Shifts `buffer` one member on around the ring, in place.
template <typename T>
Status passOn(Communicator &comm, const AxisList &axes, std::vector<T> &buffer,
              const Shape &shape) {
  return comm.collectivePermute(buffer.data(), shape, axes, int64_t(1),
                                buffer.data());
}

Status groupOf(Communicator &comm, const AxisList &axes, int64_t &n,
               int64_t &r) {
  const DeviceMesh &mesh = comm.getMesh();
  n = mesh.getGroupSize(axes);
  r = 0;
  for (const std::string &axis : axes) {
    int64_t index = 0;
    LOOM_RETURN_IF_FAILED(comm.axisIndex(axis, index));
    int64_t size = mesh.getGroupSize(AxisList{axis});
    r = r * size + index;
  }
  return Status::success();
}

} // namespace

template <typename T>
Status ringAttention(Communicator &comm, const AxisList &axes, const T *query,
                     const Shape &queryShape, const T *key,
                     const Shape &keyShape, const T *value,
                     const Shape &valueShape, bool causal,
                     std::optional<double> scale, T *out, T *lse) {
  int64_t n = 1, r = 0;
  LOOM_RETURN_IF_FAILED(groupOf(comm, axes, n, r));
  Zigzag zz{comm, axes, n, r};
  std::vector<T> q, k, v;
  LOOM_RETURN_IF_FAILED(zz.toZigzag(query, queryShape, q));
  LOOM_RETURN_IF_FAILED(zz.toZigzag(key, keyShape, k));
  LOOM_RETURN_IF_FAILED(zz.toZigzag(value, valueShape, v));
  Shape outShape = {queryShape[0], queryShape[1], queryShape[2], valueShape[3]};
  Shape lseShape = {queryShape[0], queryShape[1], queryShape[2]};
  std::vector<T> o(numElements(outShape), T(0));
  std::vector<T> l(numElements(lseShape), -std::numeric_limits<T>::infinity());
  int64_t chunk = queryShape[2] / 2;
  std::vector<int64_t> mine = host::zigzagPositions(r, n, chunk);
  for (int64_t t = 0; t < n; ++t) {
    std::vector<int64_t> theirs =
        host::zigzagPositions((r - t + n) % n, n, chunk);
    host::attentionBlock<T>(q.data(), queryShape, k.data(), keyShape, v.data(),
                            valueShape, mine.data(), theirs.data(), causal,
                            scale, o.data(), l.data());
    if (t + 1 < n) {
      LOOM_RETURN_IF_FAILED(passOn(comm, axes, k, keyShape));
      LOOM_RETURN_IF_FAILED(passOn(comm, axes, v, valueShape));
    }
  }
  LOOM_RETURN_IF_FAILED(zz.toContiguous(o.data(), outShape, out));
  return zz.toContiguous(l.data(), lseShape, lse);
}

template <typename T>
Status ringAttentionGrad(Communicator &comm, const AxisList &axes,
                         const T *query, const Shape &queryShape, const T *key,
                         const Shape &keyShape, const T *value,
                         const Shape &valueShape, const T *out, const T *dout,
                         const T *lse, bool causal, std::optional<double> scale,
                         T *dquery, T *dkey, T *dvalue) {
  int64_t n = 1, r = 0;
  LOOM_RETURN_IF_FAILED(groupOf(comm, axes, n, r));
  Zigzag zz{comm, axes, n, r};
  Shape outShape = {queryShape[0], queryShape[1], queryShape[2], valueShape[3]};
  Shape lseShape = {queryShape[0], queryShape[1], queryShape[2]};
  std::vector<T> q, k, v, o, dO, l;
  LOOM_RETURN_IF_FAILED(zz.toZigzag(query, queryShape, q));
  LOOM_RETURN_IF_FAILED(zz.toZigzag(key, keyShape, k));
  LOOM_RETURN_IF_FAILED(zz.toZigzag(value, valueShape, v));
  LOOM_RETURN_IF_FAILED(zz.toZigzag(out, outShape, o));
  LOOM_RETURN_IF_FAILED(zz.toZigzag(dout, outShape, dO));
  LOOM_RETURN_IF_FAILED(zz.toZigzag(lse, lseShape, l));
  std::vector<T> dq(q.size(), T(0)), dk(k.size(), T(0)), dv(v.size(), T(0));
  int64_t chunk = queryShape[2] / 2;
  std::vector<int64_t> mine = host::zigzagPositions(r, n, chunk);
  for (int64_t t = 0; t < n; ++t) {
    std::vector<int64_t> theirs =
        host::zigzagPositions((r - t + n) % n, n, chunk);
    host::attentionBlockGrad<T>(q.data(), queryShape, k.data(), keyShape,
                                v.data(), valueShape, o.data(), dO.data(),
                                l.data(), mine.data(), theirs.data(), causal,
                                scale, dq.data(), dk.data(), dv.data());
    if (t + 1 < n) {
      LOOM_RETURN_IF_FAILED(passOn(comm, axes, k, keyShape));
      LOOM_RETURN_IF_FAILED(passOn(comm, axes, v, valueShape));
    }
    // The accumulators travel with their block; after the last step they
    // are one member short of their owner.
    LOOM_RETURN_IF_FAILED(passOn(comm, axes, dk, keyShape));
    LOOM_RETURN_IF_FAILED(passOn(comm, axes, dv, valueShape));
  }
  LOOM_RETURN_IF_FAILED(zz.toContiguous(dq.data(), queryShape, dquery));
  LOOM_RETURN_IF_FAILED(zz.toContiguous(dk.data(), keyShape, dkey));
  return zz.toContiguous(dv.data(), valueShape, dvalue);
}

#define LOOM_INSTANTIATE(T)                                                    \
  template Status ringAttention<T>(Communicator &, const AxisList &,           \
                                   const T *, const Shape &, const T *,        \
                                   const Shape &, const T *, const Shape &,    \
                                   bool, std::optional<double>, T *, T *);     \
  template Status ringAttentionGrad<T>(                                        \
      Communicator &, const AxisList &, const T *, const Shape &, const T *,   \
      const Shape &, const T *, const Shape &, const T *, const T *,           \
      const T *, bool, std::optional<double>, T *, T *, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::mpi

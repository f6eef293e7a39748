//===- RingAttention.cpp - Simulated rings of ring attention --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Every member's contiguous blocks are rearranged into zigzag blocks
//    (member r: chunks r and 2n-1-r), as the transfers of a real ring do.
// 2. For t = 0..n-1, member r runs the step kernel on its queries and the
//    key/value zigzag block of member (r - t) mod n; the backward pass adds
//    into that block's dkey/dvalue accumulators, which in a real ring travel
//    with it and so receive their contributions in the same order.
// 3. Results go back from zigzag to contiguous blocks.
//
//===----------------------------------------------------------------------===//

#include "RingAttention.h"

#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Runtime/Host/RingAttention.h"

#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::interp;
namespace host = ::loom::runtime::host;

namespace {
/// Moves [B, H, S, W] blocks between contiguous and zigzag order.
struct Zigzag {
  int64_t n;

  /// Each member's zigzag block from the members' contiguous `blocks`.
  template <typename T>
  std::vector<HostTensor> toZigzag(const std::vector<HostTensor> &blocks) {
    return move<T>(blocks, /*toZig=*/true);
  }
  template <typename T>
  std::vector<HostTensor> toContiguous(const std::vector<HostTensor> &blocks) {
    return move<T>(blocks, /*toZig=*/false);
  }

private:
  template <typename T>
  std::vector<HostTensor> move(const std::vector<HostTensor> &blocks,
                               bool toZig) {
    const Shape &shape = blocks.front().getShape();
    int64_t seq = shape[2], half = seq / 2;
    int64_t outer = shape[0] * shape[1];
    int64_t width = shape.size() > 3 ? shape[3] : 1;
    std::vector<HostTensor> out;
    for (int64_t m = 0; m < n; ++m)
      out.push_back(HostTensor::allocate(blocks.front().getKind(), shape));
    for (int64_t c = 0; c < 2 * n; ++c) {
      // Chunk c: in the contiguous block of c / 2 at half c % 2; in the
      // zigzag block of its owner o first when c == o, second otherwise.
      int64_t cont = host::contiguousOwner(c), contRow = (c % 2) * half;
      int64_t zig = host::zigzagOwner(c, n), zigRow = c == zig ? 0 : half;
      int64_t from = toZig ? cont : zig, fromRow = toZig ? contRow : zigRow;
      int64_t to = toZig ? zig : cont, toRow = toZig ? zigRow : contRow;
      host::copySequenceRows<T>(blocks[from].data<T>(), seq, fromRow,
                                out[to].mutableData<T>(), seq, toRow, half,
                                outer, width);
    }
    return out;
  }
};

std::vector<HostTensor> column(const std::vector<std::vector<HostTensor>> &all,
                               unsigned index) {
  std::vector<HostTensor> values;
  for (const std::vector<HostTensor> &member : all)
    values.push_back(member[index]);
  return values;
}

/// What the forward and the backward ring share: the members' q, k and v
/// (operands 0-2) in zigzag order, each member's global positions, and the
/// op's scale.
struct Ring {
  int64_t n;
  Zigzag zz;
  std::vector<HostTensor> q, k, v;
  std::vector<std::vector<int64_t>> positions;
  std::optional<double> scale;

  template <typename T, typename OpTy>
  static Ring prepare(OpTy op,
                      const std::vector<std::vector<HostTensor>> &operands) {
    int64_t n = static_cast<int64_t>(operands.size());
    Ring ring{n, Zigzag{n}, {}, {}, {}, {}, std::nullopt};
    ring.q = ring.zz.template toZigzag<T>(column(operands, 0));
    ring.k = ring.zz.template toZigzag<T>(column(operands, 1));
    ring.v = ring.zz.template toZigzag<T>(column(operands, 2));
    int64_t half = ring.q.front().getShape()[2] / 2;
    for (int64_t r = 0; r < n; ++r)
      ring.positions.push_back(host::zigzagPositions(r, n, half));
    if (auto attr = op.getScaleAttr())
      ring.scale = attr.getValueAsDouble();
    return ring;
  }
};

template <typename T>
std::vector<std::vector<HostTensor>>
runForward(dist::RingAttentionOp op,
           const std::vector<std::vector<HostTensor>> &operands) {
  Ring ring = Ring::prepare<T>(op, operands);
  auto &[n, zz, q, k, v, positions, scale] = ring;
  const Shape &qs = q.front().getShape();
  std::vector<HostTensor> out, lse;
  for (int64_t r = 0; r < n; ++r) {
    out.push_back(HostTensor::allocate(
        q.front().getKind(), {qs[0], qs[1], qs[2], v.front().getShape()[3]}));
    lse.push_back(
        HostTensor::allocate(q.front().getKind(), {qs[0], qs[1], qs[2], 1}));
    T *l = lse.back().mutableData<T>();
    std::fill(l, l + lse.back().getNumElements(),
              -std::numeric_limits<T>::infinity());
  }
  for (int64_t t = 0; t < n; ++t)
    for (int64_t r = 0; r < n; ++r) {
      int64_t src = (r - t + n) % n;
      host::attentionBlock<T>(q[r].data<T>(), qs, k[src].data<T>(),
                              k[src].getShape(), v[src].data<T>(),
                              v[src].getShape(), positions[r].data(),
                              positions[src].data(), op.getCausal(), scale,
                              out[r].mutableData<T>(), lse[r].mutableData<T>());
    }
  out = zz.toContiguous<T>(out);
  lse = zz.toContiguous<T>(lse);
  std::vector<std::vector<HostTensor>> results;
  for (int64_t r = 0; r < n; ++r)
    results.push_back({out[r], lse[r].reshaped({qs[0], qs[1], qs[2]})});
  return results;
}

template <typename T>
std::vector<std::vector<HostTensor>>
runBackward(dist::RingAttentionGradOp op,
            const std::vector<std::vector<HostTensor>> &operands) {
  Ring ring = Ring::prepare<T>(op, operands);
  auto &[n, zz, q, k, v, positions, scale] = ring;
  std::vector<HostTensor> o = zz.toZigzag<T>(column(operands, 3));
  std::vector<HostTensor> dout = zz.toZigzag<T>(column(operands, 4));
  std::vector<HostTensor> lseBlocks;
  for (const HostTensor &lse : column(operands, 5)) {
    Shape s = lse.getShape();
    lseBlocks.push_back(lse.reshaped({s[0], s[1], s[2], 1}));
  }
  std::vector<HostTensor> lse = zz.toZigzag<T>(lseBlocks);
  const Shape &qs = q.front().getShape();
  std::vector<HostTensor> dq, dk, dv;
  for (int64_t r = 0; r < n; ++r) {
    dq.push_back(HostTensor::allocate(q[r].getKind(), q[r].getShape()));
    dk.push_back(HostTensor::allocate(k[r].getKind(), k[r].getShape()));
    dv.push_back(HostTensor::allocate(v[r].getKind(), v[r].getShape()));
  }
  for (int64_t t = 0; t < n; ++t)
    for (int64_t r = 0; r < n; ++r) {
      int64_t src = (r - t + n) % n;
      host::attentionBlockGrad<T>(
          q[r].data<T>(), qs, k[src].data<T>(), k[src].getShape(),
          v[src].data<T>(), v[src].getShape(), o[r].data<T>(),
          dout[r].data<T>(), lse[r].data<T>(), positions[r].data(),
          positions[src].data(), op.getCausal(), scale, dq[r].mutableData<T>(),
          dk[src].mutableData<T>(), dv[src].mutableData<T>());
    }
  dq = zz.toContiguous<T>(dq);
  dk = zz.toContiguous<T>(dk);
  dv = zz.toContiguous<T>(dv);
  std::vector<std::vector<HostTensor>> results;
  for (int64_t r = 0; r < n; ++r)
    results.push_back({dq[r], dk[r], dv[r]});
  return results;
}
} // namespace

std::optional<std::vector<std::vector<HostTensor>>>
mlir::loom::interp::runRingAttention(
    Operation *op, const std::vector<std::vector<HostTensor>> &operands) {
  StorageKind kind = operands.front().front().getKind();
  if (auto forward = dyn_cast<dist::RingAttentionOp>(op))
    return dispatchFloat(kind, [&](auto zero) {
      return runForward<decltype(zero)>(forward, operands);
    });
  if (auto backward = dyn_cast<dist::RingAttentionGradOp>(op))
    return dispatchFloat(kind, [&](auto zero) {
      return runBackward<decltype(zero)>(backward, operands);
    });
  return std::nullopt;
}

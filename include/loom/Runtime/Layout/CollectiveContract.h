//===- CollectiveContract.h - What a communicator call may be ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The argument contract of the runtime's communicators, written once. The MPI
// communicator (include/loom/Runtime/MPI/Communicator.h) and the NCCL one
// (include/loom/Runtime/NCCL/Communicator.h) run every `dist` collective,
// send and recv; both call the check of the same name here before moving any
// data, so a call is valid on one exactly when it is valid on the other, and
// an invalid call fails with the same message on both.
//
// The checks use only what every member of the group passes alike (mesh,
// axes, shape, dims, root, pairs, peer, tag), so an invalid collective fails
// on every member before any traffic and nobody is left waiting. Mesh axes
// are checked by `dist::Mesh::verifyGroupAxes`, the check the `dist` dialect's
// verifier runs, and tags against `dist::kMaxMessageTag`, the dialect's C4.
//
// What each check covers, in this order (the first failure is reported):
//   1. the shape: no negative dim, at most `maxCount` elements (a count the
//      transport's API holds: MPI's int; NCCL's size_t);
//   2. the dims the call names: in range of the shape;
//   3. the axes: at least one, each an axis of the mesh, none twice;
//   4. the dims the call cuts: divisible by the group size; the result of an
//      all_gather within `maxCount`;
//   5. the root (broadcast) or the pairs (general permute): within the group,
//      each member the source and the target of at most one pair;
//   6. send/recv: the peer a rank of the mesh, the tag in [0, kMaxTag].
// Messages read "<call>: <reason>", the call as `describe` spells it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_LAYOUT_COLLECTIVECONTRACT_H
#define LOOM_RUNTIME_LAYOUT_COLLECTIVECONTRACT_H

#include "loom/Runtime/MPI/DeviceMesh.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom::runtime {

using mpi::AxisList;
using mpi::DeviceMesh;
using mpi::Status;

/// The combination of an all_reduce, as `dist.all_reduce sum|max`.
enum class ReduceKind { Sum, Max };

/// The tag of a `dist.send`/`dist.recv`: valid in [0, kMaxTag].
using Tag = int64_t;
inline constexpr Tag kMaxTag = ::mlir::loom::dist::kMaxMessageTag;

/// The element type names messages use: f32, f64, i64.
template <typename T> const char *elementTypeName();
template <> inline const char *elementTypeName<float>() { return "f32"; }
template <> inline const char *elementTypeName<double>() { return "f64"; }
template <> inline const char *elementTypeName<int64_t>() { return "i64"; }

/// The checks of one rank's communicator calls.
class CollectiveContract {
public:
  /// `maxCount` is the most elements one buffer of the transport may hold.
  CollectiveContract(const DeviceMesh &mesh, int64_t rank, int64_t maxCount)
      : mesh(mesh), rank(rank), maxCount(maxCount) {}

  /// "all_gather over [\"tp\"]": how messages name a collective.
  static std::string describe(const char *op, const AxisList &axes);
  /// "all_reduce sum over [\"tp\"]".
  static std::string describe(ReduceKind kind, const AxisList &axes);
  /// "send to rank 3 (tag 0)", "recv from rank 3 (tag 0)".
  static std::string describeSend(int64_t to, Tag tag);
  static std::string describeRecv(int64_t from, Tag tag);

  Status allGather(const Shape &shape, const AxisList &axes, int64_t dim) const;
  Status allSlice(const Shape &shape, const AxisList &axes, int64_t dim) const;
  Status allReduce(const Shape &shape, const AxisList &axes,
                   ReduceKind kind) const;
  Status reduceScatter(const Shape &shape, const AxisList &axes,
                       int64_t dim) const;
  Status allToAll(const Shape &shape, const AxisList &axes, int64_t splitDim,
                  int64_t concatDim) const;
  /// The cyclic shift: any integer shift is valid.
  Status collectivePermute(const Shape &shape, const AxisList &axes) const;
  /// The general permutation of (source, target) group indices.
  Status collectivePermute(
      const Shape &shape, const AxisList &axes,
      const std::vector<std::pair<int64_t, int64_t>> &pairs) const;
  Status broadcast(const Shape &shape, const AxisList &axes,
                   int64_t root) const;
  Status send(const Shape &shape, int64_t to, Tag tag) const;
  Status recv(const Shape &shape, int64_t from, Tag tag) const;

  /// A message as the transport sees it before a recv takes it.
  struct Incoming {
    int64_t bytes;
    /// Its element type and count where the transport knows them (NCCL's
    /// step table); nullptr where it knows only the size (MPI's probe).
    const char *type = nullptr;
    int64_t count = 0;
  };

  /// Checks the message a recv is about to take against what it expects:
  /// `shape` of `type` (`elementBytes` each); the element type and count
  /// too where the transport knows them. Only the receiver knows the
  /// message, so the failure names this rank.
  Status received(const std::string &what, const Shape &shape, const char *type,
                  int64_t elementBytes, const Incoming &message) const;

private:
  /// Steps 1-3 for a collective over `axes`; `dims` are the (name, dim)
  /// pairs the call names.
  Status checkGroupCall(
      const std::string &what, const Shape &shape, const AxisList &axes,
      const std::vector<std::pair<const char *, int64_t>> &dims) const;
  /// Step 4: `shape[dim]` divisible by the group size over `axes`.
  Status checkDivisible(const std::string &what, const Shape &shape,
                        const AxisList &axes, int64_t dim) const;
  /// Steps 1 and 6.
  Status checkPointToPoint(const std::string &what, const Shape &shape,
                           int64_t peer, Tag tag) const;

  const DeviceMesh &mesh;
  int64_t rank;
  int64_t maxCount;
};

} // namespace loom::runtime

#endif // LOOM_RUNTIME_LAYOUT_COLLECTIVECONTRACT_H

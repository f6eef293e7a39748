//===- Communicator.h - Every dist collective over MPI ranks ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The communicator that emitted per-rank host programs call for each `dist`
// collective. One MPI process is one device of the mesh (rank = the row-major
// mesh index, which is also its MPI_COMM_WORLD rank). Each operation is the
// exact counterpart of the reference interpreter's
// (lib/Interpreter/Interpreter.cpp, docs/Interpreter.md): for the same local
// tensors it returns bit-identical results, sums included.
//
// Calling convention (as the host kernels', include/loom/Runtime/Host/
// README.md): dense row-major buffers of float, double or int64_t with a
// `Shape` (the *local* operand shape), outputs preallocated by the caller with
// the result's shape; `axes` orders the group as the op's `axes` attribute.
// Every operation returns a Status:
//
//   - arguments are validated before any message is sent, from values every
//     member of the group has alike (mesh, axes, shape, dims, root), so an
//     invalid call fails on every member with the same message and nobody is
//     left waiting. The checks are the runtime's one contract
//     (loom/Runtime/Layout/CollectiveContract.h), shared with the NCCL
//     communicator;
//   - a failed MPI call returns a Status naming the call, the rank and MPI's
//     error string (the communicators use MPI_ERRORS_RETURN). Such failures
//     can strike one rank only: a program stops the job with abort(), which
//     prints the message and calls MPI_Abort, rather than return from main
//     while its peers wait.
//
// Sums are deterministic: every member folds the group's tensors in group
// index order, in T arithmetic, as the interpreter does (MPI_Allreduce leaves
// the order unspecified, so it is not used). See docs/Runtime.md for the
// algorithms and their cost.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_MPI_COMMUNICATOR_H
#define LOOM_RUNTIME_MPI_COMMUNICATOR_H

#include "loom/Runtime/Layout/CollectiveContract.h"
#include "loom/Runtime/MPI/DeviceMesh.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace loom::runtime::mpi {

using runtime::CollectiveContract;
using runtime::ReduceKind;
using runtime::Tag;

/// Tuning and checking knobs; the defaults suit emitted programs.
struct CommunicatorOptions {
  /// All-reduces of at most this many bytes gather every member's tensor and
  /// fold locally (one round; each rank receives (n - 1) * N bytes). Larger
  /// ones exchange chunks, fold one chunk per member and gather the folded
  /// chunks (two rounds; 2 (n - 1) / n * N bytes, as a ring all-reduce).
  /// Both give the same bits.
  int64_t gatherReduceMaxBytes = 64 * 1024;
  /// Before every group collective, the members exchange a description of
  /// the call (op, element type, attributes, shape) and fail alike when they
  /// differ: a mismatched program gets a Status instead of a hang or garbage.
  /// Costs one small MPI_Allgather per collective; for debugging emitters.
  bool verifyCalls = false;
};

/// The MPI communicator of one rank of a device mesh.
class Communicator {
public:
  /// Creates the communicator of `mesh` over `world` (MPI must be
  /// initialized; `world` is duplicated, never modified). Fails on every rank
  /// alike when the size of `world` is not the mesh's device count. Also sets
  /// the rank that runtime failure reports name (setReportedRank).
  static Status create(const DeviceMesh &mesh,
                       std::unique_ptr<Communicator> &out,
                       const CommunicatorOptions &options = {},
                       MPI_Comm world = MPI_COMM_WORLD);

  /// Waits for pending sends and frees the communicators; must run before
  /// MPI_Finalize.
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  const DeviceMesh &getMesh() const { return mesh; }
  /// This process's rank, = its index in the mesh.
  int64_t getRank() const { return rank; }
  const std::vector<int64_t> &getCoordinates() const { return coordinates; }
  /// This rank's coordinate on `axis` (`dist.axis_index`).
  Status axisIndex(std::string_view axis, int64_t &index) const;
  /// The rank with coordinate `coordinate` on `axis` and this rank's
  /// coordinates elsewhere: the peer of `dist.send ... axis "pp" to s`.
  Status peer(std::string_view axis, int64_t coordinate, int64_t &rank) const;

  /// `dist.all_gather`: concatenates the members' tensors along `dim` in
  /// group order; `out` has `shape[dim] * n` in `dim`.
  template <typename T>
  Status allGather(const T *in, const Shape &shape, const AxisList &axes,
                   int64_t dim, T *out);

  /// `dist.all_slice`: piece (own group index) of n along `dim`. Local: no
  /// message, no rendezvous.
  template <typename T>
  Status allSlice(const T *in, const Shape &shape, const AxisList &axes,
                  int64_t dim, T *out);

  /// `dist.all_reduce`: the members' tensors folded in group order (sum, or a
  /// NaN-propagating max). `out` may be `in`.
  template <typename T>
  Status allReduce(const T *in, const Shape &shape, const AxisList &axes,
                   ReduceKind kind, T *out);

  /// `dist.reduce_scatter`: piece (own group index) along `dim` of the sum
  /// folded in group order; `shape[dim]` must be divisible by n.
  template <typename T>
  Status reduceScatter(const T *in, const Shape &shape, const AxisList &axes,
                       int64_t dim, T *out);

  /// `dist.all_to_all`: cuts along `splitDim` into n pieces, sends piece j to
  /// member j and concatenates the pieces received along `concatDim` in group
  /// order. `shape[splitDim]` must be divisible by n. The dialect requires
  /// the dims to differ; equal dims are computed too (the interpreter's
  /// formula).
  template <typename T>
  Status allToAll(const T *in, const Shape &shape, const AxisList &axes,
                  int64_t splitDim, int64_t concatDim, T *out);

  /// `dist.collective_permute ... shift k`: member i receives the tensor of
  /// member (i - k) mod n (any integer k). `out` may be `in`.
  template <typename T>
  Status collectivePermute(const T *in, const Shape &shape,
                           const AxisList &axes, int64_t shift, T *out);

  /// A general permutation: for each (source, target) pair of group indices,
  /// member `target` receives the tensor of member `source`. Sources and
  /// targets may each appear once; a member that is no target gets zeros.
  /// Every member must pass the same pairs. `out` may be `in`.
  template <typename T>
  Status
  collectivePermute(const T *in, const Shape &shape, const AxisList &axes,
                    const std::vector<std::pair<int64_t, int64_t>> &pairs,
                    T *out);

  /// `dist.broadcast ... root r`: every member receives member r's tensor
  /// (`in` is read on the root only). `out` may be `in`.
  template <typename T>
  Status broadcast(const T *in, const Shape &shape, const AxisList &axes,
                   int64_t root, T *out);

  /// `dist.send`: sends `in` to global rank `to` with `tag` (0 <= tag <=
  /// kMaxTag). Buffered, as in the interpreter: the data is copied and the
  /// call returns at once; waitSends() completes the pending sends. A send
  /// to oneself does nothing (every rank runs one instruction stream, so
  /// only the stages that are not `to` really send).
  template <typename T>
  Status send(const T *in, const Shape &shape, int64_t to, Tag tag);

  /// `dist.recv`: receives into `out` the next message from global rank
  /// `from` with `tag`; its size must be `shape`'s. Messages between two
  /// ranks with one tag arrive in send order. Receiving from oneself yields
  /// zeros (see send).
  template <typename T>
  Status recv(T *out, const Shape &shape, int64_t from, Tag tag);

  /// Waits until every pending send has been delivered to MPI.
  Status waitSends();

  /// A non-blocking collective in flight, from its start to its wait.
  using Request = int64_t;

  /// The non-blocking `dist.all_reduce` (data-parallel gradient buckets,
  /// docs/Runtime.md, "Overlap"): posts the transfers and returns at once
  /// with `request`; wait(request) completes it. The result is bit for bit
  /// allReduce's: the same chunks, folded in group index order at the same
  /// point of the schedule. `in` is copied at the start, so its buffer may
  /// be reused at once; `out` belongs to the request until the wait (the
  /// folded chunks may land in it earlier). Every member starts the
  /// requests of one group in the same order (as it would call the blocking
  /// collectives); requests of different groups and blocking collectives
  /// may run in between.
  template <typename T>
  Status startAllReduce(const T *in, const Shape &shape, const AxisList &axes,
                        ReduceKind kind, T *out, Request &request);
  /// The non-blocking `dist.reduce_scatter` (ZeRO's gradient buckets,
  /// docs/Runtime.md, "Overlap"): as startAllReduce, with reduceScatter's
  /// blocks. Piece j along `dim` goes to member j, and each member folds
  /// the pieces it receives in group index order: the blocking call's bits.
  template <typename T>
  Status startReduceScatter(const T *in, const Shape &shape,
                            const AxisList &axes, int64_t dim, T *out,
                            Request &request);
  /// Completes `request`: afterwards `out` holds the reduction. Waiting on
  /// a request twice, or on one never started, is an error.
  Status wait(Request request);
  /// Lets the requests in flight advance without blocking: tests their
  /// transfers and posts the second round of a chunked all-reduce whose
  /// first round has arrived (Open MPI moves data only inside MPI calls,
  /// so emitted steps call this between ops while requests are in flight).
  Status progress();
  /// The end-of-step check: an error naming every request started and
  /// never waited (a step that forgets a wait has a result it never
  /// completed). The requests stay in flight.
  Status checkAllWaited() const;
  /// How many requests are in flight.
  size_t getNumInFlight() const { return inFlight.size(); }

  /// Prints "loom: rank R: MESSAGE" to stderr and ends the whole job with
  /// MPI_Abort (exit status 1): for failures that may strike one rank only.
  [[noreturn]] void abort(const Status &status) const;

  /// Frees the scratch buffers that collectives keep between calls (see
  /// getScratchBytes).
  void releaseScratch();
  /// Bytes of scratch memory held: packing, receive and fold buffers grow to
  /// the largest collective so far and are reused, so that a training step's
  /// collectives do not allocate (and page in) fresh memory on every call.
  int64_t getScratchBytes() const;

  /// How many sub-communicators exist so far (one per distinct axis list
  /// used by a group collective with more than one member).
  size_t getNumGroupCommunicators() const { return groups.size(); }

private:
  /// This rank's group over one ordered axis list.
  struct Group {
    /// Ranked by group index; MPI_COMM_NULL for a group of one.
    MPI_Comm comm = MPI_COMM_NULL;
    int size = 1;
    int index = 0;
    /// A duplicate of `comm` for the point-to-point messages of
    /// non-blocking collectives (created by the first one), so that their
    /// tags never meet the blocking collectives' traffic.
    MPI_Comm async = MPI_COMM_NULL;
    /// Non-blocking collectives started on this group so far: the same
    /// sequence on every member, from which their message tags follow.
    int64_t started = 0;
  };
  struct AsyncReduce;

  Communicator(const DeviceMesh &mesh, const CommunicatorOptions &options,
               MPI_Comm world, MPI_Comm base, int rank);

  /// The checks of this rank's calls; MPI counts are ints.
  CollectiveContract contract() const {
    return {mesh, rank, std::numeric_limits<int>::max()};
  }
  /// Returns this rank's group over `axes` (checked by the contract),
  /// creating its communicator on first use.
  Status getGroup(const AxisList &axes, const std::string &what, Group *&group);
  /// With verifyCalls, checks that every member makes the same call.
  Status verifyCall(const Group &group, const std::string &what,
                    const std::string &signature);
  /// A Status for a failed MPI call.
  Status mpiFailure(const char *call, int code, const std::string &what) const;
  Status reapSends();
  /// Posts the second round of a chunked non-blocking all-reduce once its
  /// first round has arrived (`block`: wait for it rather than test).
  Status advance(AsyncReduce &reduce, bool block);
  /// Scratch buffer `slot` (0: packed operand, 1: received blocks, 2: folded
  /// chunk) with room for `count` elements of T; contents are unspecified.
  template <typename T> T *scratch(int slot, int64_t count);

  DeviceMesh mesh;
  CommunicatorOptions options;
  MPI_Comm world;
  /// A duplicate of `world`: point-to-point traffic and the parent of the
  /// group communicators, with MPI_ERRORS_RETURN.
  MPI_Comm base;
  int64_t rank;
  std::vector<int64_t> coordinates;
  /// Group communicators by the positions of their axes in the mesh.
  std::map<std::vector<size_t>, Group> groups;
  /// Sends in flight with the copies of their data.
  struct PendingSend {
    MPI_Request request;
    std::vector<unsigned char> data;
  };
  std::vector<std::unique_ptr<PendingSend>> pendingSends;
  struct Scratch {
    std::unique_ptr<unsigned char[]> data;
    size_t bytes = 0;
  };
  Scratch scratchBuffers[3];
  /// Non-blocking collectives started and not yet waited, by request.
  std::map<Request, std::unique_ptr<AsyncReduce>> inFlight;
  Request nextRequest = 0;
};

} // namespace loom::runtime::mpi

#endif // LOOM_RUNTIME_MPI_COMMUNICATOR_H

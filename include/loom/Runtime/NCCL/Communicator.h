//===- Communicator.h - dist collectives over NCCL --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA runtime's communicator: every `dist` collective, send and recv
// between the GPUs of a mesh, one process per device, on device buffers.
// It mirrors loom/Runtime/MPI/Communicator.h method for method (same
// parameters, same results, group order = DeviceMesh::getGroup order), so an
// emitted CUDA step calls it exactly where a host step calls the MPI one.
//
// Bootstrap: rank 0 creates an NCCL unique id and broadcasts it over MPI;
// every rank joins the world communicator with ncclCommInitRank. Then, for
// every subset of the mesh axes whose groups have more than one member, one
// ncclCommSplit (all ranks, in the same order, at creation) makes this
// rank's group communicator; its NCCL ranks follow the mesh order of the
// subset's axes. A collective over an ordered axis list uses the
// communicator of its axis set and maps group indices (the list's order) to
// NCCL ranks, so axis order costs no extra communicator.
//
// Any dim: NCCL gathers, scatters and exchanges contiguous blocks, so a
// collective along a dim other than the first packs the operand into
// per-member blocks (and unpacks the result) with strided device copies
// (cuda::copyRows).
//
// Streams: collectives run on a dedicated communication stream. Each call
// first makes that stream wait for the compute stream (an event), and makes
// the compute stream wait for the collective's end, so callers enqueue work
// in program order without synchronizing the host. startAllReduce leaves
// the second wait to wait(request): a gradient bucket's all-reduce then
// runs while the compute stream goes on with the backward.
//
// Arguments are checked by the runtime's one contract (loom/Runtime/Layout/
// CollectiveContract.h), as the MPI communicator checks them: the same calls
// are valid on both and fail with the same messages.
//
// Differences from the MPI communicator: sums are NCCL's (ring or tree
// order, not group order), so they are not bit-for-bit reproducible across
// mesh shapes and may differ from the host's in the last bits; max follows
// NCCL's NaN handling.
//
// Point-to-point. MPI matches a receive to a send by (peer, tag) and buffers
// small sends; NCCL has neither: ncclRecv takes the peer's next ncclSend, in
// the order the peer posted them, and a send completes only when the peer's
// matching receive runs (rendezvous), blocking the stream until then. Two
// consequences, and what this communicator does about them:
//   - A rank may receive a peer's messages in another order than the peer
//     sends them (a pipeline stage takes micro-batch gradients in schedule
//     order). So every step starts with beginStep(), which declares the
//     messages each peer sends to this rank in the peer's program order
//     (the CUDA emitter knows every rank's program and prints the table).
//     recv(from, tag) then receives, in the sender's order, every earlier
//     message of that peer into a device stash (cudaMallocAsync on the
//     communication stream) and the wanted one into `out`; a message that
//     is already stashed is a device-to-device copy. Delivery is by tag, as
//     on the host.
//   - Two stages that each send before they receive (1F1B's steady state:
//     stage 0 sends activation k+1 then receives gradient k, stage 1 sends
//     gradient k then receives activation k+1) would both block in their
//     sends. So send() never posts: it copies the tensor into a staging
//     buffer and queues it. Queued sends are posted in the same
//     ncclGroupStart/End as the next recv's receives (so both directions of
//     an exchange progress together, as Megatron's batched isend/irecv),
//     and at the end of the step (synchronize()).
//     Not before collectives: a send posted alone blocks its stream until
//     the peer receives it, and the peer may first have to pass a send of
//     its own that this rank receives only later. The tied GPT-2 pipeline
//     does exactly that: stage 0 sends the embedding to stage 1 and stage 1
//     sends the step to stage 0, each before its first data-parallel
//     collective, and each receives the other's message much later; with
//     the sends posted before those collectives, both stages wait forever.
//     Collectives run among the ranks of one stage, which run the same
//     program, so a send held across them delays its receiver but cannot
//     close a cycle. The price: a stage's next stage sees its activations
//     only when the stage next receives (or ends the step), which costs
//     overlap in GPipe's and 1F1B's warm-up, not correctness.
// Without a beginStep() table (a hand-written caller), a recv takes the
// peer's next message and the tag must be 0.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_NCCL_COMMUNICATOR_H
#define LOOM_RUNTIME_NCCL_COMMUNICATOR_H

#include "loom/Runtime/Layout/CollectiveContract.h"
#include "loom/Runtime/MPI/DeviceMesh.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace loom::runtime::nccl {

using mpi::AxisList;
using mpi::DeviceMesh;
using mpi::Status;
using runtime::CollectiveContract;
using runtime::ReduceKind;
using runtime::Tag;

template <typename T> ncclDataType_t ncclTypeOf();
template <> inline ncclDataType_t ncclTypeOf<float>() { return ncclFloat32; }
template <> inline ncclDataType_t ncclTypeOf<double>() { return ncclFloat64; }
template <> inline ncclDataType_t ncclTypeOf<int64_t>() { return ncclInt64; }

/// One message a peer sends to this rank during a step (an entry of the
/// table beginStep() takes).
struct Message {
  /// The sending global rank.
  int64_t peer;
  /// The `dist.send`/`dist.recv` tag.
  Tag tag;
  /// Elements and their type.
  int64_t count;
  ncclDataType_t type;

  template <typename T>
  static Message of(int64_t peer, int64_t tag, int64_t count) {
    return {peer, tag, count, ncclTypeOf<T>()};
  }
};

class Communicator {
public:
  /// Creates the communicator of `mesh` over `world` (MPI must be
  /// initialized and the CUDA device of this rank selected). Collective over
  /// `world`: every rank must call it. `compute` is the stream the caller
  /// enqueues its kernels on. Fails alike on every rank when the size of
  /// `world` is not the mesh's device count.
  static Status create(const DeviceMesh &mesh, cudaStream_t compute,
                       std::unique_ptr<Communicator> &out,
                       MPI_Comm world = MPI_COMM_WORLD);

  /// Destroys the NCCL communicators and the communication stream.
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  const DeviceMesh &getMesh() const { return mesh; }
  int64_t getRank() const { return rank; }
  cudaStream_t getCommStream() const { return commStream; }

  /// `dist.all_gather`: the members' tensors concatenated along `dim` in
  /// group order.
  template <typename T>
  Status allGather(const T *in, const Shape &shape, const AxisList &axes,
                   int64_t dim, T *out);
  /// `dist.all_slice`: this member's piece along `dim` (a local copy).
  template <typename T>
  Status allSlice(const T *in, const Shape &shape, const AxisList &axes,
                  int64_t dim, T *out);
  /// `dist.all_reduce` (sum or max). `out` may be `in`.
  template <typename T>
  Status allReduce(const T *in, const Shape &shape, const AxisList &axes,
                   ReduceKind kind, T *out);

  /// A started all-reduce, from its start to its wait.
  using Request = int64_t;
  /// The all-reduce of a data-parallel gradient bucket (docs/Codegen.md,
  /// "Overlap"), overlapping the compute stream's later work: copies `in`
  /// into `out` on the compute stream (so `in`'s buffer may be reused at
  /// once), then reduces `out` in place on the communication stream after
  /// the compute stream's work so far, and records the end in an event of
  /// `request`. Unlike allReduce, the compute stream does not wait for it:
  /// wait(request) makes it. NCCL's in-place sum is its sum out of place:
  /// the same bits as allReduce.
  template <typename T>
  Status startAllReduce(const T *in, const Shape &shape, const AxisList &axes,
                        ReduceKind kind, T *out, Request &request);
  /// Orders the compute stream after `request`: its work from here on
  /// reads the reduction. Waiting on a request twice, or on one never
  /// started, is an error.
  Status wait(Request request);
  /// The end-of-step check: an error naming every request started and
  /// never waited (its result was never ordered before a reader).
  Status checkAllWaited() const;
  /// `dist.reduce_scatter`: this member's piece along `dim` of the sum.
  template <typename T>
  Status reduceScatter(const T *in, const Shape &shape, const AxisList &axes,
                       int64_t dim, T *out);
  /// `dist.all_to_all`: piece j along `splitDim` to member j, the received
  /// pieces concatenated along `concatDim` in group order.
  template <typename T>
  Status allToAll(const T *in, const Shape &shape, const AxisList &axes,
                  int64_t splitDim, int64_t concatDim, T *out);
  /// `dist.collective_permute ... shift k`: member i receives member
  /// (i - k) mod n's tensor.
  template <typename T>
  Status collectivePermute(const T *in, const Shape &shape,
                           const AxisList &axes, int64_t shift, T *out);
  /// `dist.broadcast ... root r`: member r's tensor to every member.
  template <typename T>
  Status broadcast(const T *in, const Shape &shape, const AxisList &axes,
                   int64_t root, T *out);
  /// Starts a step's point-to-point traffic: `incoming[0, count)` are the
  /// messages other ranks send to this rank during the step, each peer's in
  /// that peer's program order (messages of different peers may
  /// interleave). Fails when the previous step left queued sends or
  /// undelivered messages (synchronize() was not called).
  Status beginStep(const Message *incoming, size_t count);

  /// `dist.send` to global rank `to` (nothing when `to` is this rank):
  /// copies `in` into a staging buffer and queues the transfer; the next
  /// recv or synchronize() posts it. `in` may be reused as soon
  /// as this returns (in stream order).
  template <typename T>
  Status send(const T *in, const Shape &shape, int64_t to, Tag tag);
  /// `dist.recv` from global rank `from` (zeros when it is this rank): the
  /// message with `tag` (the first not yet delivered, if the peer sends the
  /// tag twice), stashing the peer's earlier messages. Fails when the
  /// beginStep() table lists no such message or its size or type differs.
  template <typename T>
  Status recv(T *out, const Shape &shape, int64_t from, Tag tag);

  /// Ends the step's point-to-point traffic: posts the queued sends, waits
  /// until the communication stream is idle, and fails when a message of
  /// the beginStep() table was never delivered by a recv.
  Status synchronize();

  /// How many group communicators were created (one per axis subset whose
  /// groups have several members).
  size_t getNumGroupCommunicators() const { return groups.size(); }

private:
  /// This rank's group over one axis subset.
  struct Group {
    ncclComm_t comm = nullptr;
    int size = 1;
  };
  /// A group as one collective sees it: the communicator and, for each
  /// group index of the call's axis order, the member's NCCL rank.
  struct View {
    ncclComm_t comm = nullptr;
    int size = 1;
    int index = 0;
    std::vector<int> ncclRankOf;
  };

  Communicator(const DeviceMesh &mesh, int64_t rank, cudaStream_t compute);
  /// The checks of this rank's calls. NCCL counts are size_t; the bound
  /// keeps every buffer's size in bytes within int64_t.
  CollectiveContract contract() const {
    return {mesh, rank, std::numeric_limits<int64_t>::max() / 8};
  }
  Status createGroups();
  Status getView(const AxisList &axes, const std::string &what, View &view);
  /// Orders the communication stream after the compute stream.
  void begin();
  /// Orders the compute stream after the communication stream.
  void end();
  Status ncclFailure(const char *call, ncclResult_t result,
                     const std::string &what) const;
  /// Adds the queued sends to the open NCCL group.
  void enqueueSends();
  /// Frees the staging buffers of the posted queued sends.
  void releaseSends();
  /// Posts the queued sends alone in a group (the step's end).
  Status postSends();
  /// Receives a tensor of `shape` and `type` from `from` into `out`.
  Status receive(void *out, const Shape &shape, ncclDataType_t type,
                 int64_t from, Tag tag, const std::string &what);

  /// A send waiting to be posted: its staged copy.
  struct QueuedSend {
    void *staging;
    int64_t count;
    ncclDataType_t type;
    int peer;
  };
  /// A message of the step's table and where it stands.
  struct Incoming {
    Message message;
    /// Posted for receipt (into `stash` or straight into a recv's output).
    bool posted = false;
    /// Handed to a recv.
    bool delivered = false;
    /// The device copy of a message that arrived before its recv.
    void *stash = nullptr;
  };

  DeviceMesh mesh;
  int64_t rank;
  cudaStream_t compute;
  cudaStream_t commStream = nullptr;
  cudaEvent_t computeDone = nullptr, commDone = nullptr;
  ncclComm_t world = nullptr;
  /// By the bit mask of the subset's axes (bit a = mesh axis a).
  std::map<uint64_t, Group> groups;
  std::vector<QueuedSend> queued;
  /// Started all-reduces by request: the event their end records, and what
  /// they reduce (for checkAllWaited's message).
  struct Started {
    cudaEvent_t done;
    std::string what;
  };
  std::map<Request, Started> inFlight;
  Request nextRequest = 0;
  /// Events of waited requests, for the next start.
  std::vector<cudaEvent_t> freeEvents;
  /// The step's incoming messages by sender, in the sender's order; unset
  /// without a beginStep() table.
  bool haveTable = false;
  std::map<int64_t, std::vector<Incoming>> incoming;
};

} // namespace loom::runtime::nccl

#endif // LOOM_RUNTIME_NCCL_COMMUNICATOR_H

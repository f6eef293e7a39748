//===- Communicator.cpp - dist collectives over NCCL ----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. create(): MPI broadcast of rank 0's ncclUniqueId, ncclCommInitRank of
//    the world, then one ncclCommSplit per axis subset (createGroups).
// 2. Every collective: validate the call (CollectiveContract, as the MPI
//    communicator does), find the subset's communicator
//    and the group-index -> NCCL-rank map (getView), order the
//    communication stream after the compute stream (begin), pack along the
//    dim when the blocks are not contiguous, run the NCCL call(s), unpack,
//    and order the compute stream after it (end).
// 3. Point-to-point (the header says why): beginStep() files the step's
//    incoming messages by sender; send() stages a copy and queues it;
//    recv(from, tag) finds the message in the sender's list, and either
//    copies it out of the stash or, in one ncclGroupStart/End with every
//    queued send, receives the sender's earlier unposted messages into the
//    stash and this one into `out`. synchronize() posts the sends still
//    queued and checks that every message was delivered.
// Scratch for packing, staging and stash buffers come from the communication
// stream's memory pool and are freed in stream order.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/NCCL/Communicator.h"
#include "loom/Runtime/CUDA/Check.h"
#include "loom/Runtime/CUDA/Shape.h"
#include "loom/Runtime/Support/Failure.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace loom::runtime::nccl {

namespace {

/// The elements before `dim` (outer) and from `dim` on divided by the dim's
/// size (inner), for a row-major `shape`.
void outerInner(const Shape &shape, int64_t dim, int64_t &outer,
                int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

/// Device scratch on `stream`'s pool, freed in stream order.
class Scratch {
public:
  Scratch(cudaStream_t stream, int64_t bytes) : stream(stream) {
    LOOM_CUDA_CHECK(cudaMallocAsync(&data, bytes > 0 ? bytes : 1, stream));
  }
  ~Scratch() { LOOM_CUDA_CHECK(cudaFreeAsync(data, stream)); }
  template <typename T> T *as() { return static_cast<T *>(data); }

private:
  cudaStream_t stream;
  void *data = nullptr;
};

} // namespace

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

Communicator::Communicator(const DeviceMesh &mesh, int64_t rank,
                           cudaStream_t compute)
    : mesh(mesh), rank(rank), compute(compute) {
  LOOM_CUDA_CHECK(
      cudaStreamCreateWithFlags(&commStream, cudaStreamNonBlocking));
  LOOM_CUDA_CHECK(
      cudaEventCreateWithFlags(&computeDone, cudaEventDisableTiming));
  LOOM_CUDA_CHECK(cudaEventCreateWithFlags(&commDone, cudaEventDisableTiming));
}

Communicator::~Communicator() {
  // Errors cannot be reported from here; a program that cares calls
  // synchronize() first.
  for (QueuedSend &q : queued)
    cudaFreeAsync(q.staging, commStream);
  for (auto &[peer, messages] : incoming)
    for (Incoming &m : messages)
      if (m.stash)
        cudaFreeAsync(m.stash, commStream);
  for (auto &[mask, group] : groups)
    if (group.comm)
      ncclCommDestroy(group.comm);
  if (world)
    ncclCommDestroy(world);
  cudaEventDestroy(computeDone);
  cudaEventDestroy(commDone);
  for (auto &[request, started] : inFlight)
    cudaEventDestroy(started.done);
  for (cudaEvent_t event : freeEvents)
    cudaEventDestroy(event);
  cudaStreamDestroy(commStream);
}

Status Communicator::ncclFailure(const char *call, ncclResult_t result,
                                 const std::string &what) const {
  std::string text = "rank " + std::to_string(rank) + ": " + call +
                     " failed in " + what + ": " + ncclGetErrorString(result);
  if (const char *last = ncclGetLastError(world); last && *last)
    text += std::string(" (") + last + ")";
  return Status::failure(text);
}

Status Communicator::create(const DeviceMesh &mesh, cudaStream_t compute,
                            std::unique_ptr<Communicator> &out,
                            MPI_Comm world) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return Status::failure("MPI is not initialized (call MPI_Init before "
                           "creating the NCCL communicator)");
  int size = 0, rank = 0;
  if (MPI_Comm_size(world, &size) != MPI_SUCCESS ||
      MPI_Comm_rank(world, &rank) != MPI_SUCCESS)
    return Status::failure("MPI_Comm_size/MPI_Comm_rank failed on the world "
                           "communicator");
  setReportedRank(rank);
  if (size != mesh.getNumDevices())
    return Status::failure("mesh " + mesh.toString() + " has " +
                           std::to_string(mesh.getNumDevices()) +
                           " devices but MPI runs " + std::to_string(size) +
                           " ranks (start it with mpirun -np " +
                           std::to_string(mesh.getNumDevices()) + ")");

  // Rank 0's id reaches every rank over MPI: the only bootstrap traffic.
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (rank == 0)
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
      return Status::failure("rank 0: ncclGetUniqueId failed: " +
                             std::string(ncclGetErrorString(r)));
  if (MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world) != MPI_SUCCESS)
    return Status::failure("rank " + std::to_string(rank) +
                           ": MPI_Bcast of the NCCL unique id failed");

  std::unique_ptr<Communicator> comm(new Communicator(mesh, rank, compute));
  if (ncclResult_t r = ncclCommInitRank(&comm->world, size, id, rank);
      r != ncclSuccess)
    return comm->ncclFailure("ncclCommInitRank", r,
                             "the world communicator of mesh " +
                                 mesh.toString());
  if (Status status = comm->createGroups(); !status)
    return status;
  out = std::move(comm);
  return Status::success();
}

Status Communicator::createGroups() {
  const auto &axes = mesh.getAxes();
  if (axes.size() >= 63)
    return Status::failure("mesh " + mesh.toString() + " has too many axes");
  std::vector<int64_t> coordinates = mesh.getCoordinates(rank);
  // Every rank walks the subsets in the same order: ncclCommSplit is
  // collective over the world.
  for (uint64_t mask = 1; mask < (uint64_t(1) << axes.size()); ++mask) {
    AxisList subset;
    std::vector<int64_t> root = coordinates;
    for (size_t a = 0; a < axes.size(); ++a)
      if (mask & (uint64_t(1) << a)) {
        subset.push_back(axes[a].name);
        root[a] = 0;
      }
    int64_t size = mesh.getGroupSize(subset);
    if (size == 1)
      continue;
    // Color: the group's first member; key: the position in mesh order.
    int color = static_cast<int>(mesh.getRank(root));
    int key = static_cast<int>(mesh.getGroupIndex(rank, subset));
    Group group;
    group.size = static_cast<int>(size);
    if (ncclResult_t r = ncclCommSplit(world, color, key, &group.comm, nullptr);
        r != ncclSuccess)
      return ncclFailure("ncclCommSplit", r,
                         "the group communicator over " +
                             mpi::formatAxes(subset));
    groups[mask] = group;
  }
  return Status::success();
}

Status Communicator::getView(const AxisList &axes, const std::string &what,
                             View &view) {
  uint64_t mask = 0;
  for (const std::string &axis : axes)
    mask |= uint64_t(1) << *mesh.findAxis(axis);
  view = View();
  view.size = static_cast<int>(mesh.getGroupSize(axes));
  view.index = static_cast<int>(mesh.getGroupIndex(rank, axes));
  if (view.size == 1) {
    view.ncclRankOf = {0};
    return Status::success();
  }
  view.comm = groups.at(mask).comm;
  // The subset in mesh order: the order of the communicator's NCCL ranks.
  AxisList sorted = axes;
  std::sort(sorted.begin(), sorted.end(),
            [&](const std::string &a, const std::string &b) {
              return *mesh.findAxis(a) < *mesh.findAxis(b);
            });
  for (int64_t member : mesh.getGroup(rank, axes))
    view.ncclRankOf.push_back(
        static_cast<int>(mesh.getGroupIndex(member, sorted)));
  return Status::success();
}

void Communicator::begin() {
  LOOM_CUDA_CHECK(cudaEventRecord(computeDone, compute));
  LOOM_CUDA_CHECK(cudaStreamWaitEvent(commStream, computeDone, 0));
}

void Communicator::end() {
  LOOM_CUDA_CHECK(cudaEventRecord(commDone, commStream));
  LOOM_CUDA_CHECK(cudaStreamWaitEvent(compute, commDone, 0));
}

Status Communicator::synchronize() {
  if (Status s = postSends(); !s)
    return s;
  LOOM_CUDA_CHECK(cudaStreamSynchronize(commStream));
  // A message never delivered means the table and the program disagree.
  std::string missing;
  for (auto &[peer, messages] : incoming)
    for (Incoming &m : messages) {
      if (m.stash) {
        LOOM_CUDA_CHECK(cudaFree(m.stash));
        m.stash = nullptr;
      }
      if (!m.delivered && missing.empty())
        missing = "tag " + std::to_string(m.message.tag) + " from rank " +
                  std::to_string(peer);
    }
  incoming.clear();
  haveTable = false;
  if (!missing.empty())
    return Status::failure("rank " + std::to_string(rank) + ": message " +
                           missing +
                           " was declared for this step but no dist.recv "
                           "took it");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {

template <typename T>
void copyAsync(T *out, const T *in, int64_t count, cudaStream_t stream) {
  if (out != in && count > 0)
    LOOM_CUDA_CHECK(cudaMemcpyAsync(out, in, count * sizeof(T),
                                    cudaMemcpyDeviceToDevice, stream));
}

} // namespace

template <typename T>
Status Communicator::allGather(const T *in, const Shape &shape,
                               const AxisList &axes, int64_t dim, T *out) {
  if (Status s = contract().allGather(shape, axes, dim); !s)
    return s;
  std::string what = CollectiveContract::describe("all_gather", axes);
  View view;
  if (Status s = getView(axes, what, view); !s)
    return s;
  int64_t count = numElements(shape), outer, inner;
  outerInner(shape, dim, outer, inner);
  int64_t row = shape[dim] * inner, n = view.size;
  begin();
  if (n == 1) {
    copyAsync(out, in, count, commStream);
  } else {
    // NCCL concatenates whole blocks in NCCL-rank order; the result wants
    // group order along `dim`.
    Scratch gathered(commStream, n * count * sizeof(T));
    if (ncclResult_t r = ncclAllGather(in, gathered.as<T>(), count,
                                       ncclTypeOf<T>(), view.comm, commStream);
        r != ncclSuccess)
      return ncclFailure("ncclAllGather", r, what);
    for (int64_t g = 0; g < n; ++g)
      cuda::copyRows(commStream, out + g * row, n * row * sizeof(T),
                     gathered.as<T>() + view.ncclRankOf[g] * count,
                     row * sizeof(T), row * sizeof(T), outer);
  }
  end();
  return Status::success();
}

template <typename T>
Status Communicator::allSlice(const T *in, const Shape &shape,
                              const AxisList &axes, int64_t dim, T *out) {
  if (Status s = contract().allSlice(shape, axes, dim); !s)
    return s;
  std::string what = CollectiveContract::describe("all_slice", axes);
  View view;
  if (Status s = getView(axes, what, view); !s)
    return s;
  int64_t outer, inner;
  outerInner(shape, dim, outer, inner);
  int64_t piece = shape[dim] / view.size * inner;
  // Local: no traffic, so it stays on the compute stream.
  cuda::copyRows(compute, out, piece * sizeof(T), in + view.index * piece,
                 shape[dim] * inner * sizeof(T), piece * sizeof(T), outer);
  return Status::success();
}

template <typename T>
Status Communicator::allReduce(const T *in, const Shape &shape,
                               const AxisList &axes, ReduceKind kind, T *out) {
  if (Status s = contract().allReduce(shape, axes, kind); !s)
    return s;
  std::string what = CollectiveContract::describe(kind, axes);
  View view;
  if (Status s = getView(axes, what, view); !s)
    return s;
  int64_t count = numElements(shape);
  begin();
  if (view.size == 1) {
    copyAsync(out, in, count, commStream);
  } else if (ncclResult_t r =
                 ncclAllReduce(in, out, count, ncclTypeOf<T>(),
                               kind == ReduceKind::Sum ? ncclSum : ncclMax,
                               view.comm, commStream);
             r != ncclSuccess) {
    return ncclFailure("ncclAllReduce", r, what);
  }
  end();
  return Status::success();
}

template <typename T>
Status Communicator::startAllReduce(const T *in, const Shape &shape,
                                    const AxisList &axes, ReduceKind kind,
                                    T *out, Request &request) {
  if (Status s = contract().allReduce(shape, axes, kind); !s)
    return s;
  std::string what = CollectiveContract::describe(kind, axes);
  View view;
  if (Status s = getView(axes, what, view); !s)
    return s;
  int64_t count = numElements(shape);
  // The step's memory plan ends `in`'s life at this op, so the
  // communication stream must not read it later: it reduces a copy made in
  // compute-stream order.
  copyAsync(out, in, count, compute);
  begin();
  if (view.size > 1)
    if (ncclResult_t r = ncclAllReduce(
            out, out, count, ncclTypeOf<T>(),
            kind == ReduceKind::Sum ? ncclSum : ncclMax, view.comm, commStream);
        r != ncclSuccess)
      return ncclFailure("ncclAllReduce", r, what);
  cudaEvent_t done = nullptr;
  if (freeEvents.empty()) {
    LOOM_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  } else {
    done = freeEvents.back();
    freeEvents.pop_back();
  }
  LOOM_CUDA_CHECK(cudaEventRecord(done, commStream));
  request = nextRequest++;
  inFlight[request] = {done, what};
  return Status::success();
}

Status Communicator::wait(Request request) {
  auto it = inFlight.find(request);
  if (it == inFlight.end()) {
    if (request < 0 || request >= nextRequest)
      return Status::failure("wait: request #" + std::to_string(request) +
                             " was never started");
    return Status::failure("wait: request #" + std::to_string(request) +
                           " was already waited");
  }
  // A later record of the event (a later start reusing it) does not move
  // this wait: it waits for the record made before it.
  LOOM_CUDA_CHECK(cudaStreamWaitEvent(compute, it->second.done, 0));
  freeEvents.push_back(it->second.done);
  inFlight.erase(it);
  return Status::success();
}

Status Communicator::checkAllWaited() const {
  if (inFlight.empty())
    return Status::success();
  std::string list;
  for (const auto &[id, started] : inFlight)
    list += (list.empty() ? "" : ", ") + std::string("#") + std::to_string(id) +
            " (" + started.what + ")";
  return Status::failure(std::to_string(inFlight.size()) +
                         " all-reduce(s) started and never waited at the end "
                         "of the step: " +
                         list);
}

template <typename T>
Status Communicator::reduceScatter(const T *in, const Shape &shape,
                                   const AxisList &axes, int64_t dim, T *out) {
  if (Status s = contract().reduceScatter(shape, axes, dim); !s)
    return s;
  std::string what = CollectiveContract::describe("reduce_scatter", axes);
  View view;
  if (Status s = getView(axes, what, view); !s)
    return s;
  int64_t count = numElements(shape), outer, inner;
  outerInner(shape, dim, outer, inner);
  int64_t n = view.size, piece = shape[dim] / n * inner;
  begin();
  if (n == 1) {
    copyAsync(out, in, count, commStream);
  } else {
    // Block c of the packed operand is the piece of the member with NCCL
    // rank c, which is what NCCL hands that member.
    Scratch packed(commStream, count * sizeof(T));
    for (int64_t g = 0; g < n; ++g)
      cuda::copyRows(commStream,
                     packed.as<T>() + view.ncclRankOf[g] * outer * piece,
                     piece * sizeof(T), in + g * piece, n * piece * sizeof(T),
                     piece * sizeof(T), outer);
    if (ncclResult_t r =
            ncclReduceScatter(packed.as<T>(), out, outer * piece,
                              ncclTypeOf<T>(), ncclSum, view.comm, commStream);
        r != ncclSuccess)
      return ncclFailure("ncclReduceScatter", r, what);
  }
  end();
  return Status::success();
}

template <typename T>
Status Communicator::allToAll(const T *in, const Shape &shape,
                              const AxisList &axes, int64_t splitDim,
                              int64_t concatDim, T *out) {
  if (Status s = contract().allToAll(shape, axes, splitDim, concatDim); !s)
    return s;
  std::string what = CollectiveContract::describe("all_to_all", axes);
  View view;
  if (Status s = getView(axes, what, view); !s)
    return s;
  int64_t n = view.size, count = numElements(shape);
  begin();
  if (n == 1) {
    copyAsync(out, in, count, commStream);
    end();
    return Status::success();
  }
  Shape pieceShape = shape;
  pieceShape[splitDim] /= n;
  int64_t pieceCount = count / n;
  int64_t splitOuter, splitInner;
  outerInner(shape, splitDim, splitOuter, splitInner);
  int64_t splitRow = pieceShape[splitDim] * splitInner;
  Scratch sendBuffer(commStream, count * sizeof(T));
  Scratch recvBuffer(commStream, count * sizeof(T));
  // Piece j (group order) becomes contiguous block j.
  for (int64_t j = 0; j < n; ++j)
    cuda::copyRows(commStream, sendBuffer.as<T>() + j * pieceCount,
                   splitRow * sizeof(T), in + j * splitRow,
                   n * splitRow * sizeof(T), splitRow * sizeof(T), splitOuter);
  ncclGroupStart();
  for (int64_t j = 0; j < n; ++j) {
    ncclSend(sendBuffer.as<T>() + j * pieceCount, pieceCount, ncclTypeOf<T>(),
             view.ncclRankOf[j], view.comm, commStream);
    ncclRecv(recvBuffer.as<T>() + j * pieceCount, pieceCount, ncclTypeOf<T>(),
             view.ncclRankOf[j], view.comm, commStream);
  }
  if (ncclResult_t r = ncclGroupEnd(); r != ncclSuccess)
    return ncclFailure("ncclSend/ncclRecv", r, what);
  // Block j (from member j) is piece j along `concatDim`.
  int64_t concatOuter, concatInner;
  outerInner(pieceShape, concatDim, concatOuter, concatInner);
  int64_t concatRow = pieceShape[concatDim] * concatInner;
  for (int64_t j = 0; j < n; ++j)
    cuda::copyRows(commStream, out + j * concatRow, n * concatRow * sizeof(T),
                   recvBuffer.as<T>() + j * pieceCount, concatRow * sizeof(T),
                   concatRow * sizeof(T), concatOuter);
  end();
  return Status::success();
}

template <typename T>
Status Communicator::collectivePermute(const T *in, const Shape &shape,
                                       const AxisList &axes, int64_t shift,
                                       T *out) {
  if (Status s = contract().collectivePermute(shape, axes); !s)
    return s;
  std::string what = CollectiveContract::describe("collective_permute", axes);
  View view;
  if (Status s = getView(axes, what, view); !s)
    return s;
  int64_t n = view.size, count = numElements(shape);
  int64_t s = ((shift % n) + n) % n;
  begin();
  if (s == 0) {
    copyAsync(out, in, count, commStream);
    end();
    return Status::success();
  }
  int to = view.ncclRankOf[(view.index + s) % n];
  int from = view.ncclRankOf[(view.index - s + n) % n];
  // `out` may be `in`: receive into scratch then.
  std::unique_ptr<Scratch> staging;
  T *target = out;
  if (out == in) {
    staging = std::make_unique<Scratch>(commStream, count * sizeof(T));
    target = staging->as<T>();
  }
  ncclGroupStart();
  ncclSend(in, count, ncclTypeOf<T>(), to, view.comm, commStream);
  ncclRecv(target, count, ncclTypeOf<T>(), from, view.comm, commStream);
  if (ncclResult_t r = ncclGroupEnd(); r != ncclSuccess)
    return ncclFailure("ncclSend/ncclRecv", r, what);
  copyAsync(out, const_cast<const T *>(target), count, commStream);
  end();
  return Status::success();
}

template <typename T>
Status Communicator::broadcast(const T *in, const Shape &shape,
                               const AxisList &axes, int64_t root, T *out) {
  if (Status s = contract().broadcast(shape, axes, root); !s)
    return s;
  std::string what = CollectiveContract::describe("broadcast", axes);
  View view;
  if (Status s = getView(axes, what, view); !s)
    return s;
  int64_t count = numElements(shape);
  begin();
  if (view.size == 1) {
    copyAsync(out, in, count, commStream);
  } else if (ncclResult_t r =
                 ncclBroadcast(in, out, count, ncclTypeOf<T>(),
                               view.ncclRankOf[root], view.comm, commStream);
             r != ncclSuccess) {
    return ncclFailure("ncclBroadcast", r, what);
  }
  end();
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Point-to-point
//===----------------------------------------------------------------------===//

Status Communicator::beginStep(const Message *messages, size_t count) {
  if (!queued.empty() || haveTable)
    return Status::failure("rank " + std::to_string(rank) +
                           ": a step starts before the previous one ended "
                           "(synchronize() posts its sends and checks its "
                           "receives)");
  incoming.clear();
  for (size_t i = 0; i < count; ++i) {
    const Message &m = messages[i];
    if (m.peer < 0 || m.peer >= mesh.getNumDevices() || m.peer == rank)
      return Status::failure(
          "rank " + std::to_string(rank) +
          ": the step's message table names rank " + std::to_string(m.peer) +
          " as a sender (not another rank of mesh " + mesh.toString() + ")");
    Incoming entry;
    entry.message = m;
    incoming[m.peer].push_back(entry);
  }
  haveTable = true;
  return Status::success();
}

void Communicator::enqueueSends() {
  for (const QueuedSend &q : queued)
    ncclSend(q.staging, q.count, q.type, q.peer, world, commStream);
}

void Communicator::releaseSends() {
  // Stream order frees each staging buffer after its transfer.
  for (const QueuedSend &q : queued)
    LOOM_CUDA_CHECK(cudaFreeAsync(q.staging, commStream));
  queued.clear();
}

Status Communicator::postSends() {
  if (queued.empty())
    return Status::success();
  ncclGroupStart();
  enqueueSends();
  if (ncclResult_t r = ncclGroupEnd(); r != ncclSuccess)
    return ncclFailure("ncclSend", r, "the queued sends at the step's end");
  releaseSends();
  return Status::success();
}

namespace {

/// The element type names of messages (elementTypeName for the runtime's
/// three); distinct per type, so that comparing names compares types.
const char *typeName(ncclDataType_t type) {
  // A table, not a switch: NCCL releases (and the emulator) differ in which
  // types they define beyond these.
  static const std::pair<ncclDataType_t, const char *> names[] = {
      {ncclFloat32, "f32"},  {ncclFloat64, "f64"}, {ncclInt64, "i64"},
      {ncclInt8, "i8"},      {ncclUint8, "ui8"},   {ncclInt32, "i32"},
      {ncclUint32, "ui32"},  {ncclUint64, "ui64"}, {ncclFloat16, "f16"},
      {ncclBfloat16, "bf16"}};
  for (const auto &[known, name] : names)
    if (known == type)
      return name;
  return "an unknown type";
}

size_t elementBytes(ncclDataType_t type) {
  switch (type) {
  case ncclFloat64:
  case ncclInt64:
  case ncclUint64:
    return 8;
  case ncclFloat32:
  case ncclInt32:
  case ncclUint32:
    return 4;
  default:
    return 1;
  }
}

} // namespace

Status Communicator::receive(void *out, const Shape &shape, ncclDataType_t type,
                             int64_t from, Tag tag, const std::string &what) {
  int64_t count = numElements(shape);
  size_t bytes = count * elementBytes(type);
  if (!haveTable) {
    if (tag != 0)
      return Status::failure(what +
                             ": without a step's message table NCCL "
                             "matches messages by order, tag " +
                             std::to_string(tag) + " is not supported (use 0)");
    ncclGroupStart();
    for (const QueuedSend &q : queued)
      ncclSend(q.staging, q.count, q.type, q.peer, world, commStream);
    ncclRecv(out, count, type, static_cast<int>(from), world, commStream);
    if (ncclResult_t r = ncclGroupEnd(); r != ncclSuccess)
      return ncclFailure("ncclSend/ncclRecv", r, what);
    for (const QueuedSend &q : queued)
      LOOM_CUDA_CHECK(cudaFreeAsync(q.staging, commStream));
    queued.clear();
    return Status::success();
  }
  auto found = incoming.find(from);
  std::vector<Incoming> empty;
  std::vector<Incoming> &messages =
      found == incoming.end() ? empty : found->second;
  // The first undelivered message of the peer with this tag.
  size_t k = 0;
  while (k < messages.size() &&
         (messages[k].delivered || messages[k].message.tag != tag))
    ++k;
  if (k == messages.size())
    return Status::failure(what + ": rank " + std::to_string(from) +
                           " sends no (further) message with tag " +
                           std::to_string(tag) +
                           " to this rank in the step's message table");
  Incoming &wanted = messages[k];
  // The table knows the message's type and count: the stricter check.
  if (Status s = contract().received(
          what, shape, typeName(type), elementBytes(type),
          {wanted.message.count *
               static_cast<int64_t>(elementBytes(wanted.message.type)),
           typeName(wanted.message.type), wanted.message.count});
      !s)
    return s;
  wanted.delivered = true;
  if (wanted.posted) {
    // It arrived with an earlier receive: take it from the stash.
    if (bytes > 0)
      LOOM_CUDA_CHECK(cudaMemcpyAsync(out, wanted.stash, bytes,
                                      cudaMemcpyDeviceToDevice, commStream));
    LOOM_CUDA_CHECK(cudaFreeAsync(wanted.stash, commStream));
    wanted.stash = nullptr;
    return Status::success();
  }
  // The peer posts its messages in table order: receive the ones before
  // this one (into the stash), this one, and post the queued sends, all in
  // one group so neither side's sends wait for the other's.
  ncclGroupStart();
  enqueueSends();
  for (size_t i = 0; i <= k; ++i) {
    Incoming &m = messages[i];
    if (m.posted)
      continue;
    m.posted = true;
    void *target = out;
    if (i != k) {
      size_t stashBytes = m.message.count * elementBytes(m.message.type);
      LOOM_CUDA_CHECK(cudaMallocAsync(&m.stash, stashBytes > 0 ? stashBytes : 1,
                                      commStream));
      target = m.stash;
    }
    ncclRecv(target, m.message.count, m.message.type, static_cast<int>(from),
             world, commStream);
  }
  if (ncclResult_t r = ncclGroupEnd(); r != ncclSuccess)
    return ncclFailure("ncclSend/ncclRecv", r, what);
  releaseSends();
  return Status::success();
}

template <typename T>
Status Communicator::send(const T *in, const Shape &shape, int64_t to,
                          Tag tag) {
  if (Status s = contract().send(shape, to, tag); !s)
    return s;
  std::string what = CollectiveContract::describeSend(to, tag);
  if (!haveTable && tag != 0)
    return Status::failure(what +
                           ": without a step's message table NCCL "
                           "matches messages by order, tag " +
                           std::to_string(tag) + " is not supported (use 0)");
  if (to == rank)
    return Status::success();
  int64_t count = numElements(shape);
  QueuedSend q{nullptr, count, ncclTypeOf<T>(), static_cast<int>(to)};
  // The staged copy lets the caller go on (and reuse `in`) while the
  // transfer waits for the receiver.
  begin();
  LOOM_CUDA_CHECK(cudaMallocAsync(&q.staging, count > 0 ? count * sizeof(T) : 1,
                                  commStream));
  copyAsync(static_cast<T *>(q.staging), in, count, commStream);
  queued.push_back(q);
  return Status::success();
}

template <typename T>
Status Communicator::recv(T *out, const Shape &shape, int64_t from, Tag tag) {
  if (Status s = contract().recv(shape, from, tag); !s)
    return s;
  std::string what = CollectiveContract::describeRecv(from, tag);
  int64_t count = numElements(shape);
  begin();
  if (from == rank) {
    LOOM_CUDA_CHECK(cudaMemsetAsync(out, 0, count * sizeof(T), commStream));
  } else if (Status s = receive(out, shape, ncclTypeOf<T>(), from, tag, what);
             !s) {
    return s;
  }
  end();
  return Status::success();
}

#define LOOM_INSTANTIATE(T)                                                    \
  template Status Communicator::allGather<T>(const T *, const Shape &,         \
                                             const AxisList &, int64_t, T *);  \
  template Status Communicator::allSlice<T>(const T *, const Shape &,          \
                                            const AxisList &, int64_t, T *);   \
  template Status Communicator::allReduce<T>(                                  \
      const T *, const Shape &, const AxisList &, ReduceKind, T *);            \
  template Status Communicator::startAllReduce<T>(                             \
      const T *, const Shape &, const AxisList &, ReduceKind, T *, Request &); \
  template Status Communicator::reduceScatter<T>(                              \
      const T *, const Shape &, const AxisList &, int64_t, T *);               \
  template Status Communicator::allToAll<T>(                                   \
      const T *, const Shape &, const AxisList &, int64_t, int64_t, T *);      \
  template Status Communicator::collectivePermute<T>(                          \
      const T *, const Shape &, const AxisList &, int64_t, T *);               \
  template Status Communicator::broadcast<T>(const T *, const Shape &,         \
                                             const AxisList &, int64_t, T *);  \
  template Status Communicator::send<T>(const T *, const Shape &, int64_t,     \
                                        Tag);                                  \
  template Status Communicator::recv<T>(T *, const Shape &, int64_t, Tag);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
LOOM_INSTANTIATE(int64_t)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::nccl

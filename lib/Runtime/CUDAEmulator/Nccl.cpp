//===- Nccl.cpp - CUDA emulator: NCCL over MPI ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each NCCL communicator is an MPI communicator over the same ranks in the
// same order:
//
//   - ncclCommInitRank is collective over MPI_COMM_WORLD (every process of
//     the job calls it, as every rank of a Loom program does) and splits it
//     by the unique id, ordering by the rank each caller claims;
//   - ncclCommSplit is MPI_Comm_split of the parent (NCCL_SPLIT_NOCOLOR:
//     MPI_UNDEFINED, no communicator);
//   - collectives are the matching MPI collectives, in place where NCCL's
//     buffers say so; ncclAvg divides the sum. They are checked at the call
//     and run in their stream's order (Streams.cpp): a collective on a
//     communication stream runs when the scheduler reaches it, so it reads
//     its buffers as late or as early as the program's events allow. Every
//     rank runs the same program, so every rank reaches its collectives in
//     the same order;
//   - point-to-point calls, communicator creation and destruction first run
//     all pending work, then run at the call (in stream order, never
//     deferred: a rendezvous deferred differently on two ranks could hang);
//   - point-to-point is rendezvous, as NCCL's is: a send completes only
//     when the peer's matching receive runs (MPI_Issend, never a buffered
//     MPI_Send, which would hide a deadlock a GPU hits). Outside a group
//     ncclSend/ncclRecv block until matched, as NCCL's do on the stream;
//     inside ncclGroupStart/End they are posted together and completed at
//     the outermost ncclGroupEnd, so a ring exchange completes;
//   - a transfer still unmatched after $LOOM_CUDA_EMULATOR_P2P_TIMEOUT_S
//     seconds (60 when unset) stops the program, naming the call and the
//     peer, where NCCL would hang.
//
// Buffers must be emulated device memory (ncclInvalidArgument otherwise,
// explained on stderr), and the stream must be live.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include <nccl.h>

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sched.h>
#include <string>
#include <unistd.h>
#include <vector>

struct ncclComm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  std::string lastError;
};

namespace {

using namespace loom::cudaemu;

/// Tag of every point-to-point message: MPI keeps messages between two
/// ranks of one communicator in order, as NCCL does per peer.
constexpr int kTag = 0x10cc;

struct PendingTransfer {
  bool isSend;
  void *buffer;
  int count;
  MPI_Datatype type;
  int peer;
  MPI_Comm comm;
};

thread_local int groupDepth = 0;
thread_local std::vector<PendingTransfer> pending;
thread_local std::string lastErrorText;

ncclResult_t fail(ncclComm_t comm, ncclResult_t result,
                  const std::string &message) {
  explain(message);
  lastErrorText = message;
  if (comm)
    comm->lastError = message;
  return result;
}

bool mpiType(ncclDataType_t type, MPI_Datatype &out, size_t &bytes) {
  switch (type) {
  case ncclInt8:
    out = MPI_INT8_T, bytes = 1;
    return true;
  case ncclUint8:
    out = MPI_UINT8_T, bytes = 1;
    return true;
  case ncclInt32:
    out = MPI_INT32_T, bytes = 4;
    return true;
  case ncclUint32:
    out = MPI_UINT32_T, bytes = 4;
    return true;
  case ncclInt64:
    out = MPI_INT64_T, bytes = 8;
    return true;
  case ncclUint64:
    out = MPI_UINT64_T, bytes = 8;
    return true;
  case ncclFloat32:
    out = MPI_FLOAT, bytes = 4;
    return true;
  case ncclFloat64:
    out = MPI_DOUBLE, bytes = 8;
    return true;
  default:
    return false;
  }
}

bool mpiOp(ncclRedOp_t op, MPI_Op &out) {
  switch (op) {
  case ncclSum:
  case ncclAvg:
    out = MPI_SUM;
    return true;
  case ncclProd:
    out = MPI_PROD;
    return true;
  case ncclMax:
    out = MPI_MAX;
    return true;
  case ncclMin:
    out = MPI_MIN;
    return true;
  }
  return false;
}

/// Checks the communicator, stream, type and each buffer (pointer and
/// element count) of a call.
struct CallCheck {
  const char *call;
  ncclComm_t comm;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  size_t elementBytes = 0;

  ncclResult_t start(ncclDataType_t datatype, cudaStream_t stream) {
    if (!comm || comm->comm == MPI_COMM_NULL)
      return fail(comm, ncclInvalidArgument,
                  std::string(call) + ": not a live communicator");
    if (!isLiveStream(stream))
      return fail(comm, ncclInvalidArgument,
                  std::string(call) + ": the stream is not live");
    if (!mpiType(datatype, type, elementBytes))
      return fail(comm, ncclInvalidArgument,
                  std::string(call) + ": data type " +
                      std::to_string(static_cast<int>(datatype)) +
                      " is not emulated");
    return ncclSuccess;
  }
  ncclResult_t buffer(const char *name, const void *pointer, size_t count) {
    if (isDeviceRange(pointer, count * elementBytes))
      return ncclSuccess;
    return fail(comm, ncclInvalidArgument,
                std::string(call) + ": " + name + " (" +
                    std::to_string(count * elementBytes) +
                    " bytes) is not inside one device allocation");
  }
  ncclResult_t peer(int rank) {
    if (rank >= 0 && rank < comm->size)
      return ncclSuccess;
    return fail(comm, ncclInvalidArgument,
                std::string(call) + ": peer " + std::to_string(rank) +
                    " is not a rank of the communicator of " +
                    std::to_string(comm->size));
  }
};

ncclResult_t mpiResult(ncclComm_t comm, const char *call, int code) {
  if (code == MPI_SUCCESS)
    return ncclSuccess;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return fail(comm, ncclSystemError,
              std::string(call) + ": MPI failed: " + std::string(text, length));
}

/// Divides `count` elements by `divisor` after an ncclAvg sum.
void average(void *buffer, size_t count, MPI_Datatype type, int divisor) {
  if (type == MPI_FLOAT)
    for (size_t i = 0; i < count; ++i)
      static_cast<float *>(buffer)[i] /= divisor;
  else if (type == MPI_DOUBLE)
    for (size_t i = 0; i < count; ++i)
      static_cast<double *>(buffer)[i] /= divisor;
  else if (type == MPI_INT64_T)
    for (size_t i = 0; i < count; ++i)
      static_cast<int64_t *>(buffer)[i] /= divisor;
  else if (type == MPI_INT32_T)
    for (size_t i = 0; i < count; ++i)
      static_cast<int32_t *>(buffer)[i] /= divisor;
}

/// Runs the MPI call `collective` in `stream`'s order, as NCCL enqueues a
/// collective. The call has returned success by then: an MPI failure stops
/// the program (NCCL would report it through ncclCommGetAsyncError, which
/// the emulator does not have; MPI's default handler aborts first anyway).
ncclResult_t inStreamOrder(ncclComm_t comm, const char *call,
                           cudaStream_t stream,
                           std::function<int()> collective) {
  enqueue(stream, [comm, call, collective = std::move(collective)] {
    if (mpiResult(comm, call, collective()) != ncclSuccess)
      fatal(std::string(call) + ": the collective failed in stream order");
  });
  return ncclSuccess;
}

/// Seconds a send or receive may wait for its match before the emulator
/// calls it a hang: $LOOM_CUDA_EMULATOR_P2P_TIMEOUT_S, else 60.
double matchTimeoutSeconds() {
  if (const char *text = std::getenv("LOOM_CUDA_EMULATOR_P2P_TIMEOUT_S")) {
    char *end = nullptr;
    double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0)
      return seconds;
    explain("LOOM_CUDA_EMULATOR_P2P_TIMEOUT_S='" + std::string(text) +
            "' is not a positive number of seconds; using 60");
  }
  return 60;
}

/// The peer of `t` as a global rank, with its rank in the communicator
/// when that differs (a group communicator).
std::string describePeer(const PendingTransfer &t) {
  MPI_Group group, world;
  int global = MPI_UNDEFINED, size = 0;
  MPI_Comm_group(t.comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_translate_ranks(group, 1, &t.peer, world, &global);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  MPI_Comm_size(t.comm, &size);
  if (global == MPI_UNDEFINED || global == t.peer)
    return std::to_string(t.peer);
  return std::to_string(global) + " (rank " + std::to_string(t.peer) +
         " of a communicator of " + std::to_string(size) + ")";
}

/// Posts `transfers` (synchronous sends, so a send completes only with its
/// receive) and polls them until all complete. One left unmatched after the
/// timeout stops the program: NCCL would wait forever.
ncclResult_t complete(const char *call,
                      const std::vector<PendingTransfer> &transfers) {
  std::vector<MPI_Request> requests(transfers.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < transfers.size(); ++i) {
    const PendingTransfer &t = transfers[i];
    int code = t.isSend ? MPI_Issend(t.buffer, t.count, t.type, t.peer, kTag,
                                     t.comm, &requests[i])
                        : MPI_Irecv(t.buffer, t.count, t.type, t.peer, kTag,
                                    t.comm, &requests[i]);
    if (code != MPI_SUCCESS)
      return mpiResult(nullptr, call, code);
  }
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  double timeout = matchTimeoutSeconds();
  for (unsigned polls = 0;; ++polls) {
    int done = 0;
    int code = MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                           &done, MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS)
      return mpiResult(nullptr, call, code);
    if (done)
      return ncclSuccess;
    // Spin briefly (a matched pipeline hop is quick), then sleep between
    // polls so waiting ranks leave the CPU to the ones computing.
    if (polls < 1000) {
      sched_yield();
      continue;
    }
    if (std::chrono::duration<double>(Clock::now() - start).count() >=
        timeout) {
      for (size_t i = 0; i < transfers.size(); ++i) {
        int finished = 0;
        MPI_Test(&requests[i], &finished, MPI_STATUS_IGNORE);
        if (finished)
          continue;
        char seconds[32];
        std::snprintf(seconds, sizeof(seconds), "%g", timeout);
        fatal(
            std::string(transfers[i].isSend ? "ncclSend to" : "ncclRecv from") +
            " rank " + describePeer(transfers[i]) + " not matched after " +
            seconds + " s: NCCL would hang here");
      }
    }
    usleep(100);
  }
}

ncclResult_t transfer(const char *call, bool isSend, void *buffer,
                      size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  // Point-to-point runs at the call, after all pending work (so in stream
  // order): deferring a rendezvous could order it differently on two ranks.
  synchronizeAll();
  CallCheck check{call, comm};
  if (ncclResult_t r = check.start(datatype, stream))
    return r;
  if (ncclResult_t r = check.buffer(isSend ? "sendbuff" : "recvbuff", buffer,
                                    count))
    return r;
  if (ncclResult_t r = check.peer(peer))
    return r;
  PendingTransfer t{isSend,          buffer, static_cast<int>(count),
                    check.type,      peer,   comm->comm};
  if (groupDepth > 0) {
    pending.push_back(t);
    return ncclSuccess;
  }
  ncclResult_t r = complete(call, {t});
  if (r != ncclSuccess && comm)
    comm->lastError = lastErrorText;
  return r;
}

} // namespace

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  if (!uniqueId)
    return ncclInvalidArgument;
  std::memset(uniqueId->internal, 0, sizeof(uniqueId->internal));
  std::snprintf(uniqueId->internal, sizeof(uniqueId->internal),
                "loom-cuda-emulator:%ld:%ld", static_cast<long>(getpid()),
                static_cast<long>(std::time(nullptr)));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank) {
  synchronizeAll();
  if (!comm || nranks <= 0 || rank < 0 || rank >= nranks)
    return fail(nullptr, ncclInvalidArgument,
                "ncclCommInitRank: rank " + std::to_string(rank) + " of " +
                    std::to_string(nranks));
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return fail(nullptr, ncclInvalidUsage,
                "ncclCommInitRank: the emulated NCCL runs over MPI, which "
                "is not initialized");
  // The id's bytes pick the communicator (equal ids, one communicator).
  unsigned color = 2166136261u;
  for (char c : id.internal)
    color = (color ^ static_cast<unsigned char>(c)) * 16777619u;
  auto *created = new ncclComm();
  int code = MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(color >> 1), rank,
                            &created->comm);
  if (ncclResult_t r = mpiResult(nullptr, "ncclCommInitRank", code)) {
    delete created;
    return r;
  }
  MPI_Comm_rank(created->comm, &created->rank);
  MPI_Comm_size(created->comm, &created->size);
  if (created->size != nranks || created->rank != rank) {
    int size = created->size;
    MPI_Comm_free(&created->comm);
    delete created;
    return fail(nullptr, ncclInvalidUsage,
                "ncclCommInitRank: " + std::to_string(size) +
                    " processes joined a communicator of " +
                    std::to_string(nranks) + " ranks");
  }
  *comm = created;
  return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                           ncclComm_t *newcomm, ncclConfig_t *config) {
  synchronizeAll();
  if (!comm || !newcomm || comm->comm == MPI_COMM_NULL)
    return fail(comm, ncclInvalidArgument, "ncclCommSplit: no communicator");
  if (color < NCCL_SPLIT_NOCOLOR)
    return fail(comm, ncclInvalidArgument,
                "ncclCommSplit: color " + std::to_string(color));
  MPI_Comm split;
  int code = MPI_Comm_split(
      comm->comm, color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color, key,
      &split);
  if (ncclResult_t r = mpiResult(comm, "ncclCommSplit", code))
    return r;
  if (split == MPI_COMM_NULL) {
    *newcomm = nullptr;
    return ncclSuccess;
  }
  auto *created = new ncclComm();
  created->comm = split;
  MPI_Comm_rank(split, &created->rank);
  MPI_Comm_size(split, &created->size);
  *newcomm = created;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm)
    return ncclSuccess;
  synchronizeAll();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm->comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm->comm);
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (!comm || !count)
    return ncclInvalidArgument;
  *count = comm->size;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!comm || !rank)
    return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error";
  case ncclSystemError:
    return "unhandled system error";
  case ncclInternalError:
    return "internal error";
  case ncclInvalidArgument:
    return "invalid argument";
  case ncclInvalidUsage:
    return "invalid usage";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  }
  return "unknown result code";
}

const char *ncclGetLastError(ncclComm_t comm) {
  return comm ? comm->lastError.c_str() : lastErrorText.c_str();
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  CallCheck check{"ncclAllReduce", comm};
  MPI_Op mop;
  if (ncclResult_t r = check.start(datatype, stream))
    return r;
  if (!mpiOp(op, mop))
    return fail(comm, ncclInvalidArgument, "ncclAllReduce: reduction op");
  if (ncclResult_t r = check.buffer("sendbuff", sendbuff, count))
    return r;
  if (ncclResult_t r = check.buffer("recvbuff", recvbuff, count))
    return r;
  return inStreamOrder(comm, "ncclAllReduce", stream, [=] {
    int code =
        MPI_Allreduce(sendbuff == recvbuff ? MPI_IN_PLACE : sendbuff, recvbuff,
                      static_cast<int>(count), check.type, mop, comm->comm);
    if (op == ncclAvg && code == MPI_SUCCESS)
      average(recvbuff, count, check.type, comm->size);
    return code;
  });
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
                           size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  CallCheck check{"ncclAllGather", comm};
  if (ncclResult_t r = check.start(datatype, stream))
    return r;
  if (ncclResult_t r = check.buffer("sendbuff", sendbuff, sendcount))
    return r;
  if (ncclResult_t r =
          check.buffer("recvbuff", recvbuff, sendcount * comm->size))
    return r;
  const char *own = static_cast<const char *>(recvbuff) +
                    comm->rank * sendcount * check.elementBytes;
  return inStreamOrder(comm, "ncclAllGather", stream, [=] {
    int code =
        MPI_Allgather(sendbuff == own ? MPI_IN_PLACE : sendbuff,
                      static_cast<int>(sendcount), check.type, recvbuff,
                      static_cast<int>(sendcount), check.type, comm->comm);
    return code;
  });
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
                               size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  CallCheck check{"ncclReduceScatter", comm};
  MPI_Op mop;
  if (ncclResult_t r = check.start(datatype, stream))
    return r;
  if (!mpiOp(op, mop))
    return fail(comm, ncclInvalidArgument, "ncclReduceScatter: reduction op");
  if (ncclResult_t r =
          check.buffer("sendbuff", sendbuff, recvcount * comm->size))
    return r;
  if (ncclResult_t r = check.buffer("recvbuff", recvbuff, recvcount))
    return r;
  return inStreamOrder(comm, "ncclReduceScatter", stream, [=] {
    // MPI forbids overlapping buffers; NCCL allows recvbuff inside sendbuff.
    std::vector<char> input(static_cast<const char *>(sendbuff),
                            static_cast<const char *>(sendbuff) +
                                recvcount * comm->size * check.elementBytes);
    int code = MPI_Reduce_scatter_block(input.data(), recvbuff,
                                        static_cast<int>(recvcount), check.type,
                                        mop, comm->comm);
    if (op == ncclAvg && code == MPI_SUCCESS)
      average(recvbuff, recvcount, check.type, comm->size);
    return code;
  });
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  CallCheck check{"ncclBroadcast", comm};
  if (ncclResult_t r = check.start(datatype, stream))
    return r;
  if (ncclResult_t r = check.peer(root))
    return r;
  if (comm->rank == root) {
    if (ncclResult_t r = check.buffer("sendbuff", sendbuff, count))
      return r;
  }
  if (ncclResult_t r = check.buffer("recvbuff", recvbuff, count))
    return r;
  return inStreamOrder(comm, "ncclBroadcast", stream, [=] {
    if (comm->rank == root && sendbuff != recvbuff && count)
      std::memmove(recvbuff, sendbuff, count * check.elementBytes);
    int code = MPI_Bcast(recvbuff, static_cast<int>(count), check.type, root,
                         comm->comm);
    return code;
  });
}

ncclResult_t ncclSend(const void *sendbuff, size_t count,
                      ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return transfer("ncclSend", true, const_cast<void *>(sendbuff), count,
                  datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
                      int peer, ncclComm_t comm, cudaStream_t stream) {
  return transfer("ncclRecv", false, recvbuff, count, datatype, peer, comm,
                  stream);
}

ncclResult_t ncclGroupStart(void) {
  ++groupDepth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void) {
  if (groupDepth == 0)
    return fail(nullptr, ncclInvalidUsage,
                "ncclGroupEnd without ncclGroupStart");
  if (--groupDepth > 0)
    return ncclSuccess;
  std::vector<PendingTransfer> posted;
  posted.swap(pending);
  return complete("ncclGroupEnd", posted);
}

} // extern "C"

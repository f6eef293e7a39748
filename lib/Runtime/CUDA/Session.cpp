//===- Session.cpp - Per-process state of an emitted CUDA program ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Session.h"
#include "loom/Runtime/CUDA/Check.h"

#include <mpi.h>

#include <cstdint>
#include <string>

namespace loom::runtime::cuda {

Session &Session::get(mpi::Communicator &comm) {
  // Never destroyed: CUDA and NCCL teardown from a static destructor would
  // race the runtime's own at exit, and the process ends right after.
  static Session *session = nullptr;
  if (session)
    return *session;
  session = new Session();
  Session &s = *session;

  // Ranks of one node share its GPUs: the node-local rank picks one.
  MPI_Comm node;
  int localRank = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED,
                      static_cast<int>(comm.getRank()), MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &localRank);
  MPI_Comm_free(&node);
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count);
      error != cudaSuccess || count == 0)
    comm.abort(Status::failure("no CUDA device visible (" +
                               std::string(error == cudaSuccess
                                               ? "0 devices"
                                               : describeCudaError(error)) +
                               ")"));
  s.device = localRank % count;
  LOOM_CUDA_CHECK(cudaSetDevice(s.device));
  LOOM_CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  // The step's buffers come from the stream-ordered allocator. Its default
  // pool hands unused memory back to the driver at every synchronization
  // (release threshold 0), so each step would map its buffers afresh; the
  // process keeps what it once used instead.
  cudaMemPool_t pool;
  LOOM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, s.device));
  uint64_t keepEverything = UINT64_MAX;
  LOOM_CUDA_CHECK(cudaMemPoolSetAttribute(
      pool, cudaMemPoolAttrReleaseThreshold, &keepEverything));
  LOOM_CUBLAS_CHECK(cublasCreate(&s.blas));
  LOOM_CUBLAS_CHECK(cublasSetStream(s.blas, s.stream));
  // Full f32 products (no TF32), as the host and the interpreter compute.
  LOOM_CUBLAS_CHECK(cublasSetMathMode(s.blas, CUBLAS_PEDANTIC_MATH));
  LOOM_CUDA_CHECK(
      cudaMalloc(reinterpret_cast<void **>(&s.errorSlot), sizeof(DeviceError)));
  LOOM_CUDA_CHECK(cudaMemset(s.errorSlot, 0, sizeof(DeviceError)));
  if (Status status =
          nccl::Communicator::create(comm.getMesh(), s.stream, s.nccl);
      !status)
    comm.abort(status);
  return s;
}

Status Session::finish(const char *const *ops, size_t numOps) {
  LOOM_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (Status status = nccl->synchronize(); !status)
    return status;
  DeviceError error;
  LOOM_CUDA_CHECK(
      cudaMemcpy(&error, errorSlot, sizeof(error), cudaMemcpyDeviceToHost));
  if (error.tag == 0)
    return Status::success();
  LOOM_CUDA_CHECK(cudaMemset(errorSlot, 0, sizeof(DeviceError)));
  std::string op = error.tag <= numOps ? std::string(ops[error.tag - 1])
                                       : "op #" + std::to_string(error.tag);
  return Status::failure(op + ": " + describeDeviceError(error));
}

void *Session::findResident(const void *step, size_t index,
                            int64_t bytes) const {
  auto it = residents.find({step, index});
  if (it == residents.end() || it->second.bytes != bytes)
    return nullptr;
  return it->second.data;
}

void Session::keepResident(const void *step, Workspace &ws,
                           const std::vector<Carried> &carried) {
  // Two passes: a carried result may name another argument's previous copy,
  // which must still be alive when it is copied.
  std::vector<void *> retired;
  for (const Carried &value : carried) {
    Resident &slot = residents[{step, value.argument}];
    // The step returned its argument unchanged, read from this very copy.
    if (slot.data == value.data && slot.bytes == value.bytes)
      continue;
    void *kept = ws.release(value.data);
    if (!kept) {
      // Not the workspace's to give: a copy of our own, so that no buffer is
      // resident twice or freed under another name.
      LOOM_CUDA_CHECK(
          cudaMallocAsync(&kept, value.bytes > 0 ? value.bytes : 1, stream));
      if (value.bytes > 0)
        LOOM_CUDA_CHECK(cudaMemcpyAsync(kept, value.data, value.bytes,
                                        cudaMemcpyDeviceToDevice, stream));
    }
    if (slot.data)
      retired.push_back(slot.data);
    slot = {kept, value.bytes};
  }
  for (void *data : retired)
    LOOM_CUDA_CHECK(cudaFreeAsync(data, stream));
}

} // namespace loom::runtime::cuda

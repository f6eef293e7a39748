//===- Session.h - Per-process state of an emitted CUDA program -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// An emitted CUDA step has the host step's signature (harness::StepFn), so
// the same harness stages its inputs and outputs through the host. What the
// host step does not need lives here, created on the first step of the
// process and kept for the next: the device (local rank modulo the visible
// devices), the compute stream, the cuBLAS handle bound to it, the slot
// where kernels record data errors, and the NCCL communicator of the mesh
// (bootstrapped over MPI_COMM_WORLD, which the harness runs on).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_SESSION_H
#define LOOM_RUNTIME_CUDA_SESSION_H

#include "loom/Runtime/CUDA/DeviceError.h"
#include "loom/Runtime/MPI/Communicator.h"
#include "loom/Runtime/NCCL/Communicator.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace loom::runtime::cuda {

using host::Status;

class Session {
public:
  /// The session of this process, created on the first call (collective:
  /// every rank's first step calls it). Ends the job with a message naming
  /// the rank when no device is visible or NCCL cannot start.
  static Session &get(mpi::Communicator &comm);

  int getDevice() const { return device; }
  cudaStream_t getStream() const { return stream; }
  cublasHandle_t getBlas() const { return blas; }
  nccl::Communicator &getNccl() { return *nccl; }

  /// Where the op with 1-based position `tag` in the step records its data
  /// errors.
  ErrorSink errors(unsigned long long tag) const { return {errorSlot, tag}; }

  /// Waits for the step's work on both streams; returns the first data error
  /// a kernel recorded (as "<ops[tag - 1]>: <message>") and clears it.
  Status finish(const char *const *ops, size_t numOps);

private:
  Session() = default;

  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  DeviceError *errorSlot = nullptr;
  std::unique_ptr<nccl::Communicator> nccl;
};

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_SESSION_H

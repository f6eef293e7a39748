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
// Resident state. A training step's loop-carried values (parameters,
// optimizer states, the step counter) would otherwise go up to the device
// and back every step: for GPT-2 small ~2 GB each way. The session keeps
// each carried result's device buffer as the resident copy of its argument,
// keyed by step function (the f32 and f64 steps differ) and argument index;
// the next step reads it instead of the host buffer when the caller says
// the host buffers hold nothing newer (harness::StepContext). The step's
// constants are uploaded once and kept likewise. Copies between
// host and device are counted in deviceTransfers() (Workspace).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_SESSION_H
#define LOOM_RUNTIME_CUDA_SESSION_H

#include "loom/Runtime/CUDA/DeviceError.h"
#include "loom/Runtime/CUDA/Matmul.h"
#include "loom/Runtime/CUDA/Workspace.h"
#include "loom/Runtime/MPI/Communicator.h"
#include "loom/Runtime/NCCL/Communicator.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

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
  /// Where the low-precision GEMMs pack their operands (matmulLowPrecision).
  GemmScratch &getGemmScratch() { return gemmScratch; }

  /// Where the op with 1-based position `tag` in the step records its data
  /// errors.
  ErrorSink errors(unsigned long long tag) const { return {errorSlot, tag}; }

  /// Waits for the step's work on both streams; returns the first data error
  /// a kernel recorded (as "<ops[tag - 1]>: <message>") and clears it.
  Status finish(const char *const *ops, size_t numOps);

  /// The resident copy of argument `index` of the step function that
  /// `step` identifies (any address unique to it), holding `bytes` bytes;
  /// nullptr when there is none or it has another size (so the caller
  /// uploads instead).
  template <typename T>
  const T *getResident(const void *step, size_t index, int64_t bytes) const {
    return static_cast<const T *>(findResident(step, index, bytes));
  }

  /// Carried argument `index` of `step` on the device: its resident copy
  /// when `useResident` (StepContext::carriedAreLastResults) and the session
  /// holds one of `count` elements, else an upload of `host` into `ws`.
  template <typename T>
  const T *carriedArgument(const void *step, size_t index, bool useResident,
                           Workspace &ws, const std::vector<T> &host,
                           int64_t count) {
    if (useResident)
      if (const T *resident = getResident<T>(
              step, index, count * static_cast<int64_t>(sizeof(T)))) {
        ws.countResident(count * static_cast<int64_t>(sizeof(T)));
        return resident;
      }
    return ws.upload(host);
  }

  /// Constant `id` of `step` on the device: uploaded through `ws` on the
  /// step's first call in this process, then kept (a constant never
  /// changes, and the step only reads it).
  template <typename T>
  const T *constant(const void *step, size_t id, Workspace &ws,
                    const std::vector<T> &values) {
    void *&kept = constants[{step, id}];
    if (!kept)
      kept = ws.release(ws.upload(values));
    return static_cast<const T *>(kept);
  }

  /// A carried result that becomes the resident copy of its argument.
  struct Carried {
    /// The argument's index.
    size_t argument;
    /// The result's device buffer and its size.
    const void *data;
    int64_t bytes;
  };

  /// Makes each carried result of the step that `ws` belongs to the
  /// resident copy of its argument of `step`. A buffer of `ws` is handed
  /// over (it outlives the workspace); any other (another name for an
  /// argument's buffer, or one an earlier entry took) is copied, unless it
  /// already is that copy. The previous copies are freed in stream order,
  /// after every new one is taken or copied.
  void keepResident(const void *step, Workspace &ws,
                    const std::vector<Carried> &carried);

private:
  Session() = default;

  struct Resident {
    void *data = nullptr;
    int64_t bytes = 0;
  };

  void *findResident(const void *step, size_t index, int64_t bytes) const;

  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  DeviceError *errorSlot = nullptr;
  std::unique_ptr<nccl::Communicator> nccl;
  GemmScratch gemmScratch;
  /// By (step function, argument index).
  std::map<std::pair<const void *, size_t>, Resident> residents;
  /// By (step function, constant id).
  std::map<std::pair<const void *, size_t>, void *> constants;
};

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_SESSION_H

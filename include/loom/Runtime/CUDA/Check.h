//===- Check.h - Checked CUDA runtime calls ---------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// LOOM_CUDA_CHECK(call) runs a CUDA runtime call and, if it fails, reports the
// call, the rank and CUDA's error name and text, then exits (see
// loom/Runtime/Support/Failure.h). Kernel launches are checked with
// LOOM_CUDA_CHECK(cudaGetLastError()) right after the launch.
// LOOM_CUBLAS_CHECK(call) does the same for cuBLAS calls.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_CHECK_H
#define LOOM_RUNTIME_CUDA_CHECK_H

#include "loom/Runtime/Support/Failure.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

namespace loom::runtime::cuda {

/// Returns CUDA's description of `error`: "<name>: <text>".
std::string describeCudaError(cudaError_t error);

/// Reports and exits if `error` is not cudaSuccess.
inline void checkCuda(cudaError_t error, const CallSite &site) {
  if (error != cudaSuccess) [[unlikely]]
    reportCallFailure(site, describeCudaError(error));
}

/// Returns cuBLAS's description of `status`: "<name>: <text>".
std::string describeCublasStatus(cublasStatus_t status);

/// Reports and exits if `status` is not CUBLAS_STATUS_SUCCESS.
inline void checkCublas(cublasStatus_t status, const CallSite &site) {
  if (status != CUBLAS_STATUS_SUCCESS) [[unlikely]]
    reportCallFailure(site, describeCublasStatus(status));
}

} // namespace loom::runtime::cuda

#define LOOM_CUBLAS_CHECK(call)                                                \
  ::loom::runtime::cuda::checkCublas(                                          \
      (call), ::loom::runtime::CallSite{#call, __FILE__, __LINE__})

#define LOOM_CUDA_CHECK(call)                                                  \
  ::loom::runtime::cuda::checkCuda(                                            \
      (call), ::loom::runtime::CallSite{#call, __FILE__, __LINE__})

#endif // LOOM_RUNTIME_CUDA_CHECK_H

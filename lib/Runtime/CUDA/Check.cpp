//===- Check.cpp - Checked CUDA runtime calls -----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Check.h"

namespace loom::runtime::cuda {

std::string describeCudaError(cudaError_t error) {
  std::string text = cudaGetErrorName(error);
  text += ": ";
  text += cudaGetErrorString(error);
  return text;
}

std::string describeCublasStatus(cublasStatus_t status) {
  std::string text = cublasGetStatusName(status);
  text += ": ";
  text += cublasGetStatusString(status);
  return text;
}

} // namespace loom::runtime::cuda

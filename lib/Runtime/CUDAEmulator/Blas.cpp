//===- Blas.cpp - CUDA emulator: cuBLAS over OpenBLAS ---------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// cuBLAS's handle calls and cublasGemmStridedBatchedEx with its
// column-major semantics: C[i] = alpha op(A[i]) op(B[i]) + beta C[i] for
// batch i, A[i] = A + i * strideA (likewise B, C), alpha and beta read from
// host memory (the default pointer mode). The arguments are checked as
// cuBLAS documents (CUBLAS_STATUS_INVALID_VALUE), f32 and f64 with their
// own compute types are supported (others: CUBLAS_STATUS_NOT_SUPPORTED), and
// every operand must lie in emulated device memory, where a GPU would fault
// on a host pointer (CUBLAS_STATUS_EXECUTION_FAILED, explained on stderr).
// Each batch is one OpenBLAS GEMM.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include <cublas_v2.h>

#include <cblas.h>

#include <algorithm>
#include <string>

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
};

namespace {

using namespace loom::cudaemu;

/// Elements an operand of `rows` x `cols` (column-major, leading dimension
/// `ld`) spans from its first element.
long long span(long long rows, long long cols, long long ld) {
  return rows == 0 || cols == 0 ? 0 : ld * (cols - 1) + rows;
}

/// Checks that each batch of an operand lies in device memory.
bool onDevice(const char *name, const void *base, long long elements,
              long long stride, int batches, size_t elementBytes) {
  if (elements == 0 || batches == 0)
    return true;
  long long first = std::min(0LL, stride * (batches - 1));
  long long last = std::max(0LL, stride * (batches - 1)) + elements;
  const char *start =
      static_cast<const char *>(base) + first * (long long)elementBytes;
  size_t bytes = static_cast<size_t>(last - first) * elementBytes;
  if (isDeviceRange(start, bytes))
    return true;
  explain(std::string("cublasGemmStridedBatchedEx: operand ") + name + " (" +
          std::to_string(bytes) +
          " bytes over its batches) is not inside one device allocation");
  return false;
}

CBLAS_TRANSPOSE blasTranspose(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
}

} // namespace

extern "C" {

cublasStatus_t cublasCreate(cublasHandle_t *handle) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!isLiveStream(stream))
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t *stream) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!stream)
    return CUBLAS_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (mode) {
  case CUBLAS_DEFAULT_MATH:
  case CUBLAS_TENSOR_OP_MATH:
  case CUBLAS_PEDANTIC_MATH:
  case CUBLAS_TF32_TENSOR_OP_MATH:
    handle->mathMode = mode;
    return CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_INVALID_VALUE;
}

const char *cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "the library was not initialized";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "the resource allocation failed";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "an absent device architectural feature is required";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "an access to GPU memory space failed";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "the GPU program failed to execute";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "an internal operation failed";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "the functionality requested is not supported";
  }
  return "unknown error";
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A,
    cudaDataType_t Atype, int lda, long long strideA, const void *B,
    cudaDataType_t Btype, int ldb, long long strideB, const void *beta,
    void *C, cudaDataType_t Ctype, int ldc, long long strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  // Stored shapes of A and B (column-major): op(A) is m x k, op(B) k x n.
  long long aRows = transa == CUBLAS_OP_N ? m : k;
  long long aCols = transa == CUBLAS_OP_N ? k : m;
  long long bRows = transb == CUBLAS_OP_N ? k : n;
  long long bCols = transb == CUBLAS_OP_N ? n : k;
  bool validOps = (transa == CUBLAS_OP_N || transa == CUBLAS_OP_T ||
                   transa == CUBLAS_OP_C) &&
                  (transb == CUBLAS_OP_N || transb == CUBLAS_OP_T ||
                   transb == CUBLAS_OP_C);
  if (!validOps || m < 0 || n < 0 || k < 0 || batchCount < 0 ||
      lda < std::max(1LL, aRows) || ldb < std::max(1LL, bRows) ||
      ldc < std::max(1, m) || !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  bool isDouble = Atype == CUDA_R_64F && computeType == CUBLAS_COMPUTE_64F;
  bool isFloat = Atype == CUDA_R_32F && computeType == CUBLAS_COMPUTE_32F;
  if (Btype != Atype || Ctype != Atype || (!isDouble && !isFloat) ||
      algo != CUBLAS_GEMM_DEFAULT)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m == 0 || n == 0 || batchCount == 0)
    return CUBLAS_STATUS_SUCCESS;
  size_t elementBytes = isDouble ? sizeof(double) : sizeof(float);
  if (!onDevice("A", A, span(aRows, aCols, lda), strideA, batchCount,
                elementBytes) ||
      !onDevice("B", B, span(bRows, bCols, ldb), strideB, batchCount,
                elementBytes) ||
      !onDevice("C", C, span(m, n, ldc), strideC, batchCount, elementBytes))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  for (int i = 0; i < batchCount; ++i) {
    if (isDouble)
      cblas_dgemm(CblasColMajor, blasTranspose(transa), blasTranspose(transb),
                  m, n, k, *static_cast<const double *>(alpha),
                  static_cast<const double *>(A) + i * strideA, lda,
                  static_cast<const double *>(B) + i * strideB, ldb,
                  *static_cast<const double *>(beta),
                  static_cast<double *>(C) + i * strideC, ldc);
    else
      cblas_sgemm(CblasColMajor, blasTranspose(transa), blasTranspose(transb),
                  m, n, k, *static_cast<const float *>(alpha),
                  static_cast<const float *>(A) + i * strideA, lda,
                  static_cast<const float *>(B) + i * strideB, ldb,
                  *static_cast<const float *>(beta),
                  static_cast<float *>(C) + i * strideC, ldc);
  }
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"

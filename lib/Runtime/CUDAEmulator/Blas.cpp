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
// own compute types are supported, and bf16 or f16 inputs (CUDA_R_16BF,
// CUDA_R_16F) with CUBLAS_COMPUTE_32F and an output that is f32 or the
// inputs' 16-bit type, as the tensor cores run them (others:
// CUBLAS_STATUS_NOT_SUPPORTED); every operand must lie in emulated device
// memory, where a GPU would fault on a host pointer
// (CUBLAS_STATUS_EXECUTION_FAILED, explained on stderr). Each batch is one
// OpenBLAS GEMM; 16-bit inputs are widened (exactly) to f32 first, in the
// same layout, so a 16-bit GEMM gives the bits the f32 GEMM of the same
// values gives: the host kernel's (loom::runtime::host::matmul). A 16-bit
// output is computed as cuBLAS computes it, alpha * sum + beta * C in the
// f32 compute type (C widened), and rounded once to the output type, to
// nearest, ties to even: the rounding rule of the host's bf16/f16 results
// (host::roundToBF16, host::roundToF16; docs/MixedPrecision.md).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include <cublas_v2.h>

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

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

/// The value of a bf16 (`isBF16`) or IEEE binary16 bit pattern.
float widen(uint16_t bits, bool isBF16) {
  if (isBF16) {
    uint32_t word = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &word, sizeof value);
    return value;
  }
  float sign = bits & 0x8000u ? -1.0f : 1.0f;
  int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return mantissa ? std::numeric_limits<float>::quiet_NaN()
                    : sign * std::numeric_limits<float>::infinity();
  if (exponent == 0) // Zero or subnormal: mantissa 2^-24.
    return sign * std::ldexp(static_cast<float>(mantissa), -24);
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

/// The `elements` 16-bit values from `data` widened to f32, in place order.
std::vector<float> widenSpan(const void *data, long long elements,
                             bool isBF16) {
  const auto *bits = static_cast<const uint16_t *>(data);
  std::vector<float> values(static_cast<size_t>(elements));
  for (long long i = 0; i < elements; ++i)
    values[i] = widen(bits[i], isBF16);
  return values;
}

/// The bf16 (`isBF16`) or IEEE binary16 bit pattern nearest `value`, ties
/// to even; NaN stays NaN and f16 overflows to infinity from 65520 on.
uint16_t narrow(float value, bool isBF16) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint32_t sign = bits & 0x80000000u, magnitude = bits & 0x7fffffffu;
  if (isBF16) {
    if (magnitude > 0x7f800000u) // NaN: keep it quiet, whatever its payload.
      return static_cast<uint16_t>((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>(bits >> 16);
  }
  uint16_t halfSign = static_cast<uint16_t>(sign >> 16);
  if (magnitude > 0x7f800000u)
    return static_cast<uint16_t>(halfSign | 0x7e00u);
  if (magnitude >= 0x477ff000u) // 65520 and up, infinity included.
    return static_cast<uint16_t>(halfSign | 0x7c00u);
  if (magnitude >= 0x38800000u) { // A normal half (from 2^-14).
    magnitude += 0xfffu + ((magnitude >> 13) & 1u);
    return static_cast<uint16_t>(
        halfSign | (((magnitude >> 13) - (112u << 10)) & 0x7fffu));
  }
  // A subnormal half: a multiple of 2^-24 (both scalings are exact).
  float scaled;
  std::memcpy(&scaled, &magnitude, sizeof scaled);
  return static_cast<uint16_t>(
      halfSign | static_cast<uint16_t>(std::nearbyint(scaled * 16777216.0f)));
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

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->mathMode;
  return CUBLAS_STATUS_SUCCESS;
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
  bool isDouble = Atype == CUDA_R_64F && Ctype == CUDA_R_64F &&
                  computeType == CUBLAS_COMPUTE_64F;
  bool isFloat = Atype == CUDA_R_32F && Ctype == CUDA_R_32F &&
                 computeType == CUBLAS_COMPUTE_32F;
  bool isHalf = (Atype == CUDA_R_16BF || Atype == CUDA_R_16F) &&
                (Ctype == CUDA_R_32F || Ctype == Atype) &&
                computeType == CUBLAS_COMPUTE_32F;
  if (Btype != Atype || (!isDouble && !isFloat && !isHalf) ||
      algo != CUBLAS_GEMM_DEFAULT)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m == 0 || n == 0 || batchCount == 0)
    return CUBLAS_STATUS_SUCCESS;
  bool halfOutput = isHalf && Ctype == Atype;
  size_t inputBytes = isDouble ? sizeof(double)
                      : isHalf ? sizeof(uint16_t)
                               : sizeof(float);
  size_t outputBytes = isDouble     ? sizeof(double)
                       : halfOutput ? sizeof(uint16_t)
                                    : sizeof(float);
  long long aSpan = span(aRows, aCols, lda), bSpan = span(bRows, bCols, ldb);
  if (!onDevice("A", A, aSpan, strideA, batchCount, inputBytes) ||
      !onDevice("B", B, bSpan, strideB, batchCount, inputBytes) ||
      !onDevice("C", C, span(m, n, ldc), strideC, batchCount, outputBytes))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  // The scalars are host memory, read at the call (CUBLAS_POINTER_MODE_HOST);
  // the product runs in the handle's stream order.
  float alphaF = 0, betaF = 0;
  double alphaD = 0, betaD = 0;
  if (isDouble) {
    alphaD = *static_cast<const double *>(alpha);
    betaD = *static_cast<const double *>(beta);
  } else {
    alphaF = *static_cast<const float *>(alpha);
    betaF = *static_cast<const float *>(beta);
  }
  enqueue(handle->stream, [=] {
    for (int i = 0; i < batchCount; ++i) {
      if (isHalf) {
        bool isBF16 = Atype == CUDA_R_16BF;
        std::vector<float> a = widenSpan(
            static_cast<const uint16_t *>(A) + i * strideA, aSpan, isBF16);
        std::vector<float> b = widenSpan(
            static_cast<const uint16_t *>(B) + i * strideB, bSpan, isBF16);
        if (!halfOutput) {
          cblas_sgemm(CblasColMajor, blasTranspose(transa),
                      blasTranspose(transb), m, n, k, alphaF, a.data(), lda,
                      b.data(), ldb, betaF,
                      static_cast<float *>(C) + i * strideC, ldc);
          continue;
        }
        // The f32 result of the whole update, then one rounding per
        // element; C's padding between columns is neither read nor written.
        auto *c = static_cast<uint16_t *>(C) + i * strideC;
        std::vector<float> sum(static_cast<size_t>(m) * n, 0.0f);
        if (betaF != 0.0f) // cuBLAS does not read C when beta is 0.
          for (int col = 0; col < n; ++col)
            for (int row = 0; row < m; ++row)
              sum[row + col * (size_t)m] =
                  widen(c[row + col * (long long)ldc], isBF16);
        cblas_sgemm(CblasColMajor, blasTranspose(transa), blasTranspose(transb),
                    m, n, k, alphaF, a.data(), lda, b.data(), ldb, betaF,
                    sum.data(), m);
        for (int col = 0; col < n; ++col)
          for (int row = 0; row < m; ++row)
            c[row + col * (long long)ldc] =
                narrow(sum[row + col * (size_t)m], isBF16);
      } else if (isDouble)
        cblas_dgemm(CblasColMajor, blasTranspose(transa), blasTranspose(transb),
                    m, n, k, alphaD,
                    static_cast<const double *>(A) + i * strideA, lda,
                    static_cast<const double *>(B) + i * strideB, ldb, betaD,
                    static_cast<double *>(C) + i * strideC, ldc);
      else
        cblas_sgemm(CblasColMajor, blasTranspose(transa), blasTranspose(transb),
                    m, n, k, alphaF,
                    static_cast<const float *>(A) + i * strideA, lda,
                    static_cast<const float *>(B) + i * strideB, ldb, betaF,
                    static_cast<float *>(C) + i * strideC, ldc);
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"

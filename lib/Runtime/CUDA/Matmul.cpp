//===- Matmul.cpp - cuBLAS matrix products --------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. View each operand as [batch..., rows, cols] and broadcast the batches,
//    as host::matmul does.
// 2. A shared right operand and a plain left operand: fold the batch into M
//    and run one GEMM.
// 3. Otherwise list each batch's operand offsets; when both are affine in
//    the batch index (stride 0 for a broadcast operand) run one strided
//    batched GEMM, else one GEMM per batch.
// Row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so B
// is passed first and nothing is transposed in memory.
// 4. A product of 16-bit buffers (matmulOf16BitBuffers) takes the same
//    steps with 16-bit inputs and an f32 or 16-bit output: offsets are in
//    elements, so they hold for any storage. A low-precision product of
//    widened values (matmulLowPrecision, f32 runs) first packs both
//    operands whole into the 16-bit scratch, then is one such product.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Matmul.h"
#include "loom/Runtime/CUDA/Check.h"
#include "loom/Runtime/Support/MatmulRows.h"

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <type_traits>
#include <vector>

namespace loom::runtime::cuda {

namespace {

struct MatrixView {
  Shape batch;
  int64_t rows, cols;
};

MatrixView viewOf(const Shape &shape) {
  return {Shape(shape.begin(), shape.end() - 2), shape[shape.size() - 2],
          shape.back()};
}

/// How a product's operands are stored and summed: the inputs and the
/// output each T or 16-bit values (`inputBytes`, `outputBytes` each); alpha
/// and beta are doubles for CUBLAS_COMPUTE_64F, floats otherwise.
struct GemmTypes {
  cudaDataType_t input, output;
  cublasComputeType_t compute;
  int64_t inputBytes, outputBytes;
};

template <typename T> GemmTypes plainTypes() {
  constexpr bool isDouble = std::is_same_v<T, double>;
  cudaDataType_t type = isDouble ? CUDA_R_64F : CUDA_R_32F;
  return {type, type, isDouble ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
          static_cast<int64_t>(sizeof(T)), static_cast<int64_t>(sizeof(T))};
}

/// bf16 or f16 inputs, f32 accumulation, an f32 or (`roundedOutput`) a
/// result of the inputs' type.
GemmTypes sixteenBitTypes(CastTarget inputs, bool roundedOutput) {
  cudaDataType_t input = inputs == CastTarget::F16 ? CUDA_R_16F : CUDA_R_16BF;
  return {input, roundedOutput ? input : CUDA_R_32F, CUBLAS_COMPUTE_32F, 2,
          roundedOutput ? 2 : 4};
}

/// An operand at an element offset.
const void *at(const void *base, int64_t elements, const GemmTypes &types) {
  return static_cast<const char *>(base) + elements * types.inputBytes;
}

/// One (strided batched) row-major GEMM: C[b] = op(A[b]) op(B[b]), C [m, n].
void gemm(cublasHandle_t handle, const GemmTypes &types, bool transA,
          bool transB, int64_t m, int64_t n, int64_t k, const void *a,
          int64_t lda, int64_t strideA, const void *b, int64_t ldb,
          int64_t strideB, void *c, int64_t strideC, int64_t batches) {
  double alphaDouble = 1, betaDouble = 0;
  float alphaFloat = 1, betaFloat = 0;
  bool doubleScalars = types.compute == CUBLAS_COMPUTE_64F;
  const void *alpha =
      doubleScalars ? static_cast<const void *>(&alphaDouble) : &alphaFloat;
  const void *beta =
      doubleScalars ? static_cast<const void *>(&betaDouble) : &betaFloat;
  LOOM_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
      transA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
      static_cast<int>(m), static_cast<int>(k), alpha, b, types.input,
      static_cast<int>(ldb), strideB, a, types.input, static_cast<int>(lda),
      strideA, beta, c, types.output, static_cast<int>(n), strideC,
      static_cast<int>(batches), types.compute, CUBLAS_GEMM_DEFAULT));
}

/// Whether offsets[i] = offsets[0] + i * stride for one stride.
bool affine(const std::vector<int64_t> &offsets, int64_t &stride) {
  stride = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] - offsets[i - 1] != stride)
      return false;
  return true;
}

/// matmul() over operands and a result stored as `types` says.
void product(cublasHandle_t handle, const GemmTypes &types, const void *lhs,
             const Shape &lhsShape, const void *rhs, const Shape &rhsShape,
             bool transposeLhs, bool transposeRhs, void *out) {
  // Batch dims the right operand is shared along fold into M (one taller
  // product per remaining batch instead of one per batch).
  Shape lhsRows = lhsShape, rhsRows = rhsShape;
  if (foldSharedBatchDimsIntoRows(lhsRows, rhsRows, transposeLhs))
    return product(handle, types, lhs, lhsRows, rhs, rhsRows, transposeLhs,
                   transposeRhs, out);
  MatrixView l = viewOf(lhsShape), r = viewOf(rhsShape);
  int64_t m = transposeLhs ? l.cols : l.rows;
  int64_t k = transposeLhs ? l.rows : l.cols;
  int64_t n = transposeRhs ? r.rows : r.cols;
  Shape batch = *broadcastShapes(l.batch, r.batch);
  int64_t numBatches = numElements(batch);
  if (m == 0 || n == 0 || numBatches == 0)
    return;
  if (k == 0) {
    cudaStream_t stream = nullptr;
    LOOM_CUBLAS_CHECK(cublasGetStream(handle, &stream));
    LOOM_CUDA_CHECK(cudaMemsetAsync(
        out, 0, numBatches * m * n * types.outputBytes, stream));
    return;
  }
  if (numElements(r.batch) == 1 && !transposeLhs && l.batch == batch) {
    gemm(handle, types, false, transposeRhs, numBatches * m, n, k, lhs, l.cols,
         0, rhs, r.cols, 0, out, 0, 1);
    return;
  }

  std::vector<int64_t> lhsStrides = broadcastStrides(batch, l.batch);
  std::vector<int64_t> rhsStrides = broadcastStrides(batch, r.batch);
  std::vector<int64_t> lhsOffsets, rhsOffsets, index(batch.size(), 0);
  int64_t lhsMatrix = l.rows * l.cols, rhsMatrix = r.rows * r.cols;
  for (int64_t b = 0; b < numBatches; ++b) {
    int64_t lo = 0, ro = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      lo += index[d] * lhsStrides[d];
      ro += index[d] * rhsStrides[d];
    }
    lhsOffsets.push_back(lo * lhsMatrix);
    rhsOffsets.push_back(ro * rhsMatrix);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++index[d] < batch[d])
        break;
      index[d] = 0;
    }
  }
  int64_t lhsStride, rhsStride;
  if (affine(lhsOffsets, lhsStride) && affine(rhsOffsets, rhsStride)) {
    gemm(handle, types, transposeLhs, transposeRhs, m, n, k,
         at(lhs, lhsOffsets[0], types), l.cols, lhsStride,
         at(rhs, rhsOffsets[0], types), r.cols, rhsStride, out, m * n,
         numBatches);
    return;
  }
  for (int64_t b = 0; b < numBatches; ++b)
    gemm(handle, types, transposeLhs, transposeRhs, m, n, k,
         at(lhs, lhsOffsets[b], types), l.cols, 0,
         at(rhs, rhsOffsets[b], types), r.cols, 0,
         static_cast<char *>(out) + b * m * n * types.outputBytes, 0, 1);
}

} // namespace

template <typename T>
void matmul(cublasHandle_t handle, const T *lhs, const Shape &lhsShape,
            const T *rhs, const Shape &rhsShape, bool transposeLhs,
            bool transposeRhs, T *out) {
  product(handle, plainTypes<T>(), lhs, lhsShape, rhs, rhsShape, transposeLhs,
          transposeRhs, out);
}

void *GemmScratch::reserve(cudaStream_t stream, int64_t bytes) {
  if (bytes <= capacity)
    return data;
  // The GEMMs enqueued before this call still read the old block: free it
  // in stream order, after them.
  if (data)
    LOOM_CUDA_CHECK(cudaFreeAsync(data, stream));
  data = nullptr;
  LOOM_CUDA_CHECK(cudaMallocAsync(&data, static_cast<size_t>(bytes), stream));
  capacity = bytes;
  return data;
}

namespace {

/// product() with 16-bit inputs in cuBLAS's default math mode for the call.
void tensorCoreProduct(cublasHandle_t handle, const GemmTypes &types,
                       const uint16_t *lhs, const Shape &lhsShape,
                       const uint16_t *rhs, const Shape &rhsShape,
                       bool transposeLhs, bool transposeRhs, void *out) {
  // The session's handle is in pedantic mode (no TF32 for the f32 GEMMs),
  // which may keep 16-bit products off the tensor cores; the default mode
  // runs them there and still reduces in f32 (CUBLAS_COMPUTE_32F).
  cublasMath_t mode;
  LOOM_CUBLAS_CHECK(cublasGetMathMode(handle, &mode));
  LOOM_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  product(handle, types, lhs, lhsShape, rhs, rhsShape, transposeLhs,
          transposeRhs, out);
  LOOM_CUBLAS_CHECK(cublasSetMathMode(handle, mode));
}

} // namespace

void matmulOf16BitBuffers(cublasHandle_t handle, CastTarget inputs,
                          const uint16_t *lhs, const Shape &lhsShape,
                          const uint16_t *rhs, const Shape &rhsShape,
                          bool transposeLhs, bool transposeRhs, float *out) {
  tensorCoreProduct(handle, sixteenBitTypes(inputs, /*roundedOutput=*/false),
                    lhs, lhsShape, rhs, rhsShape, transposeLhs, transposeRhs,
                    out);
}

void matmulOf16BitBuffers(cublasHandle_t handle, CastTarget inputs,
                          const uint16_t *lhs, const Shape &lhsShape,
                          const uint16_t *rhs, const Shape &rhsShape,
                          bool transposeLhs, bool transposeRhs, uint16_t *out) {
  tensorCoreProduct(handle, sixteenBitTypes(inputs, /*roundedOutput=*/true),
                    lhs, lhsShape, rhs, rhsShape, transposeLhs, transposeRhs,
                    out);
}

template <typename T>
void matmulLowPrecision(cublasHandle_t handle, GemmScratch &scratch,
                        CastTarget inputs, const T *lhs, const Shape &lhsShape,
                        const T *rhs, const Shape &rhsShape, bool transposeLhs,
                        bool transposeRhs, T *out) {
  if constexpr (std::is_same_v<T, double>) {
    matmul(handle, lhs, lhsShape, rhs, rhsShape, transposeLhs, transposeRhs,
           out);
  } else {
    int64_t lhsCount = numElements(lhsShape), rhsCount = numElements(rhsShape);
    cudaStream_t stream = nullptr;
    LOOM_CUBLAS_CHECK(cublasGetStream(handle, &stream));
    // Both operands in one block, the right one at a 256-byte boundary
    // (cuBLAS's tensor-core kernels want aligned operands).
    int64_t rhsOffset = (lhsCount * 2 + 255) / 256 * 256;
    auto *packed = static_cast<uint16_t *>(
        scratch.reserve(stream, rhsOffset + rhsCount * 2));
    uint16_t *packedRhs = packed + rhsOffset / 2;
    packLowPrecision(stream, lhs, lhsCount, inputs, packed);
    packLowPrecision(stream, rhs, rhsCount, inputs, packedRhs);
    matmulOf16BitBuffers(handle, inputs, packed, lhsShape, packedRhs, rhsShape,
                         transposeLhs, transposeRhs, out);
  }
}

template void matmul<float>(cublasHandle_t, const float *, const Shape &,
                            const float *, const Shape &, bool, bool, float *);
template void matmul<double>(cublasHandle_t, const double *, const Shape &,
                             const double *, const Shape &, bool, bool,
                             double *);
template void matmulLowPrecision<float>(cublasHandle_t, GemmScratch &,
                                        CastTarget, const float *,
                                        const Shape &, const float *,
                                        const Shape &, bool, bool, float *);
template void matmulLowPrecision<double>(cublasHandle_t, GemmScratch &,
                                         CastTarget, const double *,
                                         const Shape &, const double *,
                                         const Shape &, bool, bool, double *);

} // namespace loom::runtime::cuda

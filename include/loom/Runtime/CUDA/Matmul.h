//===- Matmul.h - cuBLAS matrix products ------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterpart of loom/Runtime/Host/Matmul.h. Row-major products are
// computed as the column-major product of the transposes (C^T = B^T A^T), so
// no operand is copied. The batch folds into M when the right operand is
// shared, as on the host; otherwise batches whose operand offsets are evenly
// strided (the usual attention-style [b, h] batches, broadcasting included,
// with stride 0) are one cublasGemmStridedBatchedEx, and irregular
// broadcasts one call per batch. f32 uses CUBLAS_COMPUTE_32F (no TF32: the
// host and the interpreter compute in full f32), f64 CUBLAS_COMPUTE_64F.
// The handle carries the stream.
//
// Mixed precision (docs/MixedPrecision.md). In a bf16-mixed or fp16-mixed
// program a matmul whose operands both hold bf16 (or f16) values runs on
// the tensor cores: matmulLowPrecision packs each operand into 16-bit
// storage (exact: the values already are bf16/f16 ones) and multiplies with
// bf16/f16 inputs, f32 accumulation and an f32 result (CUDA_R_16BF or
// CUDA_R_16F, CUBLAS_COMPUTE_32F), as torch.autocast's GEMMs do. Every
// product of two bf16 (f16) values is exact in f32, so the result differs
// from the f32 GEMM of the same operands only by the order in which cuBLAS
// sums the products (the CUDA emulator's GEMM sums in OpenBLAS's order, so
// there it equals the host kernel bit for bit).
//
// matmulOf16BitBuffers is the same product over operands already held in
// 16-bit buffers (bf16 or f16 bit patterns), with nothing packed: its f32
// result, or its result rounded once to the inputs' type (cuBLAS computes
// the whole update in f32 and rounds on store, to nearest, ties to even:
// the host's rule for bf16/f16 results, so on the emulator it equals the
// host kernel's rounded product bit for bit). It is what a program that
// stores bf16/f16 values in 16-bit buffers calls; the emitted programs
// still hold them widened (docs/MixedPrecision.md, "Not built yet").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_MATMUL_H
#define LOOM_RUNTIME_CUDA_MATMUL_H

#include "loom/Runtime/CUDA/Elementwise.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace loom::runtime::cuda {

template <typename T>
void matmul(cublasHandle_t handle, const T *lhs, const Shape &lhsShape,
            const T *rhs, const Shape &rhsShape, bool transposeLhs,
            bool transposeRhs, T *out);

/// Device memory the low-precision GEMMs pack their operands into: one
/// block, grown (in stream order) to the largest pair of operands and
/// reused by every GEMM on the stream, which orders each reuse after the
/// GEMM that read the previous contents. Held by the process's
/// cuda::Session; never shrinks.
class GemmScratch {
public:
  /// At least `bytes` bytes, valid for work enqueued on `stream` after
  /// this call and before the next one.
  void *reserve(cudaStream_t stream, int64_t bytes);

private:
  void *data = nullptr;
  int64_t capacity = 0;
};

/// matmul() of `inputs` (CastTarget::BF16 or F16) bit patterns, on the
/// tensor cores with f32 accumulation: `out` gets the f32 result...
void matmulOf16BitBuffers(cublasHandle_t handle, CastTarget inputs,
                          const uint16_t *lhs, const Shape &lhsShape,
                          const uint16_t *rhs, const Shape &rhsShape,
                          bool transposeLhs, bool transposeRhs, float *out);
/// ... or each result element rounded once to the inputs' type.
void matmulOf16BitBuffers(cublasHandle_t handle, CastTarget inputs,
                          const uint16_t *lhs, const Shape &lhsShape,
                          const uint16_t *rhs, const Shape &rhsShape,
                          bool transposeLhs, bool transposeRhs, uint16_t *out);

/// matmul() of operands that hold `inputs` (CastTarget::BF16 or F16) values
/// widened in T. For T = float the product runs on the tensor cores with
/// 16-bit inputs packed into `scratch` and f32 accumulation (see above);
/// for T = double it is matmul<double> (an f64 run computes as the
/// interpreter's f64 run does).
template <typename T>
void matmulLowPrecision(cublasHandle_t handle, GemmScratch &scratch,
                        CastTarget inputs, const T *lhs, const Shape &lhsShape,
                        const T *rhs, const Shape &rhsShape, bool transposeLhs,
                        bool transposeRhs, T *out);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_MATMUL_H

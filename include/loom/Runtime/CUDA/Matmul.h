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
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_MATMUL_H
#define LOOM_RUNTIME_CUDA_MATMUL_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cublas_v2.h>

namespace loom::runtime::cuda {

template <typename T>
void matmul(cublasHandle_t handle, const T *lhs, const Shape &lhsShape,
            const T *rhs, const Shape &rhsShape, bool transposeLhs,
            bool transposeRhs, T *out);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_MATMUL_H

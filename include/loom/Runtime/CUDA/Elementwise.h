//===- Elementwise.h - CUDA kernels for elementwise loom ops ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Host-side launchers for the elementwise kernels of the CUDA runtime. Shapes
// are global shapes of the local tensors a rank holds; operands broadcast
// numpy-style to the output, as loom.add specifies.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_ELEMENTWISE_H
#define LOOM_RUNTIME_CUDA_ELEMENTWISE_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

namespace loom::runtime::cuda {

/// The most dims a broadcasting kernel handles; Transformer tensors have at
/// most 5 ([batch, heads, seq, seq] plus one).
inline constexpr int kMaxBroadcastRank = 8;

/// out = lhs + rhs with numpy broadcasting, on device buffers in row-major
/// order, enqueued on `stream`. `outShape` must be broadcastShapes(lhsShape,
/// rhsShape) and have rank <= kMaxBroadcastRank.
void launchAdd(const float *lhs, const Shape &lhsShape, const float *rhs,
               const Shape &rhsShape, float *out, const Shape &outShape,
               cudaStream_t stream);
void launchAdd(const double *lhs, const Shape &lhsShape, const double *rhs,
               const Shape &rhsShape, double *out, const Shape &outShape,
               cudaStream_t stream);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_ELEMENTWISE_H

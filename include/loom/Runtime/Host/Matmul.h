//===- Matmul.h - Batched matrix product on the host ------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The host kernel of `loom.matmul`: a batched matrix product whose leading
// (batch) dims broadcast numpy-style, with transpose flags on both operands.
// Each batch entry is one OpenBLAS GEMM call; transposes become CBLAS flags,
// so no operand is copied.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_MATMUL_H
#define LOOM_RUNTIME_HOST_MATMUL_H

#include "loom/Runtime/Support/Broadcast.h"

#include <optional>

namespace loom::runtime::host {

/// Returns the shape of `matmul(lhs, rhs)` (`[broadcast(batch)..., M, N]`),
/// or nullopt when an operand has rank < 2, the contracted sizes differ or
/// the batch dims conflict.
std::optional<Shape> matmulResultShape(const Shape &lhsShape,
                                       const Shape &rhsShape, bool transposeLhs,
                                       bool transposeRhs);

/// Computes `out = op(lhs) x op(rhs)` where `op` swaps the last two dims when
/// its flag is set. `out` is preallocated with matmulResultShape's shape.
template <typename T>
void matmul(const T *lhs, const Shape &lhsShape, const T *rhs,
            const Shape &rhsShape, bool transposeLhs, bool transposeRhs,
            T *out);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_MATMUL_H

//===- MatmulRows.h - Batch dims of a matmul that fold into M ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A batched product whose right operand is shared along its trailing batch
// dims (broadcast: size 1 or absent) while the left operand has them in full
// and untransposed is, along those dims, one taller product: the left
// operand's rows for every index of those dims lie one after the other in
// memory, as do the result's. GPT-2's fused q/k/v projection is the case that
// needs it: [B, S, H] x [3, 1, H, H]^T -> [3, B, S, H] is three GEMMs of
// B*S rows, not 3*B GEMMs of S rows. The host and CUDA matmuls share this
// rewrite of the shapes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SUPPORT_MATMULROWS_H
#define LOOM_RUNTIME_SUPPORT_MATMULROWS_H

#include "loom/Runtime/Support/Broadcast.h"

namespace loom::runtime {

/// If some trailing batch dims of `lhsShape` x `rhsShape` fold into M (see
/// the file comment), rewrites both shapes so that they have: the left
/// operand's rows absorb those dims and the right operand loses them. The
/// result's shape is the same row-major tensor either way. Returns whether
/// it rewrote anything. Requires broadcast-compatible batch dims.
inline bool foldSharedBatchDimsIntoRows(Shape &lhsShape, Shape &rhsShape,
                                        bool transposeLhs) {
  if (transposeLhs || lhsShape.size() < 3)
    return false;
  size_t lhsBatch = lhsShape.size() - 2, rhsBatch = rhsShape.size() - 2;
  // Trailing batch dims: the right operand's is 1 or absent, the left's
  // present (any size; a size-1 dim folds trivially).
  size_t fold = 0;
  while (fold < lhsBatch &&
         (fold >= rhsBatch || rhsShape[rhsBatch - 1 - fold] == 1))
    ++fold;
  if (fold == 0)
    return false;
  int64_t rows = lhsShape[lhsBatch];
  for (size_t i = 0; i < fold; ++i)
    rows *= lhsShape[lhsBatch - 1 - i];
  Shape lhs(lhsShape.begin(), lhsShape.begin() + (lhsBatch - fold));
  lhs.push_back(rows);
  lhs.push_back(lhsShape.back());
  size_t rhsKept = fold >= rhsBatch ? 0 : rhsBatch - fold;
  Shape rhs(rhsShape.begin(), rhsShape.begin() + rhsKept);
  rhs.push_back(rhsShape[rhsBatch]);
  rhs.push_back(rhsShape[rhsBatch + 1]);
  lhsShape = std::move(lhs);
  rhsShape = std::move(rhs);
  return true;
}

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SUPPORT_MATMULROWS_H

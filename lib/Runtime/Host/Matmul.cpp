//===- Matmul.cpp - Batched matrix product on the host --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Matmul.h"
#include "loom/Runtime/Support/MatmulRows.h"

#include <cblas.h>

#include <algorithm>

namespace loom::runtime::host {

namespace {
/// The shape of one operand split into batch dims and its stored matrix.
struct MatrixView {
  Shape batch;
  int64_t rows, cols;
};

MatrixView viewOf(const Shape &shape) {
  return {Shape(shape.begin(), shape.end() - 2), shape[shape.size() - 2],
          shape.back()};
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, int64_t lda, const float *b, int64_t ldb, float *c) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
              0.0f, c, n);
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const double *a, int64_t lda, const double *b, int64_t ldb,
          double *c) {
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb,
              0.0, c, n);
}
} // namespace

std::optional<Shape> matmulResultShape(const Shape &lhsShape,
                                       const Shape &rhsShape, bool transposeLhs,
                                       bool transposeRhs) {
  if (lhsShape.size() < 2 || rhsShape.size() < 2)
    return std::nullopt;
  MatrixView lhs = viewOf(lhsShape), rhs = viewOf(rhsShape);
  int64_t m = transposeLhs ? lhs.cols : lhs.rows;
  int64_t kl = transposeLhs ? lhs.rows : lhs.cols;
  int64_t kr = transposeRhs ? rhs.cols : rhs.rows;
  int64_t n = transposeRhs ? rhs.rows : rhs.cols;
  if (kl != kr)
    return std::nullopt;
  std::optional<Shape> batch = broadcastShapes(lhs.batch, rhs.batch);
  if (!batch)
    return std::nullopt;
  batch->push_back(m);
  batch->push_back(n);
  return batch;
}

template <typename T>
void matmul(const T *lhs, const Shape &lhsShape, const T *rhs,
            const Shape &rhsShape, bool transposeLhs, bool transposeRhs,
            T *out) {
  // Batch dims the right operand is shared along fold into M (one taller
  // product per remaining batch instead of one per batch).
  Shape lhsRows = lhsShape, rhsRows = rhsShape;
  if (foldSharedBatchDimsIntoRows(lhsRows, rhsRows, transposeLhs))
    return matmul(lhs, lhsRows, rhs, rhsRows, transposeLhs, transposeRhs, out);
  MatrixView l = viewOf(lhsShape), r = viewOf(rhsShape);
  int64_t m = transposeLhs ? l.cols : l.rows;
  int64_t k = transposeLhs ? l.rows : l.cols;
  int64_t n = transposeRhs ? r.rows : r.cols;
  Shape batch = *broadcastShapes(l.batch, r.batch);
  int64_t numBatches = numElements(batch);
  // BLAS rejects zero leading dimensions; an empty product is all zeros.
  if (m == 0 || n == 0 || numBatches == 0)
    return;
  if (k == 0) {
    std::fill(out, out + numBatches * m * n, T(0));
    return;
  }

  // A shared right operand and an untransposed, unbroadcast left operand:
  // the batch folds into M and one large GEMM does all the work (the common
  // case of a linear layer on [batch, seq, hidden] activations).
  if (numElements(r.batch) == 1 && !transposeLhs && l.batch == batch) {
    gemm(false, transposeRhs, numBatches * m, n, k, lhs, l.cols, rhs, r.cols,
         out);
    return;
  }

  std::vector<int64_t> lhsStrides = broadcastStrides(batch, l.batch);
  std::vector<int64_t> rhsStrides = broadcastStrides(batch, r.batch);
  std::vector<int64_t> index(batch.size(), 0);
  int64_t lhsMatrix = l.rows * l.cols, rhsMatrix = r.rows * r.cols;
  for (int64_t b = 0; b < numBatches; ++b) {
    int64_t lhsOffset = 0, rhsOffset = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      lhsOffset += index[d] * lhsStrides[d];
      rhsOffset += index[d] * rhsStrides[d];
    }
    gemm(transposeLhs, transposeRhs, m, n, k, lhs + lhsOffset * lhsMatrix,
         l.cols, rhs + rhsOffset * rhsMatrix, r.cols, out + b * m * n);
    // Advance the row-major batch index, last dim fastest.
    for (size_t d = batch.size(); d-- > 0;) {
      if (++index[d] < batch[d])
        break;
      index[d] = 0;
    }
  }
}

template void matmul<float>(const float *, const Shape &, const float *,
                            const Shape &, bool, bool, float *);
template void matmul<double>(const double *, const Shape &, const double *,
                             const Shape &, bool, bool, double *);

} // namespace loom::runtime::host

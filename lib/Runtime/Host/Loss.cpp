//===- Loss.cpp - Host cross-entropy kernels ------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each row's log-sum-exp subtracts the row max first, so large logits do not
// overflow. The labels are validated (and the non-ignored ones counted) in a
// first pass, so a bad label leaves the outputs untouched.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace loom::runtime::host {

namespace {

/// Checks the labels of `rows` rows against [0, vocab) and counts the ones
/// that are not ignored into `count`.
Status checkLabels(const int64_t *labels, int64_t rows, int64_t vocab,
                   int64_t ignoreIndex, int64_t &count) {
  count = 0;
  for (int64_t n = 0; n < rows; ++n) {
    if (labels[n] == ignoreIndex)
      continue;
    if (labels[n] < 0 || labels[n] >= vocab)
      return Status::failure(
          "label " + std::to_string(labels[n]) + " at index " +
          std::to_string(n) + " is outside [0, " + std::to_string(vocab) +
          ") and is not the ignore index " + std::to_string(ignoreIndex));
    ++count;
  }
  return Status::success();
}

/// Max and `log(sum(exp(x - max)))` of one row.
template <typename T>
void rowLogSumExp(const T *x, int64_t vocab, double &maxValue, double &logSum) {
  maxValue = -std::numeric_limits<double>::infinity();
  for (int64_t v = 0; v < vocab; ++v)
    maxValue = std::max<double>(maxValue, x[v]);
  double sum = 0;
  for (int64_t v = 0; v < vocab; ++v)
    sum += std::exp(x[v] - maxValue);
  logSum = std::log(sum);
}

/// Counts the non-ignored labels of `rows` rows, without range checks (the
/// local form with an offset sees only a block of the classes).
int64_t countLabels(const int64_t *labels, int64_t rows, int64_t ignoreIndex) {
  int64_t count = 0;
  for (int64_t n = 0; n < rows; ++n)
    count += labels[n] != ignoreIndex;
  return count;
}

} // namespace

template <typename T>
Status crossEntropyLocal(const T *logits, const Shape &logitsShape,
                         const int64_t *labels, int64_t ignoreIndex,
                         const int64_t *offset, bool sum, T *result) {
  int64_t vocab = logitsShape.back();
  int64_t rows = vocab == 0 ? 0 : numElements(logitsShape) / vocab;
  int64_t count;
  if (offset) {
    count = countLabels(labels, rows, ignoreIndex);
  } else if (Status status =
                 checkLabels(labels, rows, vocab, ignoreIndex, count);
             !status) {
    return status;
  }
  double total = 0;
  for (int64_t n = 0; n < rows; ++n) {
    if (labels[n] == ignoreIndex)
      continue;
    const T *x = logits + n * vocab;
    if (offset) {
      // Log-probabilities: the row's loss is minus the label's, added by
      // the device whose block holds the label.
      int64_t column = labels[n] - *offset;
      if (column >= 0 && column < vocab)
        total -= x[column];
      continue;
    }
    double maxValue, logSum;
    rowLogSumExp(x, vocab, maxValue, logSum);
    total += maxValue + logSum - x[labels[n]];
  }
  // 0 / 0 is NaN when every label is ignored, as PyTorch returns.
  result[0] =
      static_cast<T>(sum ? total : total / static_cast<double>(count));
  return Status::success();
}

template <typename T>
Status crossEntropy(const T *logits, const Shape &logitsShape,
                    const int64_t *labels, int64_t ignoreIndex, T *result) {
  return crossEntropyLocal(logits, logitsShape, labels, ignoreIndex,
                           /*offset=*/nullptr, /*sum=*/false, result);
}

template <typename T>
Status crossEntropyGradLocal(const T *logits, const Shape &logitsShape,
                             const int64_t *labels, T dloss,
                             int64_t ignoreIndex, const int64_t *offset,
                             bool sum, T *result) {
  int64_t vocab = logitsShape.back();
  int64_t rows = vocab == 0 ? 0 : numElements(logitsShape) / vocab;
  int64_t count;
  if (offset) {
    count = countLabels(labels, rows, ignoreIndex);
  } else if (Status status =
                 checkLabels(labels, rows, vocab, ignoreIndex, count);
             !status) {
    return status;
  }
  double factor = sum ? static_cast<double>(dloss)
                      : static_cast<double>(dloss) / static_cast<double>(count);
  for (int64_t n = 0; n < rows; ++n) {
    T *dx = result + n * vocab;
    if (labels[n] == ignoreIndex) {
      std::fill(dx, dx + vocab, T(0));
      continue;
    }
    const T *x = logits + n * vocab;
    // Given log-probabilities (offset), the row is normalized already.
    double maxValue = 0, logSum = 0;
    if (!offset)
      rowLogSumExp(x, vocab, maxValue, logSum);
    int64_t label = labels[n] - (offset ? *offset : 0);
    for (int64_t v = 0; v < vocab; ++v) {
      double p = std::exp(x[v] - maxValue - logSum);
      dx[v] = static_cast<T>((p - (v == label ? 1.0 : 0.0)) * factor);
    }
  }
  return Status::success();
}

template <typename T>
Status crossEntropyGrad(const T *logits, const Shape &logitsShape,
                        const int64_t *labels, T dloss, int64_t ignoreIndex,
                        T *result) {
  return crossEntropyGradLocal(logits, logitsShape, labels, dloss, ignoreIndex,
                               /*offset=*/nullptr, /*sum=*/false, result);
}

template <typename T>
void labelCount(const int64_t *labels, int64_t count, int64_t ignoreIndex,
                T *result) {
  result[0] = static_cast<T>(countLabels(labels, count, ignoreIndex));
}

#define LOOM_INSTANTIATE(T)                                                    \
  template Status crossEntropy<T>(const T *, const Shape &, const int64_t *,   \
                                  int64_t, T *);                               \
  template Status crossEntropyGrad<T>(const T *, const Shape &,                \
                                      const int64_t *, T, int64_t, T *);       \
  template Status crossEntropyLocal<T>(const T *, const Shape &,               \
                                       const int64_t *, int64_t,               \
                                       const int64_t *, bool, T *);            \
  template Status crossEntropyGradLocal<T>(const T *, const Shape &,           \
                                           const int64_t *, T, int64_t,        \
                                           const int64_t *, bool, T *);        \
  template void labelCount<T>(const int64_t *, int64_t, int64_t, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

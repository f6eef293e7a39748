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

} // namespace

template <typename T>
Status crossEntropy(const T *logits, const Shape &logitsShape,
                    const int64_t *labels, int64_t ignoreIndex, T *result) {
  int64_t vocab = logitsShape.back();
  int64_t rows = vocab == 0 ? 0 : numElements(logitsShape) / vocab;
  int64_t count;
  if (Status status = checkLabels(labels, rows, vocab, ignoreIndex, count);
      !status)
    return status;
  double total = 0;
  for (int64_t n = 0; n < rows; ++n) {
    if (labels[n] == ignoreIndex)
      continue;
    const T *x = logits + n * vocab;
    double maxValue, logSum;
    rowLogSumExp(x, vocab, maxValue, logSum);
    total += maxValue + logSum - x[labels[n]];
  }
  // 0 / 0 is NaN when every label is ignored, as PyTorch returns.
  result[0] = static_cast<T>(total / static_cast<double>(count));
  return Status::success();
}

template <typename T>
Status crossEntropyGrad(const T *logits, const Shape &logitsShape,
                        const int64_t *labels, T dloss, int64_t ignoreIndex,
                        T *result) {
  int64_t vocab = logitsShape.back();
  int64_t rows = vocab == 0 ? 0 : numElements(logitsShape) / vocab;
  int64_t count;
  if (Status status = checkLabels(labels, rows, vocab, ignoreIndex, count);
      !status)
    return status;
  double factor = static_cast<double>(dloss) / static_cast<double>(count);
  for (int64_t n = 0; n < rows; ++n) {
    T *dx = result + n * vocab;
    if (labels[n] == ignoreIndex) {
      std::fill(dx, dx + vocab, T(0));
      continue;
    }
    const T *x = logits + n * vocab;
    double maxValue, logSum;
    rowLogSumExp(x, vocab, maxValue, logSum);
    for (int64_t v = 0; v < vocab; ++v) {
      double p = std::exp(x[v] - maxValue - logSum);
      dx[v] = static_cast<T>((p - (v == labels[n] ? 1.0 : 0.0)) * factor);
    }
  }
  return Status::success();
}

#define LOOM_INSTANTIATE(T)                                                    \
  template Status crossEntropy<T>(const T *, const Shape &, const int64_t *,   \
                                  int64_t, T *);                               \
  template Status crossEntropyGrad<T>(const T *, const Shape &,                \
                                      const int64_t *, T, int64_t, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

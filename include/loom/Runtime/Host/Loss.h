//===- Loss.h - Host cross-entropy kernels ----------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernels of loom.cross_entropy and loom.cross_entropy_grad: `logits` is
// [N..., V] (classes in the last dim), `labels` [N...]. Labels equal to
// `ignoreIndex` are skipped; any other label outside [0, V) is an error in
// the data and comes back as a Status, before anything is written. Row
// log-sum-exps and the loss sum accumulate in double. Calling convention:
// README.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_LOSS_H
#define LOOM_RUNTIME_HOST_LOSS_H

#include "loom/Runtime/Host/Status.h"
#include "loom/Runtime/Support/Broadcast.h"

namespace loom::runtime::host {

/// loom.cross_entropy: writes to `result[0]` the mean over non-ignored
/// positions of `logsumexp(logits[n, :]) - logits[n, labels[n]]`; NaN (0 / 0)
/// when every label is ignored, as in PyTorch.
template <typename T>
Status crossEntropy(const T *logits, const Shape &logitsShape,
                    const int64_t *labels, int64_t ignoreIndex, T *result);

/// loom.cross_entropy_grad: `result[n, :] = (softmax(logits[n, :]) -
/// onehot(labels[n])) * dloss / count`, zero rows for ignored labels, with
/// `count` the number of non-ignored labels and `dloss` the value of the
/// rank-0 loss gradient.
template <typename T>
Status crossEntropyGrad(const T *logits, const Shape &logitsShape,
                        const int64_t *labels, T dloss, int64_t ignoreIndex,
                        T *result);

/// The local forms of loom.cross_entropy. With `sum`, writes the sum over
/// non-ignored positions instead of the mean (0 when every label is
/// ignored). With an `offset` (non-null), `logits` [N..., V] is the block of
/// columns [*offset, *offset + V) of the global log-probabilities: a
/// position adds `-logits[n, labels[n] - *offset]` when its label lies in
/// the block and nothing otherwise; labels outside the block are not
/// checked, and the mean divides by the count of every non-ignored label.
template <typename T>
Status crossEntropyLocal(const T *logits, const Shape &logitsShape,
                         const int64_t *labels, int64_t ignoreIndex,
                         const int64_t *offset, bool sum, T *result);

/// The local forms of loom.cross_entropy_grad. With `sum`, the factor is
/// `dloss` instead of `dloss / count`. With an `offset`, `logits` is a block
/// of columns of the global log-probabilities: `softmax = exp(logits)`, and
/// the one-hot is subtracted only in the label's column when it lies in
/// the block.
template <typename T>
Status crossEntropyGradLocal(const T *logits, const Shape &logitsShape,
                             const int64_t *labels, T dloss,
                             int64_t ignoreIndex, const int64_t *offset,
                             bool sum, T *result);

/// loom.label_count: writes to `result[0]` the number of the `count` labels
/// that differ from `ignoreIndex`.
template <typename T>
void labelCount(const int64_t *labels, int64_t count, int64_t ignoreIndex,
                T *result);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_LOSS_H

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

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_LOSS_H

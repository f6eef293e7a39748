//===- Optimizer.h - Host optimizer-update kernels --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernels of loom.sgd_update and loom.adamw_update: one PyTorch optimizer
// step for one parameter (or any shard of it: the updates are pointwise).
// Every operand and result has `shape`. Each element's update is evaluated in
// double from the stored inputs and each result rounded once; hyperparameters
// are the ODS attributes. Outputs may alias their own inputs (`newParam` ==
// `param`, ...) for an in-place update. Calling convention: README.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_OPTIMIZER_H
#define LOOM_RUNTIME_HOST_OPTIMIZER_H

#include "loom/Runtime/Support/Broadcast.h"

namespace loom::runtime::host {

/// loom.sgd_update (torch.optim.SGD, the momentum buffer starting at zero):
///   g' = g + wd * p;  b' = mu * b + (1 - dampening) * g';
///   g' = nesterov ? g' + mu * b' : b';  p' = p - lr * g'.
/// `momentumBuf` and `newMomentumBuf` are given exactly when
/// `momentum != 0`; without them the step is `p' = p - lr * g'`.
template <typename T>
void sgdUpdate(const T *param, const T *grad, const T *momentumBuf,
               const Shape &shape, double lr, double momentum,
               double weightDecay, double dampening, bool nesterov, T *newParam,
               T *newMomentumBuf);

/// loom.adamw_update (torch.optim.AdamW without amsgrad): `step` is the
/// value of the rank-0 step operand, the number of steps already taken, so
/// the bias corrections use t = step + 1.
template <typename T>
void adamwUpdate(const T *param, const T *grad, const T *expAvg,
                 const T *expAvgSq, const Shape &shape, int64_t step, double lr,
                 double beta1, double beta2, double eps, double weightDecay,
                 T *newParam, T *newExpAvg, T *newExpAvgSq);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_OPTIMIZER_H

//===- Softmax.h - Host softmax and log_softmax kernels ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernels of loom.softmax, loom.log_softmax and their gradients along any
// dim `axis` in [0, rank) of `shape`. The forwards subtract the row max
// before `exp` (numerically stable); row sums accumulate in double. All
// operands and the result share `shape`. Calling convention: README.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_SOFTMAX_H
#define LOOM_RUNTIME_HOST_SOFTMAX_H

#include "loom/Runtime/Support/Broadcast.h"

namespace loom::runtime::host {

/// loom.softmax: `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis`.
template <typename T>
void softmax(const T *input, const Shape &shape, int64_t axis, T *result);

/// loom.log_softmax: `x - max(x) - log(sum(exp(x - max(x))))` along `axis`.
template <typename T>
void logSoftmax(const T *input, const Shape &shape, int64_t axis, T *result);

/// loom.softmax_grad: `dx = output * (grad - sum(grad * output))`.
template <typename T>
void softmaxGrad(const T *output, const T *grad, const Shape &shape,
                 int64_t axis, T *result);

/// loom.log_softmax_grad: `dx = grad - exp(output) * sum(grad)`.
template <typename T>
void logSoftmaxGrad(const T *output, const T *grad, const Shape &shape,
                    int64_t axis, T *result);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_SOFTMAX_H

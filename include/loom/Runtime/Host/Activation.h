//===- Activation.h - Host activation kernels and gradients -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernels of loom.gelu, loom.silu, loom.relu and their gradient ops. All are
// pointwise over `shape`, shared by every operand and the result; the math
// (erf, tanh, exp) is evaluated in double and rounded once. Calling
// convention: README.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_ACTIVATION_H
#define LOOM_RUNTIME_HOST_ACTIVATION_H

#include "loom/Runtime/Support/Broadcast.h"

namespace loom::runtime::host {

/// The `approximate` attribute of loom.gelu and loom.gelu_grad.
enum class GeluApproximation { None, Tanh };

/// loom.gelu: `0.5 * x * (1 + erf(x / sqrt(2)))`, or with `Tanh`
/// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
template <typename T>
void gelu(const T *input, const Shape &shape, GeluApproximation approximate,
          T *result);

/// loom.silu: `x * sigmoid(x)`.
template <typename T> void silu(const T *input, const Shape &shape, T *result);

/// loom.relu: `max(x, 0)`, NaN staying NaN.
template <typename T> void relu(const T *input, const Shape &shape, T *result);

/// loom.gelu_grad: `dx = dy * gelu'(x)` for the given form.
template <typename T>
void geluGrad(const T *dy, const T *x, const Shape &shape,
              GeluApproximation approximate, T *dx);

/// loom.silu_grad: `dx = dy * s * (1 + x * (1 - s))`, `s = sigmoid(x)`.
template <typename T>
void siluGrad(const T *dy, const T *x, const Shape &shape, T *dx);

/// loom.relu_grad: `dx = x > 0 ? dy : 0`.
template <typename T>
void reluGrad(const T *dy, const T *x, const Shape &shape, T *dx);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_ACTIVATION_H

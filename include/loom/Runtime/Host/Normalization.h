//===- Normalization.h - Host layer_norm and rms_norm kernels ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernels of loom.layer_norm, loom.rms_norm and their gradients. All of them
// normalize over the last dim (size D) of `input`, whose shape `shape` has
// rank >= 1; the leading dims are flattened into rows. Row statistics and the
// parameter-gradient sums accumulate in double. The calling convention is in
// README.md next to this header.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_NORMALIZATION_H
#define LOOM_RUNTIME_HOST_NORMALIZATION_H

#include "loom/Runtime/Support/Broadcast.h"

namespace loom::runtime::host {

/// loom.layer_norm: `result = (x - mean) * rsqrt(var + eps) * gamma + beta`
/// with the biased variance. `gamma` and `beta` ([D]) are both given or both
/// null.
template <typename T>
void layerNorm(const T *input, const Shape &shape, const T *gamma,
               const T *beta, double eps, T *result);

/// loom.rms_norm: `result = x * rsqrt(mean(x^2) + eps) * gamma`; `gamma`
/// ([D]) may be null.
template <typename T>
void rmsNorm(const T *input, const Shape &shape, const T *gamma, double eps,
             T *result);

/// loom.layer_norm_grad: `dx` (of `shape`) from the output gradient `grad`
/// (of `shape`), recomputing the statistics from `input`. With `gamma`,
/// `dgamma` and `dbeta` ([D]) must be given and receive the parameter
/// gradients; without it they must be null.
template <typename T>
void layerNormGrad(const T *grad, const T *input, const Shape &shape,
                   const T *gamma, double eps, T *dx, T *dgamma, T *dbeta);

/// loom.rms_norm_grad: `dx` and, exactly when `gamma` is given, `dgamma`.
template <typename T>
void rmsNormGrad(const T *grad, const T *input, const Shape &shape,
                 const T *gamma, double eps, T *dx, T *dgamma);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_NORMALIZATION_H

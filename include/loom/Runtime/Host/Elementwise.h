//===- Elementwise.h - Elementwise host kernels -----------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Host kernels of the arithmetic elementwise ops: the broadcasting binary
// ops (`loom.add sub mul div`), the unary float functions (`neg exp log sqrt
// rsqrt tanh sigmoid`), `loom.scale`, and element conversions for
// `loom.cast`. Activations (relu, gelu, silu) live with their gradients in
// the activation kernels.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_ELEMENTWISE_H
#define LOOM_RUNTIME_HOST_ELEMENTWISE_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cstdint>
#include <optional>
#include <string>

namespace loom::runtime::host {

enum class BinaryKind { Add, Sub, Mul, Div };

/// Computes `out = lhs <kind> rhs` with numpy broadcasting; `out` has the
/// broadcast shape `outShape`. Instantiated for float, double and int64_t;
/// integer division truncates toward zero. Returns an error message on a
/// data error (an integer division by zero), nullopt on success.
template <typename T>
std::optional<std::string>
binary(BinaryKind kind, const T *lhs, const Shape &lhsShape, const T *rhs,
       const Shape &rhsShape, T *out, const Shape &outShape);

enum class UnaryKind { Neg, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid };

/// Computes `out[i] = f(in[i])` for the `count` elements of `in`.
template <typename T>
void unary(UnaryKind kind, const T *in, int64_t count, T *out);

/// Computes `out[i] = in[i] * factor`, with `factor` first rounded to `T`
/// (as `loom.scale` specifies).
template <typename T>
void scale(const T *in, int64_t count, double factor, T *out);

/// Rounds `value` to the nearest bfloat16 (ties to even) and widens it back.
float roundToBF16(float value);

/// Rounds `value` to the nearest IEEE half (ties to even) and widens it back;
/// values beyond the half range become infinities.
float roundToF16(float value);

/// What an element is converted to by `loom.cast`.
enum class CastTarget { F64, F32, BF16, F16, I64, I32, I1 };

/// Converts `count` elements as `loom.cast` specifies (floats to integers
/// truncate, integers to i32 wrap, anything to i1 is `!= 0`). Float targets
/// narrower than `To` are rounded to their precision and stored widened in
/// `To` (a bf16 result computed in an f32 run is an f32 holding a bf16
/// value); integer targets are stored as int64_t, i1 as uint8_t 0/1.
/// Instantiated for From, To in {float, double, int64_t, uint8_t}.
template <typename From, typename To>
void cast(const From *in, int64_t count, CastTarget target, To *out);

/// Rounds `count` elements in place to the precision of `target` when it is
/// bf16 or f16 (to nearest, ties to even, as `loom.cast`); other targets
/// leave them unchanged. This is the low-precision result rule: an op whose
/// result element type is bf16 or f16 computes as its f32 form does (the
/// kernel above, accumulating in double and storing `T`), then its result
/// elements go through this once (docs/MixedPrecision.md). The interpreter
/// and emitted host programs both call it, so they agree bit for bit.
/// Instantiated for float and double.
template <typename T>
void roundToPrecision(T *data, int64_t count, CastTarget target);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_ELEMENTWISE_H

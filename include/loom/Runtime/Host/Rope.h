//===- Rope.h - Host rotary position embedding kernel -----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernel of loom.rope in Hugging Face's rotate_half form: element i of the
// head dim pairs with element i + D/2 and both rotate by the angle
// p * theta^(-2i / D) of row position p. Angles, cos and sin are evaluated in
// double. Calling convention: README.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_ROPE_H
#define LOOM_RUNTIME_HOST_ROPE_H

#include "loom/Runtime/Support/Broadcast.h"

namespace loom::runtime::host {

/// loom.rope over `input` [B, H, S, D] (D even) into `result` (same shape).
/// `positions` is null (row s has position s), or [B, S] or [S] as
/// `positionsShape` says. `inverse` negates every angle, which makes the
/// kernel the VJP of the forward rotation.
template <typename T>
void rope(const T *input, const Shape &shape, const int64_t *positions,
          const Shape &positionsShape, double theta, bool inverse, T *result);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_ROPE_H

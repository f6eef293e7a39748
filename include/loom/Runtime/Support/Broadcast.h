//===- Broadcast.h - Numpy broadcasting for runtime kernels -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Kernels for broadcasting ops (loom.add and friends) walk the output in
// row-major order and read each operand through strides in which a broadcast
// dim has stride 0. These helpers compute those strides; the host kernels,
// the interpreter and the CUDA launchers share them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SUPPORT_BROADCAST_H
#define LOOM_RUNTIME_SUPPORT_BROADCAST_H

#include <cstdint>
#include <optional>
#include <vector>

namespace loom::runtime {

using Shape = std::vector<int64_t>;

/// Returns the numpy broadcast of `a` and `b` (aligned at the last dim; a
/// missing dim or a dim of size 1 stretches), or nullopt if they conflict.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);

/// Returns, for each dim of `outShape`, the element stride with which to read
/// a row-major operand of shape `inShape` that broadcasts to `outShape`: 0 on
/// dims the operand lacks or has as size 1 (against a larger output dim).
/// Requires that `inShape` broadcasts to `outShape`.
std::vector<int64_t> broadcastStrides(const Shape &outShape,
                                      const Shape &inShape);

/// Returns the number of elements of `shape` (1 for a rank-0 shape).
int64_t numElements(const Shape &shape);

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SUPPORT_BROADCAST_H

//===- Shape.h - Data movement kernels on the host --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Host kernels of the ops that move elements without computing on them:
// `loom.transpose`, `slice`, `pad`, `concat` and `split` (a reshape keeps
// the row-major order, so it is a plain copy). The interpreter also builds
// the collectives out of them: an all_gather is a concat, an all_slice a
// slice. `accumulateBlock` places a rank's block of a result into the global
// tensor. Instantiated for float, double, int64_t and uint8_t (i1).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_SHAPE_H
#define LOOM_RUNTIME_HOST_SHAPE_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cstdint>
#include <vector>

namespace loom::runtime::host {

/// Result dim `i` is input dim `permutation[i]`.
template <typename T>
void transpose(const T *in, const Shape &shape,
               const std::vector<int64_t> &permutation, T *out);

/// Takes, in each dim `d`, indices `starts[d], starts[d] + strides[d], ...`
/// below `limits[d]`.
template <typename T>
void slice(const T *in, const Shape &shape, const std::vector<int64_t> &starts,
           const std::vector<int64_t> &limits,
           const std::vector<int64_t> &strides, T *out);

/// Places `in` in a zero tensor with `low`/`high` zeros at the edges and
/// `interior` zeros between neighbours of each dim.
template <typename T>
void pad(const T *in, const Shape &shape, const std::vector<int64_t> &low,
         const std::vector<int64_t> &high, const std::vector<int64_t> &interior,
         T *out);

/// Concatenates `inputs` (of shapes `shapes`, equal but for `axis`) along
/// `axis`.
template <typename T>
void concat(const std::vector<const T *> &inputs,
            const std::vector<Shape> &shapes, int64_t axis, T *out);

/// Cuts `in` along `axis` into consecutive pieces of `sizes[i]` indices,
/// written to `outputs[i]`.
template <typename T>
void split(const T *in, const Shape &shape, int64_t axis,
           const std::vector<int64_t> &sizes, const std::vector<T *> &outputs);

/// Adds `block` (of shape `blockShape`) into the block of `global` (of shape
/// `globalShape`) that starts at `offset`, element by element in row-major
/// order (`or` for uint8_t, i1). This is how the ranks' blocks of a result
/// become the global tensor: the interpreter and the harness of emitted
/// programs assemble results with it, so both add partial sums alike.
template <typename T>
void accumulateBlock(const T *block, const Shape &blockShape,
                     const Shape &offset, T *global, const Shape &globalShape);

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_SHAPE_H

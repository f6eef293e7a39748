//===- Shape.cpp - Data movement kernels on the host ----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Shape.h"

#include <algorithm>
#include <type_traits>

namespace loom::runtime::host {

namespace {
/// Row-major element strides of `shape`.
std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// Copies the [outer, inner] blocks of a dim-`axis` cut: `outer` is the
/// product of the dims before `axis`, `inner` of those after.
void outerInner(const Shape &shape, int64_t axis, int64_t &outer,
                int64_t &inner) {
  outer = 1;
  inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
}
} // namespace

template <typename T>
void transpose(const T *in, const Shape &shape,
               const std::vector<int64_t> &permutation, T *out) {
  size_t rank = shape.size();
  std::vector<int64_t> inStrides = stridesOf(shape);
  Shape outShape(rank);
  std::vector<int64_t> strides(rank);
  for (size_t d = 0; d < rank; ++d) {
    outShape[d] = shape[permutation[d]];
    strides[d] = inStrides[permutation[d]];
  }
  int64_t count = numElements(shape);
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    out[i] = in[offset];
    for (size_t d = rank; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < outShape[d])
        break;
      offset -= strides[d] * outShape[d];
      index[d] = 0;
    }
  }
}

template <typename T>
void slice(const T *in, const Shape &shape, const std::vector<int64_t> &starts,
           const std::vector<int64_t> &limits,
           const std::vector<int64_t> &strides, T *out) {
  size_t rank = shape.size();
  std::vector<int64_t> inStrides = stridesOf(shape);
  Shape outShape(rank);
  std::vector<int64_t> step(rank);
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d) {
    outShape[d] = (limits[d] - starts[d] + strides[d] - 1) / strides[d];
    step[d] = inStrides[d] * strides[d];
    offset += starts[d] * inStrides[d];
  }
  int64_t count = numElements(outShape);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    out[i] = in[offset];
    for (size_t d = rank; d-- > 0;) {
      offset += step[d];
      if (++index[d] < outShape[d])
        break;
      offset -= step[d] * outShape[d];
      index[d] = 0;
    }
  }
}

template <typename T>
void pad(const T *in, const Shape &shape, const std::vector<int64_t> &low,
         const std::vector<int64_t> &high, const std::vector<int64_t> &interior,
         T *out) {
  size_t rank = shape.size();
  Shape outShape(rank);
  for (size_t d = 0; d < rank; ++d)
    outShape[d] = low[d] + shape[d] +
                  std::max<int64_t>(shape[d] - 1, 0) * interior[d] + high[d];
  std::fill(out, out + numElements(outShape), T(0));
  // Input element `index` lands at low + index * (interior + 1) per dim.
  std::vector<int64_t> outStrides = stridesOf(outShape);
  std::vector<int64_t> step(rank);
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d) {
    step[d] = outStrides[d] * (interior[d] + 1);
    offset += low[d] * outStrides[d];
  }
  int64_t count = numElements(shape);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    out[offset] = in[i];
    for (size_t d = rank; d-- > 0;) {
      offset += step[d];
      if (++index[d] < shape[d])
        break;
      offset -= step[d] * shape[d];
      index[d] = 0;
    }
  }
}

template <typename T>
void concat(const std::vector<const T *> &inputs,
            const std::vector<Shape> &shapes, int64_t axis, T *out) {
  int64_t outer, inner;
  outerInner(shapes.front(), axis, outer, inner);
  int64_t outRow = 0;
  for (const Shape &s : shapes)
    outRow += s[axis] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    T *dst = out + o * outRow;
    for (size_t i = 0; i < inputs.size(); ++i) {
      int64_t row = shapes[i][axis] * inner;
      std::copy(inputs[i] + o * row, inputs[i] + (o + 1) * row, dst);
      dst += row;
    }
  }
}

template <typename T>
void split(const T *in, const Shape &shape, int64_t axis,
           const std::vector<int64_t> &sizes, const std::vector<T *> &outputs) {
  int64_t outer, inner;
  outerInner(shape, axis, outer, inner);
  int64_t inRow = shape[axis] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    const T *src = in + o * inRow;
    for (size_t i = 0; i < outputs.size(); ++i) {
      int64_t row = sizes[i] * inner;
      std::copy(src, src + row, outputs[i] + o * row);
      src += row;
    }
  }
}

template <typename T>
void accumulateBlock(const T *block, const Shape &blockShape,
                     const Shape &offset, T *global, const Shape &globalShape) {
  size_t rank = blockShape.size();
  std::vector<int64_t> strides = stridesOf(globalShape);
  int64_t at = 0;
  for (size_t d = 0; d < rank; ++d)
    at += offset[d] * strides[d];
  int64_t count = numElements(blockShape);
  // Walk the block in row-major order, moving `at` through the global
  // tensor like an odometer.
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    if constexpr (std::is_same_v<T, uint8_t>)
      global[at] = global[at] | block[i];
    else
      global[at] += block[i];
    for (size_t d = rank; d-- > 0;) {
      at += strides[d];
      if (++index[d] < blockShape[d])
        break;
      at -= strides[d] * blockShape[d];
      index[d] = 0;
    }
  }
}

#define LOOM_INSTANTIATE_SHAPE(T)                                              \
  template void transpose<T>(const T *, const Shape &,                         \
                             const std::vector<int64_t> &, T *);               \
  template void slice<T>(                                                      \
      const T *, const Shape &, const std::vector<int64_t> &,                  \
      const std::vector<int64_t> &, const std::vector<int64_t> &, T *);        \
  template void pad<T>(const T *, const Shape &, const std::vector<int64_t> &, \
                       const std::vector<int64_t> &,                           \
                       const std::vector<int64_t> &, T *);                     \
  template void concat<T>(const std::vector<const T *> &,                      \
                          const std::vector<Shape> &, int64_t, T *);           \
  template void split<T>(const T *, const Shape &, int64_t,                    \
                         const std::vector<int64_t> &,                         \
                         const std::vector<T *> &);                            \
  template void accumulateBlock<T>(const T *, const Shape &, const Shape &,    \
                                   T *, const Shape &);
LOOM_INSTANTIATE_SHAPE(float)
LOOM_INSTANTIATE_SHAPE(double)
LOOM_INSTANTIATE_SHAPE(int64_t)
LOOM_INSTANTIATE_SHAPE(uint8_t)
#undef LOOM_INSTANTIATE_SHAPE

} // namespace loom::runtime::host

//===- Shape.cu - CUDA kernels for shape ops ------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Transpose and slice map each output index to an input offset; pad zeroes
// the output and scatters the input. Concat and split move whole rows (the
// elements after the axis are contiguous), so they are strided copies with
// cudaMemcpy2DAsync rather than kernels.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "loom/Runtime/CUDA/Shape.h"

namespace loom::runtime::cuda {

using namespace detail;

namespace {

/// out[i] = in[offset + sum_d coord_d(i) * in.stride[d]], where coord_d
/// decodes the output index over `in.size` (the output's shape).
template <typename T>
__global__ void gatherKernel(const T *in, Dims dims, int64_t offset,
                             int64_t count, T *out) {
  LOOM_GRID_LOOP(i, count) {
    int64_t rest = i, at = offset;
    for (int d = dims.rank - 1; d >= 0; --d) {
      at += (rest % dims.size[d]) * dims.stride[d];
      rest /= dims.size[d];
    }
    out[i] = in[at];
  }
}

/// out[offset + sum_d coord_d(i) * out.stride[d]] = in[i].
template <typename T>
__global__ void scatterKernel(const T *in, Dims dims, int64_t offset,
                              int64_t count, T *out) {
  LOOM_GRID_LOOP(i, count) {
    int64_t rest = i, at = offset;
    for (int d = dims.rank - 1; d >= 0; --d) {
      at += (rest % dims.size[d]) * dims.stride[d];
      rest /= dims.size[d];
    }
    out[at] = in[i];
  }
}

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

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

void copyRows(cudaStream_t stream, void *dst, int64_t dstPitch, const void *src,
              int64_t srcPitch, int64_t rowBytes, int64_t rows) {
  if (rows == 0 || rowBytes == 0)
    return;
  LOOM_CUDA_CHECK(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, rowBytes,
                                    rows, cudaMemcpyDeviceToDevice, stream));
}

template <typename T>
void transpose(cudaStream_t stream, const T *in, const Shape &shape,
               const std::vector<int64_t> &permutation, T *out) {
  std::vector<int64_t> inStrides = stridesOf(shape);
  Shape outShape(shape.size());
  std::vector<int64_t> strides(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    outShape[d] = shape[permutation[d]];
    strides[d] = inStrides[permutation[d]];
  }
  Dims dims = makeDims(outShape, strides, "transpose");
  int64_t count = numElements(shape);
  LOOM_LAUNCH(gatherKernel<T>, count ? blocksFor(count) : 0, kThreads, stream,
              in, dims, int64_t(0), count, out);
}

template <typename T>
void slice(cudaStream_t stream, const T *in, const Shape &shape,
           const std::vector<int64_t> &starts,
           const std::vector<int64_t> &limits,
           const std::vector<int64_t> &strides, T *out) {
  std::vector<int64_t> inStrides = stridesOf(shape);
  Shape outShape(shape.size());
  std::vector<int64_t> step(shape.size());
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    outShape[d] = (limits[d] - starts[d] + strides[d] - 1) / strides[d];
    step[d] = inStrides[d] * strides[d];
    offset += starts[d] * inStrides[d];
  }
  Dims dims = makeDims(outShape, step, "slice");
  int64_t count = numElements(outShape);
  LOOM_LAUNCH(gatherKernel<T>, count ? blocksFor(count) : 0, kThreads, stream,
              in, dims, offset, count, out);
}

template <typename T>
void pad(cudaStream_t stream, const T *in, const Shape &shape,
         const std::vector<int64_t> &low, const std::vector<int64_t> &high,
         const std::vector<int64_t> &interior, T *out) {
  Shape outShape(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    outShape[d] = low[d] + shape[d] +
                  std::max<int64_t>(shape[d] - 1, 0) * interior[d] + high[d];
  LOOM_CUDA_CHECK(
      cudaMemsetAsync(out, 0, numElements(outShape) * sizeof(T), stream));
  // Input element `index` lands at low + index * (interior + 1) per dim.
  std::vector<int64_t> outStrides = stridesOf(outShape);
  std::vector<int64_t> step(shape.size());
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    step[d] = outStrides[d] * (interior[d] + 1);
    offset += low[d] * outStrides[d];
  }
  Dims dims = makeDims(shape, step, "pad");
  int64_t count = numElements(shape);
  LOOM_LAUNCH(scatterKernel<T>, count ? blocksFor(count) : 0, kThreads, stream,
              in, dims, offset, count, out);
}

template <typename T>
void concat(cudaStream_t stream, const std::vector<const T *> &inputs,
            const std::vector<Shape> &shapes, int64_t axis, T *out) {
  int64_t outer, inner;
  outerInner(shapes.front(), axis, outer, inner);
  int64_t outRow = 0;
  for (const Shape &s : shapes)
    outRow += s[axis] * inner;
  int64_t column = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    int64_t row = shapes[i][axis] * inner;
    copyRows(stream, out + column, outRow * sizeof(T), inputs[i],
             row * sizeof(T), row * sizeof(T), outer);
    column += row;
  }
}

template <typename T>
void split(cudaStream_t stream, const T *in, const Shape &shape, int64_t axis,
           const std::vector<int64_t> &sizes, const std::vector<T *> &outputs) {
  int64_t outer, inner;
  outerInner(shape, axis, outer, inner);
  int64_t inRow = shape[axis] * inner;
  int64_t column = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    int64_t row = sizes[i] * inner;
    copyRows(stream, outputs[i], row * sizeof(T), in + column,
             inRow * sizeof(T), row * sizeof(T), outer);
    column += row;
  }
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void transpose<T>(cudaStream_t, const T *, const Shape &,           \
                             const std::vector<int64_t> &, T *);               \
  template void slice<T>(                                                      \
      cudaStream_t, const T *, const Shape &, const std::vector<int64_t> &,    \
      const std::vector<int64_t> &, const std::vector<int64_t> &, T *);        \
  template void pad<T>(                                                        \
      cudaStream_t, const T *, const Shape &, const std::vector<int64_t> &,    \
      const std::vector<int64_t> &, const std::vector<int64_t> &, T *);        \
  template void concat<T>(cudaStream_t, const std::vector<const T *> &,        \
                          const std::vector<Shape> &, int64_t, T *);           \
  template void split<T>(cudaStream_t, const T *, const Shape &, int64_t,      \
                         const std::vector<int64_t> &,                         \
                         const std::vector<T *> &);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
LOOM_INSTANTIATE(int64_t)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::cuda

//===- Shape.h - CUDA kernels for shape ops ---------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Shape.h (calling convention:
// CUDA/Elementwise.h). Transpose, slice and pad are index-mapping kernels;
// concat and split are strided copies (cudaMemcpy2DAsync), which are also
// what the NCCL communicator packs and unpacks blocks with. T: float,
// double, int64_t.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_SHAPE_H
#define LOOM_RUNTIME_CUDA_SHAPE_H

#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace loom::runtime::cuda {

template <typename T>
void transpose(cudaStream_t stream, const T *in, const Shape &shape,
               const std::vector<int64_t> &permutation, T *out);

template <typename T>
void slice(cudaStream_t stream, const T *in, const Shape &shape,
           const std::vector<int64_t> &starts,
           const std::vector<int64_t> &limits,
           const std::vector<int64_t> &strides, T *out);

template <typename T>
void pad(cudaStream_t stream, const T *in, const Shape &shape,
         const std::vector<int64_t> &low, const std::vector<int64_t> &high,
         const std::vector<int64_t> &interior, T *out);

template <typename T>
void concat(cudaStream_t stream, const std::vector<const T *> &inputs,
            const std::vector<Shape> &shapes, int64_t axis, T *out);

template <typename T>
void split(cudaStream_t stream, const T *in, const Shape &shape, int64_t axis,
           const std::vector<int64_t> &sizes, const std::vector<T *> &outputs);

/// Copies `rows` rows of `rowBytes` bytes between strided device buffers:
/// row r goes from `src + r * srcPitch` to `dst + r * dstPitch` (bytes).
/// The building block of concat, split and the communicator's packing.
void copyRows(cudaStream_t stream, void *dst, int64_t dstPitch, const void *src,
              int64_t srcPitch, int64_t rowBytes, int64_t rows);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_SHAPE_H

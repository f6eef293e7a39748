//===- Elementwise.h - CUDA kernels for elementwise loom ops ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device counterparts of loom/Runtime/Host/Elementwise.h: the same kinds,
// parameters and results, on device buffers, enqueued on `stream`. Calling
// convention of every CUDA kernel header (docs/Codegen.md, "CUDA"): the
// stream comes first, then the host kernel's parameters in the host order,
// with device pointers for buffers and host `Shape`s for shapes; nothing is
// synchronized. Broadcasting binaries read operands through strides that are
// 0 on broadcast dims; tensors have rank at most kMaxRank.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_ELEMENTWISE_H
#define LOOM_RUNTIME_CUDA_ELEMENTWISE_H

#include "loom/Runtime/CUDA/DeviceError.h"
#include "loom/Runtime/Host/Elementwise.h"
#include "loom/Runtime/Support/Broadcast.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace loom::runtime::cuda {

using host::BinaryKind;
using host::CastTarget;
using host::UnaryKind;

/// The most dims a CUDA kernel handles; Transformer tensors have at most 5.
inline constexpr int kMaxRank = 8;

/// `out = lhs <kind> rhs` with numpy broadcasting (T: float, double,
/// int64_t). An integer division by zero is recorded in `errors` (the host
/// kernel's "integer division by zero").
template <typename T>
void binary(cudaStream_t stream, BinaryKind kind, const T *lhs,
            const Shape &lhsShape, const T *rhs, const Shape &rhsShape, T *out,
            const Shape &outShape, ErrorSink errors = {});

/// `out = kind(in)` on `count` elements, computed in T as the host does.
template <typename T>
void unary(cudaStream_t stream, UnaryKind kind, const T *in, int64_t count,
           T *out);

/// `out = in * T(factor)`.
template <typename T>
void scale(cudaStream_t stream, const T *in, int64_t count, double factor,
           T *out);

/// loom.cast with the host's rounding (bf16 and f16 round to nearest even)
/// and its clamping of out-of-range floats to integers. From and To: float,
/// double, int64_t.
template <typename From, typename To>
void cast(cudaStream_t stream, const From *in, int64_t count, CastTarget target,
          To *out);

/// Packs `count` floats into 16-bit storage: the bf16 bit patterns when
/// `target` is BF16, IEEE binary16's when it is F16 (each rounded to nearest
/// even first, as cast() rounds; exact for elements that already are bf16
/// or f16 values, the operands of the low-precision GEMMs, Matmul.h).
void packLowPrecision(cudaStream_t stream, const float *in, int64_t count,
                      CastTarget target, uint16_t *out);

/// The inverse: widens `count` bf16 (`source` BF16) or binary16 (F16) bit
/// patterns to T (float or double), exactly. With packLowPrecision it is
/// loom.cast between a 16-bit buffer and a widened one.
template <typename T>
void widenLowPrecision(cudaStream_t stream, const uint16_t *in, int64_t count,
                       CastTarget source, T *out);

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_ELEMENTWISE_H

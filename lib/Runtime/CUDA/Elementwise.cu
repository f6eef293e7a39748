//===- Elementwise.cu - CUDA kernels for elementwise loom ops -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Broadcasting binary kernels. Each thread walks the output with a grid-stride
// loop, turns the flat output index into coordinates, and reads each operand
// through strides that are 0 on its broadcast dims (Support/Broadcast.h).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Check.h"
#include "loom/Runtime/CUDA/Elementwise.h"

#include <algorithm>
#include <cstdio>

namespace loom::runtime::cuda {
namespace {

/// Shapes and strides passed to a kernel by value (no device allocation).
struct BroadcastPlan {
  int rank;
  int64_t numel;
  int64_t outShape[kMaxBroadcastRank];
  int64_t lhsStrides[kMaxBroadcastRank];
  int64_t rhsStrides[kMaxBroadcastRank];
};

template <typename T>
__global__ void addKernel(const T *lhs, const T *rhs, T *out,
                          BroadcastPlan plan) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < plan.numel; i += step) {
    int64_t rest = i, lhsIndex = 0, rhsIndex = 0;
    for (int d = plan.rank - 1; d >= 0; --d) {
      int64_t coord = rest % plan.outShape[d];
      rest /= plan.outShape[d];
      lhsIndex += coord * plan.lhsStrides[d];
      rhsIndex += coord * plan.rhsStrides[d];
    }
    out[i] = lhs[lhsIndex] + rhs[rhsIndex];
  }
}

BroadcastPlan makePlan(const Shape &lhsShape, const Shape &rhsShape,
                       const Shape &outShape) {
  if (outShape.size() > static_cast<size_t>(kMaxBroadcastRank)) {
    // A compiler bug, not a user error: the emitter never produces this.
    std::fprintf(stderr, "loom: broadcast of rank %zu exceeds %d\n",
                 outShape.size(), kMaxBroadcastRank);
    std::abort();
  }
  BroadcastPlan plan{};
  plan.rank = static_cast<int>(outShape.size());
  plan.numel = numElements(outShape);
  std::vector<int64_t> lhsStrides = broadcastStrides(outShape, lhsShape);
  std::vector<int64_t> rhsStrides = broadcastStrides(outShape, rhsShape);
  std::copy(outShape.begin(), outShape.end(), plan.outShape);
  std::copy(lhsStrides.begin(), lhsStrides.end(), plan.lhsStrides);
  std::copy(rhsStrides.begin(), rhsStrides.end(), plan.rhsStrides);
  return plan;
}

template <typename T>
void launchAddImpl(const T *lhs, const Shape &lhsShape, const T *rhs,
                   const Shape &rhsShape, T *out, const Shape &outShape,
                   cudaStream_t stream) {
  BroadcastPlan plan = makePlan(lhsShape, rhsShape, outShape);
  if (plan.numel == 0)
    return;
  constexpr int kThreads = 256;
  // Enough blocks to fill the GPU several times over; the grid-stride loop
  // covers the rest.
  int64_t blocks =
      std::min<int64_t>((plan.numel + kThreads - 1) / kThreads, 65535);
  addKernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      lhs, rhs, out, plan);
  LOOM_CUDA_CHECK(cudaGetLastError());
}

} // namespace

void launchAdd(const float *lhs, const Shape &lhsShape, const float *rhs,
               const Shape &rhsShape, float *out, const Shape &outShape,
               cudaStream_t stream) {
  launchAddImpl(lhs, lhsShape, rhs, rhsShape, out, outShape, stream);
}

void launchAdd(const double *lhs, const Shape &lhsShape, const double *rhs,
               const Shape &rhsShape, double *out, const Shape &outShape,
               cudaStream_t stream) {
  launchAddImpl(lhs, lhsShape, rhs, rhsShape, out, outShape, stream);
}

} // namespace loom::runtime::cuda

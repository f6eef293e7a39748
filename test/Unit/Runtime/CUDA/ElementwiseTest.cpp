//===- ElementwiseTest.cpp - CUDA elementwise kernels vs. the host --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Runs the kernels on a GPU and compares with a plain host loop. Without a
// visible device the cases skip (and say so), so CI without a GPU stays green
// while a GPU machine runs them for real.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Elementwise.h"
#include "loom/Runtime/CUDA/Check.h"

#include "gtest/gtest.h"

#include <vector>

using namespace loom::runtime;

namespace {

bool haveDevice() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

/// Host reference: out = lhs + rhs with numpy broadcasting.
template <typename T>
std::vector<T> hostAdd(const std::vector<T> &lhs, const Shape &lhsShape,
                       const std::vector<T> &rhs, const Shape &rhsShape,
                       const Shape &outShape) {
  std::vector<int64_t> ls = broadcastStrides(outShape, lhsShape);
  std::vector<int64_t> rs = broadcastStrides(outShape, rhsShape);
  std::vector<T> out(numElements(outShape));
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    int64_t rest = i, li = 0, ri = 0;
    for (size_t d = outShape.size(); d-- > 0;) {
      int64_t coord = rest % outShape[d];
      rest /= outShape[d];
      li += coord * ls[d];
      ri += coord * rs[d];
    }
    out[i] = lhs[li] + rhs[ri];
  }
  return out;
}

template <typename T>
void checkAdd(const Shape &lhsShape, const Shape &rhsShape) {
  Shape outShape = *broadcastShapes(lhsShape, rhsShape);
  std::vector<T> lhs(numElements(lhsShape)), rhs(numElements(rhsShape));
  for (size_t i = 0; i < lhs.size(); ++i)
    lhs[i] = static_cast<T>(0.5 * i - 3);
  for (size_t i = 0; i < rhs.size(); ++i)
    rhs[i] = static_cast<T>(1000 + 2 * i);
  std::vector<T> expected = hostAdd(lhs, lhsShape, rhs, rhsShape, outShape);

  T *dLhs, *dRhs, *dOut;
  LOOM_CUDA_CHECK(
      cudaMalloc(reinterpret_cast<void **>(&dLhs), lhs.size() * sizeof(T)));
  LOOM_CUDA_CHECK(
      cudaMalloc(reinterpret_cast<void **>(&dRhs), rhs.size() * sizeof(T)));
  LOOM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&dOut),
                             expected.size() * sizeof(T)));
  LOOM_CUDA_CHECK(cudaMemcpy(dLhs, lhs.data(), lhs.size() * sizeof(T),
                             cudaMemcpyHostToDevice));
  LOOM_CUDA_CHECK(cudaMemcpy(dRhs, rhs.data(), rhs.size() * sizeof(T),
                             cudaMemcpyHostToDevice));
  cuda::launchAdd(dLhs, lhsShape, dRhs, rhsShape, dOut, outShape, nullptr);
  std::vector<T> actual(expected.size());
  LOOM_CUDA_CHECK(cudaMemcpy(actual.data(), dOut, actual.size() * sizeof(T),
                             cudaMemcpyDeviceToHost));
  LOOM_CUDA_CHECK(cudaFree(dLhs));
  LOOM_CUDA_CHECK(cudaFree(dRhs));
  LOOM_CUDA_CHECK(cudaFree(dOut));
  // Both sides add the same two numbers once: results are bit-identical.
  EXPECT_EQ(actual, expected);
}

TEST(CudaElementwiseTest, AddBroadcastsLikeTheHost) {
  if (!haveDevice())
    GTEST_SKIP() << "no CUDA device visible";
  checkAdd<float>({8, 1, 96}, {5, 1});
  checkAdd<float>({4, 33}, {33});
  checkAdd<double>({2, 3, 4, 5}, {2, 3, 4, 5});
  checkAdd<double>({}, {7});
}

} // namespace

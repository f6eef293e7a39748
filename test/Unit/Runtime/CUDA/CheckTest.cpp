//===- CheckTest.cpp - Checked CUDA calls ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Error descriptions come from the CUDA runtime library itself, so these run
// on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Check.h"

#include "gtest/gtest.h"

using namespace loom::runtime;

namespace {

TEST(CudaCheckTest, DescriptionHasNameAndText) {
  EXPECT_EQ(cuda::describeCudaError(cudaErrorMemoryAllocation),
            "cudaErrorMemoryAllocation: out of memory");
}

TEST(CudaCheckTest, FailedCallReportsAndExits) {
  setReportedRank(0);
  EXPECT_EXIT(LOOM_CUDA_CHECK(cudaErrorInvalidValue),
              ::testing::ExitedWithCode(1),
              "loom: rank 0: cudaErrorInvalidValue failed at CheckTest.cpp:"
              "[0-9]+: cudaErrorInvalidValue: invalid argument");
}

TEST(CudaCheckTest, SuccessDoesNothing) {
  LOOM_CUDA_CHECK(cudaSuccess);
  SUCCEED();
}

} // namespace

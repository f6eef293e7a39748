//===- CheckTest.cpp - Checked CUDA calls ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Error descriptions come from the CUDA runtime and cuBLAS libraries
// themselves, so these run on machines without a GPU.
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

TEST(CudaCheckTest, CublasDescriptionHasNameAndText) {
  std::string text = cuda::describeCublasStatus(CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(text.rfind("CUBLAS_STATUS_INVALID_VALUE: ", 0), 0u) << text;
}

TEST(CudaCheckTest, FailedCublasCallReportsTheCallAndRank) {
  setReportedRank(3);
  EXPECT_EXIT(LOOM_CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED),
              ::testing::ExitedWithCode(1),
              "loom: rank 3: CUBLAS_STATUS_NOT_INITIALIZED failed at "
              "CheckTest.cpp:[0-9]+: CUBLAS_STATUS_NOT_INITIALIZED: ");
}

TEST(CudaCheckTest, SuccessDoesNothing) {
  LOOM_CUDA_CHECK(cudaSuccess);
  SUCCEED();
}

} // namespace

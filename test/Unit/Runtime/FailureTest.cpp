//===- FailureTest.cpp - Failure reports of runtime calls -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/Failure.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace loom::runtime;

namespace {

TEST(FailureTest, ReportNamesCallFileLineAndDetail) {
  setReportedRank(3);
  CallSite site{"cudaMalloc(&ptr, bytes)", "/build/tree/lib/Runtime/Train.cu",
                42};
  EXPECT_EQ(formatCallFailure(site, "cudaErrorMemoryAllocation: out of memory"),
            "loom: rank 3: cudaMalloc(&ptr, bytes) failed at Train.cu:42: "
            "cudaErrorMemoryAllocation: out of memory");
}

TEST(FailureTest, RankComesFromTheLauncherUntilSet) {
  setReportedRank(-1);
  unsetenv("PMI_RANK");
  setenv("OMPI_COMM_WORLD_RANK", "5", /*overwrite=*/1);
  EXPECT_EQ(reportedRank(), 5);
  // Garbage in the environment is ignored, not trusted.
  setenv("OMPI_COMM_WORLD_RANK", "5x", 1);
  EXPECT_EQ(reportedRank(), -1);
  unsetenv("OMPI_COMM_WORLD_RANK");
  setenv("PMI_RANK", "7", 1);
  EXPECT_EQ(reportedRank(), 7);
  // An explicit rank wins over the environment.
  setReportedRank(2);
  EXPECT_EQ(reportedRank(), 2);
  unsetenv("PMI_RANK");
  setReportedRank(-1);
}

TEST(FailureTest, UnknownRankIsLeftOut) {
  setReportedRank(-1);
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("PMI_RANK");
  EXPECT_EQ(formatCallFailure({"MPI_Init(&argc, &argv)", "main.cpp", 7},
                              "MPI_ERR_OTHER"),
            "loom: MPI_Init(&argc, &argv) failed at main.cpp:7: MPI_ERR_OTHER");
}

TEST(FailureTest, ReportExitsWithStatusOne) {
  setReportedRank(1);
  EXPECT_EXIT(reportCallFailure({"ncclAllReduce(...)", "Comm.cpp", 9},
                                "unhandled cuda error"),
              ::testing::ExitedWithCode(1),
              "loom: rank 1: ncclAllReduce\\(...\\) failed at Comm.cpp:9: "
              "unhandled cuda error");
  setReportedRank(-1);
}

} // namespace

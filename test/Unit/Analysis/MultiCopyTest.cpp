//===- MultiCopyTest.cpp - What interleaved copies can hide ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/MultiCopy.h"

#include <gtest/gtest.h>

using mlir::loom::dist::getMultiCopyHiddenSeconds;

namespace {

// Two copies hide half of whichever is smaller: communication under a
// larger compute, or compute's worth of a larger communication.
TEST(MultiCopyTest, TwoCopiesHideHalfTheSmallerSide) {
  EXPECT_DOUBLE_EQ(getMultiCopyHiddenSeconds(10.0, 2.0, 2), 1.0);
  EXPECT_DOUBLE_EQ(getMultiCopyHiddenSeconds(2.0, 10.0, 2), 1.0);
}

// More copies leave less unhidden: (N - 1) / N of the smaller side.
TEST(MultiCopyTest, MoreCopiesHideMore) {
  EXPECT_DOUBLE_EQ(getMultiCopyHiddenSeconds(8.0, 4.0, 4), 3.0);
  EXPECT_LT(getMultiCopyHiddenSeconds(8.0, 4.0, 2),
            getMultiCopyHiddenSeconds(8.0, 4.0, 4));
}

// One copy hides nothing, and neither does a side that is zero.
TEST(MultiCopyTest, NothingToHide) {
  EXPECT_EQ(getMultiCopyHiddenSeconds(8.0, 4.0, 1), 0.0);
  EXPECT_EQ(getMultiCopyHiddenSeconds(0.0, 4.0, 2), 0.0);
  EXPECT_EQ(getMultiCopyHiddenSeconds(8.0, 0.0, 2), 0.0);
}

} // namespace

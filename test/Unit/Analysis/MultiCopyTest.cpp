//===- MultiCopyTest.cpp - What interleaved copies can hide ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/MultiCopy.h"

#include <gtest/gtest.h>

using mlir::loom::dist::chooseMultiCopies;
using mlir::loom::dist::getMultiCopyHiddenSeconds;
using mlir::loom::dist::MultiCopyPrice;
using mlir::loom::dist::priceMultiCopies;

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

// One copy exposes all of its communication; two expose what the other
// copy's compute cannot cover.
TEST(MultiCopyTest, PriceExposesWhatIsNotHidden) {
  MultiCopyPrice one = priceMultiCopies(4.0, 6.0, 1);
  EXPECT_DOUBLE_EQ(one.exposedCommSeconds, 6.0);
  EXPECT_DOUBLE_EQ(one.getLayerSeconds(), 10.0);
  MultiCopyPrice two = priceMultiCopies(4.4, 6.0, 2);
  EXPECT_DOUBLE_EQ(two.exposedCommSeconds, 6.0 - 2.2);
  EXPECT_DOUBLE_EQ(two.getLayerSeconds(), 4.4 + 3.8);
}

// Tensor-parallel collectives large against the compute: two copies win
// although their smaller GEMMs cost 10 % more compute.
TEST(MultiCopyTest, ChoosesCopiesWhenCommunicationDominates) {
  MultiCopyPrice prices[] = {priceMultiCopies(4.0, 6.0, 1),
                             priceMultiCopies(4.4, 6.0, 2)};
  EXPECT_EQ(chooseMultiCopies(prices).copies, 2);
}

// Little communication: what the copies hide does not pay for the
// efficiency the smaller GEMMs lose, so one copy stays.
TEST(MultiCopyTest, KeepsOneCopyWhenComputeDominates) {
  MultiCopyPrice prices[] = {priceMultiCopies(10.0, 0.5, 1),
                             priceMultiCopies(11.0, 0.5, 2),
                             priceMultiCopies(12.0, 0.5, 4)};
  EXPECT_EQ(chooseMultiCopies(prices).copies, 1);
}

// A tie keeps the fewer copies.
TEST(MultiCopyTest, TieKeepsFewerCopies) {
  MultiCopyPrice prices[] = {priceMultiCopies(2.0, 0.0, 1),
                             priceMultiCopies(2.0, 0.0, 2)};
  EXPECT_EQ(chooseMultiCopies(prices).copies, 1);
}

} // namespace

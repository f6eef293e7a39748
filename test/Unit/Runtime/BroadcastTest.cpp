//===- BroadcastTest.cpp - Numpy broadcasting helpers ---------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/Broadcast.h"

#include "gtest/gtest.h"

using namespace loom::runtime;

namespace {

TEST(BroadcastTest, ShapesAlignAtTheLastDim) {
  EXPECT_EQ(broadcastShapes({8, 1, 768}, {5, 1}), (Shape{8, 5, 768}));
  EXPECT_EQ(broadcastShapes({768}, {8, 128, 768}), (Shape{8, 128, 768}));
  EXPECT_EQ(broadcastShapes({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcastShapes({2, 0}, {1}), (Shape{2, 0}));
  EXPECT_EQ(broadcastShapes({2, 1, 3}, {4, 1, 5, 1}), (Shape{4, 2, 5, 3}));
}

TEST(BroadcastTest, ConflictingDimsDoNotBroadcast) {
  EXPECT_EQ(broadcastShapes({2, 3}, {4}), std::nullopt);
  EXPECT_EQ(broadcastShapes({3, 1}, {2, 1}), std::nullopt);
  EXPECT_EQ(broadcastShapes({2, 1, 3}, {2, 3, 1, 1}), std::nullopt);
}

TEST(BroadcastTest, StridesAreZeroOnBroadcastDims) {
  // [5, 1] read as [8, 5, 768]: dim 0 missing, dim 2 stretched.
  EXPECT_EQ(broadcastStrides({8, 5, 768}, {5, 1}),
            (std::vector<int64_t>{0, 1, 0}));
  // A full-shape operand keeps its row-major strides.
  EXPECT_EQ(broadcastStrides({2, 3, 4}, {2, 3, 4}),
            (std::vector<int64_t>{12, 4, 1}));
  // A bias vector.
  EXPECT_EQ(broadcastStrides({4, 6}, {6}), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(broadcastStrides({}, {}), (std::vector<int64_t>{}));
}

TEST(BroadcastTest, StridesIndexTheSameElementsAsNumpy) {
  // out[i][j] = in[i][0] for in of shape [3, 1]: reading through the strides
  // must visit in[0], in[0], in[1], in[1], in[2], in[2].
  Shape out{3, 2};
  std::vector<int64_t> strides = broadcastStrides(out, {3, 1});
  std::vector<int64_t> visited;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      visited.push_back(i * strides[0] + j * strides[1]);
  EXPECT_EQ(visited, (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
}

TEST(BroadcastTest, NumElements) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({8, 128, 768}), 8 * 128 * 768);
  EXPECT_EQ(numElements({4, 0}), 0);
}

} // namespace

//===- EmbeddingTest.cpp - Host embedding lookup kernels ------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Embedding.h"

#include "HostTestSupport.h"

#include <limits>

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

TEST(EmbeddingTest, LooksUpRows) {
  std::vector<double> table{0, 1, 10, 11, 20, 21}; // [3, 2]
  std::vector<int64_t> ids{2, 0, 2, 1};
  std::vector<double> out(8);
  ASSERT_TRUE(embedding(table.data(), {3, 2}, ids.data(), {2, 2}, out.data()));
  EXPECT_EQ(out, (std::vector<double>{20, 21, 0, 1, 20, 21, 10, 11}));
  // Rank-0 ids look up one row.
  std::vector<int64_t> one{1};
  std::vector<float> tablef{0, 1, 10, 11, 20, 21}, row(2);
  ASSERT_TRUE(embedding(tablef.data(), {3, 2}, one.data(), {}, row.data()));
  EXPECT_EQ(row, (std::vector<float>{10, 11}));
}

TEST(EmbeddingTest, OutOfRangeIdsAreErrors) {
  std::vector<double> table(6), out(4);
  std::vector<int64_t> ids{1, 3};
  Status status = embedding(table.data(), {3, 2}, ids.data(), {2}, out.data());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "id 3 at index 1 is outside [0, 3)");
  ids = {-1, 0};
  status = embedding(table.data(), {3, 2}, ids.data(), {2}, out.data());
  EXPECT_EQ(status.message(), "id -1 at index 0 is outside [0, 3)");
  std::vector<double> dtable(6);
  status = embeddingGrad(out.data(), {2, 2}, ids.data(), {2}, 3, dtable.data());
  EXPECT_EQ(status.message(), "id -1 at index 0 is outside [0, 3)");
}

TEST(EmbeddingTest, GradientScatterAddsRepeatedIds) {
  std::vector<double> dy{1, 2, 3, 4, 5, 6}; // [3, 2]
  std::vector<int64_t> ids{2, 0, 2};
  // NaN everywhere: rows no id touches must still be written (as zeros).
  std::vector<double> dtable(8, std::numeric_limits<double>::quiet_NaN());
  ASSERT_TRUE(
      embeddingGrad(dy.data(), {3, 2}, ids.data(), {3}, 4, dtable.data()));
  EXPECT_EQ(dtable, (std::vector<double>{3, 4, 0, 0, 6, 8, 0, 0}));
}

TEST(EmbeddingTest, GradientMatchesFiniteDifferences) {
  std::vector<int64_t> ids{4, 1, 1, 0, 4, 4};
  std::vector<double> table = randomValues(15, 110), w = randomValues(18, 111);
  auto loss = [&](const std::vector<double> &t) {
    std::vector<double> out(18);
    EXPECT_TRUE(embedding(t.data(), {5, 3}, ids.data(), {2, 3}, out.data()));
    return weightedSum(w, out);
  };
  std::vector<double> dtable(15);
  ASSERT_TRUE(
      embeddingGrad(w.data(), {2, 3, 3}, ids.data(), {2, 3}, 5, dtable.data()));
  expectAllClose(dtable, numericGradient(loss, table), kGradTolerance);
}

TEST(EmbeddingTest, FloatGradientAccumulatesInDouble) {
  // 1 + 1e-8 * 1000 in float steps would stall at 1; a double accumulator
  // rounded once gives the float nearest 1.00001.
  std::vector<float> dy(1001, 1e-8f);
  dy[0] = 1.0f;
  std::vector<int64_t> ids(1001, 0);
  std::vector<float> dtable(1);
  ASSERT_TRUE(embeddingGrad(dy.data(), {1001, 1}, ids.data(), {1001}, 1,
                            dtable.data()));
  EXPECT_EQ(dtable[0], static_cast<float>(1.0 + 1000 * double(1e-8f)));
}

/// Row blocks of the table: the lookups at their offsets add up to the
/// global lookup (ids outside a block give zeros, unchecked), and the
/// gradient blocks are the rows of the global gradient.
TEST(EmbeddingTest, RowBlocksAddUpToTheLookup) {
  const int64_t vocab = 6, hidden = 2, block = 3;
  std::vector<double> table = randomValues(vocab * hidden, 55, -1, 1);
  std::vector<int64_t> ids{5, 0, 3, 3, 2};
  std::vector<double> dy = randomValues(5 * hidden, 56, -1, 1);
  std::vector<double> full(5 * hidden), sum(5 * hidden, 0.0);
  std::vector<double> dtable(vocab * hidden);
  ASSERT_TRUE(embedding(table.data(), {vocab, hidden}, ids.data(), {5},
                        full.data()));
  ASSERT_TRUE(embeddingGrad(dy.data(), {5, hidden}, ids.data(), {5}, vocab,
                            dtable.data()));
  for (int64_t first = 0; first < vocab; first += block) {
    std::vector<double> part(5 * hidden), grad(block * hidden);
    ASSERT_TRUE(embeddingBlock(table.data() + first * hidden, {block, hidden},
                               ids.data(), {5}, first, part.data()));
    for (size_t i = 0; i < part.size(); ++i)
      sum[i] += part[i];
    ASSERT_TRUE(embeddingGradBlock(dy.data(), {5, hidden}, ids.data(), {5},
                                   first, block, grad.data()));
    for (int64_t i = 0; i < block * hidden; ++i)
      EXPECT_EQ(grad[i], dtable[first * hidden + i]) << "element " << i;
  }
  EXPECT_EQ(sum, full);
}

} // namespace

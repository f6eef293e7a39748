//===- RingAttentionTest.cpp - Ring attention block kernels ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The zigzag split balances causal work, and the step kernels over key
// blocks (in any order, at their global positions) merge into the whole
// attention and its gradient (the host attention kernels, which are checked
// against finite differences and PyTorch elsewhere).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/RingAttention.h"
#include "loom/Runtime/Host/Attention.h"

#include "HostTestSupport.h"

#include <limits>
#include <set>

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

TEST(RingAttentionTest, ZigzagCoversTheSequenceAndBalancesCausalPairs) {
  for (int64_t n : {2, 3, 4, 8}) {
    const int64_t chunk = 3, seq = 2 * n * chunk;
    std::set<int64_t> seen;
    std::vector<int64_t> pairs;
    for (int64_t r = 0; r < n; ++r) {
      std::vector<int64_t> positions = zigzagPositions(r, n, chunk);
      ASSERT_EQ(static_cast<int64_t>(positions.size()), 2 * chunk);
      // Chunk r first, then chunk 2n-1-r.
      EXPECT_EQ(positions.front(), r * chunk);
      EXPECT_EQ(positions[chunk], (2 * n - 1 - r) * chunk);
      int64_t attended = 0;
      for (int64_t p : positions) {
        EXPECT_TRUE(seen.insert(p).second) << "position " << p << " twice";
        attended += p + 1; // Causal: keys 0..p.
      }
      pairs.push_back(attended);
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), seq);
    for (int64_t r = 1; r < n; ++r)
      EXPECT_EQ(pairs[r], pairs[0]) << "rank " << r << " of " << n;
    for (int64_t c = 0; c < 2 * n; ++c) {
      EXPECT_EQ(contiguousOwner(c), c / 2);
      int64_t owner = zigzagOwner(c, n);
      std::vector<int64_t> positions = zigzagPositions(owner, n, chunk);
      EXPECT_TRUE(positions.front() == c * chunk ||
                  positions[chunk] == c * chunk);
    }
  }
}

/// Attention of 8 queries over 8 keys (2 batches, 4 query and 2 key/value
/// heads), the keys given as two blocks of 4 rows at scattered positions.
struct Problem {
  static constexpr int64_t b = 2, hq = 4, hkv = 2, s = 8, d = 3, dv = 2;
  std::vector<double> q = randomValues(b * hq * s * d, 1, -1.5, 1.5);
  std::vector<double> k = randomValues(b * hkv * s * d, 2, -1.5, 1.5);
  std::vector<double> v = randomValues(b * hkv * s * dv, 3);
  std::vector<double> dout = randomValues(b * hq * s * dv, 4);
  // The key rows of each block (and so their positions).
  std::vector<std::vector<int64_t>> blocks = {{0, 5, 6, 3}, {7, 1, 2, 4}};

  std::vector<double> rows(const std::vector<double> &x, int64_t heads,
                           int64_t width, const std::vector<int64_t> &pick) {
    std::vector<double> out;
    for (int64_t o = 0; o < b * heads; ++o)
      for (int64_t row : pick)
        for (int64_t c = 0; c < width; ++c)
          out.push_back(x[(o * s + row) * width + c]);
    return out;
  }
};

TEST(RingAttentionTest, BlocksMergeIntoWholeAttentionAndGradient) {
  using P = Problem;
  P p;
  std::vector<int64_t> queryPositions = {0, 1, 2, 3, 4, 5, 6, 7};
  Shape qShape = {P::b, P::hq, P::s, P::d};
  Shape blockK = {P::b, P::hkv, 4, P::d}, blockV = {P::b, P::hkv, 4, P::dv};
  for (bool causal : {false, true}) {
    std::vector<double> expected(P::b * P::hq * P::s * P::dv);
    attention<double>(p.q.data(), qShape, p.k.data(),
                      {P::b, P::hkv, P::s, P::d}, p.v.data(),
                      {P::b, P::hkv, P::s, P::dv}, nullptr, {}, causal,
                      std::nullopt, expected.data());
    // Both block orders give the whole attention.
    for (bool reversed : {false, true}) {
      std::vector<double> out(expected.size(), 0.0);
      std::vector<double> lse(P::b * P::hq * P::s,
                              -std::numeric_limits<double>::infinity());
      for (int i = 0; i < 2; ++i) {
        const std::vector<int64_t> &pick = p.blocks[reversed ? 1 - i : i];
        std::vector<double> k = p.rows(p.k, P::hkv, P::d, pick);
        std::vector<double> v = p.rows(p.v, P::hkv, P::dv, pick);
        attentionBlock<double>(p.q.data(), qShape, k.data(), blockK, v.data(),
                               blockV, queryPositions.data(), pick.data(),
                               causal, std::nullopt, out.data(), lse.data());
      }
      expectAllClose(out, expected, 1e-13, "out");
      // The gradient, block by block, from the merged out and lse.
      std::vector<double> dq(p.q.size(), 0.0);
      std::vector<double> dqWhole(p.q.size()), dkWhole(p.k.size()),
          dvWhole(p.v.size());
      attentionGrad<double>(p.q.data(), qShape, p.k.data(),
                            {P::b, P::hkv, P::s, P::d}, p.v.data(),
                            {P::b, P::hkv, P::s, P::dv}, expected.data(),
                            p.dout.data(), nullptr, {}, causal, std::nullopt,
                            dqWhole.data(), dkWhole.data(), dvWhole.data());
      for (int i = 0; i < 2; ++i) {
        const std::vector<int64_t> &pick = p.blocks[i];
        std::vector<double> k = p.rows(p.k, P::hkv, P::d, pick);
        std::vector<double> v = p.rows(p.v, P::hkv, P::dv, pick);
        std::vector<double> dkBlock(k.size(), 0.0), dvBlock(v.size(), 0.0);
        attentionBlockGrad<double>(
            p.q.data(), qShape, k.data(), blockK, v.data(), blockV, out.data(),
            p.dout.data(), lse.data(), queryPositions.data(), pick.data(),
            causal, std::nullopt, dq.data(), dkBlock.data(), dvBlock.data());
        EXPECT_EQ(dkBlock.size(), k.size());
        expectAllClose(dkBlock, p.rows(dkWhole, P::hkv, P::d, pick), 1e-12,
                       "dk");
        expectAllClose(dvBlock, p.rows(dvWhole, P::hkv, P::dv, pick), 1e-12,
                       "dv");
      }
      expectAllClose(dq, dqWhole, 1e-12, "dq");
    }
  }
}

} // namespace

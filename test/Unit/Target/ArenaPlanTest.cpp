//===- ArenaPlanTest.cpp - The static memory plan's offsets ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// emit::planArena on synthetic programs:
//   - no two buffers whose lifetimes overlap (inclusive: an op reads its
//     operands while writing its results) share a byte, in both element
//     sizes, on random programs, pipelined ones included (a stage's buffers
//     against its own and the unstaged ones);
//   - buffers that never live together reuse the same bytes (a chain of
//     temporaries needs two buffers' worth, not the sum);
//   - unstaged buffers have one offset for every stage; results stay out;
//   - integer elements are 8 bytes in both plans;
//   - the arena is never below the live peak, and on random programs the
//     plan stays within a documented factor of it;
//   - where first fit in program order leaves a gap a later buffer cannot
//     use, placing by decreasing size packs to the live peak (sizes worked
//     out by hand).
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/ArenaPlan.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>

using namespace mlir::loom::emit;

namespace {

int64_t bytesOf(const ArenaBuffer &b, int plan) {
  int64_t raw =
      std::max<int64_t>(b.elements * (b.isInteger || plan ? 8 : 4), 1);
  return (raw + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// Whether a rank of `stage` (-1: not pipelined) holds both buffers.
bool together(const ArenaBuffer &a, const ArenaBuffer &b) {
  return a.stage < 0 || b.stage < 0 || a.stage == b.stage;
}

void expectNoOverlap(const std::vector<ArenaBuffer> &buffers,
                     const ArenaPlan &plan, int64_t numStages) {
  for (int p : {0, 1})
    for (size_t i = 0; i < buffers.size(); ++i) {
      const ArenaBuffer &a = buffers[i];
      if (a.ownAllocation) {
        EXPECT_EQ(plan.offsets[i][p], -1) << "result " << i;
        continue;
      }
      ASSERT_GE(plan.offsets[i][p], 0);
      EXPECT_EQ(plan.offsets[i][p] % kArenaAlignment, 0);
      for (int64_t s = 0; s < std::max<int64_t>(numStages, 1); ++s)
        if (!numStages || a.stage < 0 || a.stage == s)
          EXPECT_LE(plan.offsets[i][p] + bytesOf(a, p), plan.arenaBytes[s][p])
              << "buffer " << i << " outside stage " << s << "'s arena";
      for (size_t j = i + 1; j < buffers.size(); ++j) {
        const ArenaBuffer &b = buffers[j];
        if (b.ownAllocation || (numStages && !together(a, b)) ||
            a.last < b.first || b.last < a.first)
          continue;
        int64_t aStart = plan.offsets[i][p], bStart = plan.offsets[j][p];
        bool disjoint = aStart + bytesOf(a, p) <= bStart ||
                        bStart + bytesOf(b, p) <= aStart;
        EXPECT_TRUE(disjoint)
            << "buffers " << i << " and " << j
            << " live together and overlap (plan " << p << ")";
      }
    }
}

std::vector<ArenaBuffer> randomProgram(std::mt19937 &rng, int count,
                                       int64_t numStages) {
  std::vector<ArenaBuffer> buffers;
  std::uniform_int_distribution<int> length(0, 30), size(0, 5000),
      stage(-1, static_cast<int>(numStages) - 1), coin(0, 9);
  for (int i = 0; i < count; ++i) {
    ArenaBuffer b;
    b.first = i;
    b.last = i + length(rng);
    b.elements = size(rng);
    b.isInteger = coin(rng) == 0;
    b.ownAllocation = coin(rng) == 1;
    // Mostly staged, a few unstaged, in a pipelined program.
    b.stage = numStages ? (coin(rng) < 2    ? -1
                           : stage(rng) < 0 ? 0
                                            : stage(rng))
                        : -1;
    buffers.push_back(b);
  }
  return buffers;
}

} // namespace

TEST(ArenaPlanTest, LiveBuffersNeverOverlapOnRandomPrograms) {
  std::mt19937 rng(7);
  double worst = 1.0;
  for (int64_t numStages : {0, 2, 3}) {
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<ArenaBuffer> buffers = randomProgram(rng, 200, numStages);
      ArenaPlan plan = planArena(buffers, numStages);
      ASSERT_EQ(plan.offsets.size(), buffers.size());
      expectNoOverlap(buffers, plan, numStages);
      for (size_t s = 0; s < plan.arenaBytes.size(); ++s)
        for (int p : {0, 1}) {
          EXPECT_GE(plan.arenaBytes[s][p], plan.liveBytes[s][p]);
          if (plan.liveBytes[s][p] > 0)
            worst = std::max(worst, double(plan.arenaBytes[s][p]) /
                                        double(plan.liveBytes[s][p]));
        }
    }
  }
  // No placement is optimal. On these programs the plan stays within 1.36x
  // of the live peak (1.344 at worst, 1.108 on average); first fit in
  // program order alone reached 1.385 (1.160 on average), so this fails if
  // the size-ordered placements stop being tried (docs/Codegen.md,
  // "Memory").
  EXPECT_LE(worst, 1.36);
}

TEST(ArenaPlanTest, AChainOfTemporariesReusesTwoBuffers) {
  // v0 -> v1 -> v2 -> ... each read only by the next op: two live at a time.
  std::vector<ArenaBuffer> buffers;
  for (int i = 0; i < 10; ++i)
    buffers.push_back({-1, 1000, false, i, i + 1, false});
  ArenaPlan plan = planArena(buffers, 0);
  int64_t one =
      (4000 + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  EXPECT_EQ(plan.arenaBytes[0][0], 2 * one);
  EXPECT_EQ(plan.liveBytes[0][0], 2 * one);
  // Every buffer at one of two offsets, alternating.
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(plan.offsets[i][0], (i % 2) * one) << "buffer " << i;
}

TEST(ArenaPlanTest, StagesShareUnstagedOffsetsAndKeepResultsOut) {
  std::vector<ArenaBuffer> buffers = {
      {-1, 100, false, 0, 9, false}, // Unstaged, live throughout.
      {0, 300, false, 1, 2, false},  {1, 500, false, 3, 4, false},
      {0, 200, true, 5, 6, false},   {1, 50, false, 7, 8, true},
  };
  ArenaPlan plan = planArena(buffers, 2);
  expectNoOverlap(buffers, plan, 2);
  EXPECT_EQ(plan.offsets[0][0], 0);
  EXPECT_EQ(plan.offsets[4][0], -1);
  // Stage 1's arena holds the unstaged buffer and its 500-element one.
  EXPECT_EQ(plan.arenaBytes[1][0], 448 + 2048);
  // Stage 0's: the unstaged one, then its two buffers at one offset (they
  // never live together); the integer one is 8 bytes per element in the f32
  // plan too, so the larger.
  EXPECT_EQ(plan.offsets[1][0], 448);
  EXPECT_EQ(plan.offsets[3][0], 448);
  EXPECT_EQ(plan.arenaBytes[0][0], 448 + 1600);
}

TEST(ArenaPlanTest, PlacingBySizeFillsTheGapFirstFitLeaves) {
  // a (16 floats, 64 B) lives at ops 0-1, b (32 floats, 128 B) at 0-3, c
  // (128 B) at 2-3. In program order, first fit puts a at 0 and b at 64;
  // when c starts, a's 64 free bytes below b cannot hold it, so c goes to
  // 192 and the arena is 320 B, though at most 256 B (b and c) are ever
  // live. By decreasing size: b at 0, c above it at 128, then a (which
  // never lives with c) in c's bytes at 128: 256 B, the live peak.
  std::vector<ArenaBuffer> buffers = {
      {-1, 16, false, 0, 1, false}, // a
      {-1, 32, false, 0, 3, false}, // b
      {-1, 32, false, 2, 3, false}, // c
  };
  ArenaPlan plan = planArena(buffers, 0);
  expectNoOverlap(buffers, plan, 0);
  EXPECT_EQ(plan.liveBytes[0][0], 256);
  EXPECT_EQ(plan.arenaBytes[0][0], 256);
  EXPECT_EQ(plan.offsets[1][0], 0);
  EXPECT_EQ(plan.offsets[2][0], 128);
  EXPECT_EQ(plan.offsets[0][0], 128);
  // With doubles every size doubles: 512 B, where first fit needs 640 B.
  EXPECT_EQ(plan.arenaBytes[0][1], 512);
  EXPECT_EQ(plan.liveBytes[0][1], 512);
}

TEST(ArenaPlanTest, AStageIsPackedAroundTheUnstagedBuffers) {
  // The same three buffers in stage 1 of two, around an unstaged 64-byte
  // buffer u live throughout (placed first, at 0): stage 1 packs to its
  // live peak, u + b + c = 320 B (first fit would need 384 B); stage 0
  // holds u alone.
  std::vector<ArenaBuffer> buffers = {
      {-1, 16, false, 0, 3, false}, // u
      {1, 16, false, 0, 1, false},  // a
      {1, 32, false, 0, 3, false},  // b
      {1, 32, false, 2, 3, false},  // c
  };
  ArenaPlan plan = planArena(buffers, 2);
  expectNoOverlap(buffers, plan, 2);
  EXPECT_EQ(plan.offsets[0][0], 0);
  EXPECT_EQ(plan.arenaBytes[0][0], 64);
  EXPECT_EQ(plan.liveBytes[1][0], 320);
  EXPECT_EQ(plan.arenaBytes[1][0], 320);
}

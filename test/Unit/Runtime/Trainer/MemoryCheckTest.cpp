//===- MemoryCheckTest.cpp - Will this rank's run fit in the machine? -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What a rank is sure to hold (its blocks of arguments and results, its
// stage's arena at the run's element size), and the refusal when that
// exceeds its share of the machine, with every part named in the message.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Trainer/MemoryCheck.h"

#include "gtest/gtest.h"

using namespace loom::runtime;
using namespace loom::runtime::trainer;
using harness::ProgramSpec;
using harness::TensorSpec;
using loom::support::AvailableMemory;

namespace {

TensorSpec tensor(std::vector<int64_t> localShape, bool isInteger = false,
                  int64_t stage = -1) {
  TensorSpec t;
  t.globalShape = localShape;
  t.localShape = std::move(localShape);
  t.isInteger = isInteger;
  t.stage = stage;
  return t;
}

/// A two-stage program on mesh {pp:2}: a weight of each stage, the batch's
/// ids (every stage holds them), the loss of stage 1.
ProgramSpec twoStages() {
  ProgramSpec spec;
  spec.mesh = {{"pp", 2}};
  spec.pipelineAxis = "pp";
  spec.numStages = 2;
  spec.arguments = {tensor({100, 10}, false, 0), tensor({50, 10}, false, 1),
                    tensor({4, 8}, /*isInteger=*/true)};
  spec.results = {tensor({}, false, 1), tensor({100, 10}, false, 0),
                  tensor({50, 10}, false, 1)};
  int64_t arenas[][2] = {{4096, 8192}, {1024, 2048}};
  spec.addHostArena(arenas, 2);
  return spec;
}

TEST(MemoryCheckTest, CountsTheRanksOwnBlocksAndStageArena) {
  ProgramSpec spec = twoStages();
  RankMemoryNeed first = rankMemoryNeed(spec, 0, 4);
  EXPECT_EQ(first.arguments, 100 * 10 * 4 + 4 * 8 * 8);
  EXPECT_EQ(first.results, 100 * 10 * 4);
  EXPECT_EQ(first.arena, 4096);
  RankMemoryNeed second = rankMemoryNeed(spec, 1, 8);
  EXPECT_EQ(second.arguments, 50 * 10 * 8 + 4 * 8 * 8);
  EXPECT_EQ(second.results, 8 + 50 * 10 * 8);
  EXPECT_EQ(second.arena, 2048);
}

TEST(MemoryCheckTest, ArenaTablesKeepTheLargerStep) {
  ProgramSpec spec;
  int64_t train[][2] = {{100, 200}};
  int64_t eval[][2] = {{300, 50}};
  spec.addHostArena(train, 1);
  spec.addHostArena(eval, 1);
  ASSERT_EQ(spec.hostArenaBytes.size(), 1u);
  EXPECT_EQ(spec.hostArenaBytes[0][0], 300);
  EXPECT_EQ(spec.hostArenaBytes[0][1], 200);
}

TEST(MemoryCheckTest, SizesBeyondInt64AreCountedNotWrapped) {
  ProgramSpec spec;
  spec.mesh = {{"dp", 1}};
  spec.arguments = {tensor({int64_t(1) << 40, int64_t(1) << 40})};
  RankMemoryNeed need = rankMemoryNeed(spec, 0, 4);
  EXPECT_GT(need.total(), 4e24);
  std::optional<std::string> error =
      checkRankMemory(need, 0, 1, AvailableMemory{int64_t(1) << 40, "test"});
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("needs at least more than 8 EiB of host memory"),
            std::string::npos)
      << *error;
}

TEST(MemoryCheckTest, RefusesWhatExceedsTheRanksShare) {
  RankMemoryNeed need;
  need.arguments = 3 << 20;
  need.results = 1 << 20;
  need.arena = 2 << 20; // 6 MiB in all
  AvailableMemory machine{16 << 20, "MemAvailable in /proc/meminfo"};
  // Alone on the machine, or one of two: fits.
  EXPECT_EQ(checkRankMemory(need, 0, 1, machine), std::nullopt);
  EXPECT_EQ(checkRankMemory(need, 0, 2, machine), std::nullopt);
  // One of four ranks: 4 MiB each.
  std::optional<std::string> error = checkRankMemory(need, 3, 4, machine);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(*error,
            "rank 3 needs at least 6.0 MiB of host memory (arguments 3.0 "
            "MiB, results 1.0 MiB, step arena 2.0 MiB), but this machine has "
            "16.0 MiB available (MemAvailable in /proc/meminfo) for its 4 "
            "ranks, 4.0 MiB each: run on more devices (a plan that splits the "
            "model further), shrink the model or the batch, or pass "
            "--skip-memory-check to try anyway");
  // Nothing known about the machine: nothing refused.
  EXPECT_EQ(checkRankMemory(need, 3, 4, std::nullopt), std::nullopt);
}

} // namespace

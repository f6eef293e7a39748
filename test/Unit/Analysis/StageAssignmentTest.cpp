//===- StageAssignmentTest.cpp - The stage-assignment DP ------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The DP's bottleneck equals the best over every contiguous split on random
// small instances (brute force), the split it returns fits the memory limit
// and predicts the simulated step; layer counts that do not divide are
// split without dropping a layer; a memory limit moves the boundaries; and
// an impossible limit is reported.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Pipeline/StageAssignment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

using namespace loom::pipeline;

namespace {

/// Every split of the layers into `problem.stages` non-empty contiguous
/// ranges; calls `visit` with the bounds.
void forEachSplit(const StageProblem &problem,
                  const std::function<void(const std::vector<int64_t> &)> &visit) {
  int64_t layers = int64_t(problem.layers.size());
  std::vector<int64_t> bounds = {0};
  std::function<void()> recurse = [&]() {
    int64_t placed = int64_t(bounds.size()) - 1;
    if (placed == problem.stages - 1) {
      bounds.push_back(layers);
      if (bounds[placed + 1] > bounds[placed])
        visit(bounds);
      bounds.pop_back();
      return;
    }
    for (int64_t end = bounds.back() + 1; end < layers; ++end) {
      bounds.push_back(end);
      recurse();
      bounds.pop_back();
    }
  };
  recurse();
}

LayerCost randomLayer(std::mt19937 &rng) {
  std::uniform_real_distribution<double> seconds(0.1, 2.0), bytes(1.0, 10.0);
  LayerCost layer;
  layer.forwardSeconds = seconds(rng);
  layer.backwardSeconds = 2 * seconds(rng);
  layer.stepSeconds = 0.1 * seconds(rng);
  layer.stateBytes = bytes(rng);
  layer.activationBytes = bytes(rng);
  return layer;
}

TEST(StageAssignment, DynamicProgramMatchesBruteForce) {
  std::mt19937 rng(42);
  int checked = 0, infeasible = 0;
  for (int trial = 0; trial < 300; ++trial) {
    StageProblem problem;
    problem.embedding = randomLayer(rng);
    problem.head = randomLayer(rng);
    int64_t layers = 1 + trial % 9;
    for (int64_t i = 0; i < layers; ++i)
      problem.layers.push_back(randomLayer(rng));
    problem.stages = 1 + int64_t(rng() % std::min<uint64_t>(layers, 5));
    problem.microBatches = 1 + int64_t(rng() % 8);
    problem.schedule =
        trial % 2 ? ScheduleKind::GPipe : ScheduleKind::OneFOneB;
    problem.p2pSeconds = 0.01 * (trial % 3);
    // Limits from loose to tight, so that memory binds in some trials.
    problem.memoryLimit = 15.0 + double(rng() % 60);

    double bruteBest = std::numeric_limits<double>::infinity();
    forEachSplit(problem, [&](const std::vector<int64_t> &bounds) {
      StageAssignment split = evaluateStageSplit(problem, bounds);
      if (split.feasible)
        bruteBest = std::min(bruteBest, split.bottleneckSeconds);
    });
    StageAssignment dp = assignStages(problem);
    ASSERT_EQ(dp.feasible, std::isfinite(bruteBest))
        << "trial " << trial << ": " << dp.error;
    if (!dp.feasible) {
      ++infeasible;
      EXPECT_FALSE(dp.error.empty());
      continue;
    }
    ++checked;
    EXPECT_NEAR(dp.bottleneckSeconds, bruteBest, 1e-9 * bruteBest)
        << "trial " << trial;
    for (const StageInfo &stage : dp.stages)
      EXPECT_LE(stage.memoryBytes, problem.memoryLimit);
  }
  // Both outcomes were exercised.
  EXPECT_GT(checked, 80);
  EXPECT_GT(infeasible, 5);
}

TEST(StageAssignment, PredictionIsTheSimulatedStep) {
  StageProblem problem;
  for (int i = 0; i < 6; ++i)
    problem.layers.push_back({1.0, 2.0, 0.5, 1.0, 1.0});
  problem.head = {0.5, 1.0, 0.0, 0.0, 0.0};
  problem.stages = 3;
  problem.microBatches = 4;
  problem.p2pSeconds = 0.1;
  problem.memoryLimit = 100;
  StageAssignment result = assignStages(problem);
  ASSERT_TRUE(result.feasible) << result.error;
  std::vector<StageTimes> times;
  double slowestStep = 0;
  for (const StageInfo &stage : result.stages) {
    times.push_back(stage.times);
    slowestStep = std::max(slowestStep, stage.stepSeconds);
  }
  Simulation simulation =
      simulatePipeline(problem.schedule, times, problem.microBatches, 0.1);
  EXPECT_DOUBLE_EQ(result.stepSeconds, simulation.makespan + slowestStep);
  EXPECT_DOUBLE_EQ(result.bubbleSeconds, simulation.bubble);
  EXPECT_GT(result.bubbleSeconds, 0.0);
}

TEST(StageAssignment, UnevenLayerCountKeepsEveryLayer) {
  // 7 equal layers over 3 stages: 3 + 2 + 2 in some order, bottleneck 3.
  StageProblem problem;
  for (int i = 0; i < 7; ++i)
    problem.layers.push_back({1.0, 2.0, 0.0, 1.0, 0.0});
  problem.stages = 3;
  problem.microBatches = 8;
  problem.memoryLimit = 1e9;
  StageAssignment result = assignStages(problem);
  ASSERT_TRUE(result.feasible) << result.error;
  ASSERT_EQ(result.stages.size(), 3u);
  EXPECT_EQ(result.stages.front().firstLayer, 0);
  EXPECT_EQ(result.stages.back().endLayer, 7);
  std::vector<int64_t> counts;
  for (size_t s = 0; s < 3; ++s) {
    if (s)
      EXPECT_EQ(result.stages[s].firstLayer, result.stages[s - 1].endLayer);
    counts.push_back(result.stages[s].endLayer - result.stages[s].firstLayer);
  }
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_DOUBLE_EQ(result.bottleneckSeconds, 9.0);
  EXPECT_EQ(getEvenStageBounds(7, 3), (std::vector<int64_t>{0, 3, 5, 7}));
}

TEST(StageAssignment, MemoryLimitMovesTheBoundary) {
  // A heavy head: without a limit stage 0 takes more layers to balance
  // time; under 1F1B stage 0 keeps 2 micro-batches of activations and the
  // last stage 1, so a tight limit pushes layers off stage 0.
  StageProblem problem;
  for (int i = 0; i < 8; ++i)
    problem.layers.push_back({1.0, 2.0, 0.0, 1.0, 4.0});
  problem.embedding = {0.0, 0.0, 0.0, 1.0, 0.0};
  problem.head = {1.5, 3.0, 0.0, 1.0, 0.0};
  problem.stages = 2;
  problem.microBatches = 4;
  problem.schedule = ScheduleKind::OneFOneB;
  problem.memoryLimit = 1e9;
  StageAssignment free = assignStages(problem);
  ASSERT_TRUE(free.feasible);
  // Time balance: stage 0 with k layers takes 3k s, stage 1 3 (8 - k) +
  // 4.5 s; the best bottleneck is 15 s, with stage 0 = layers [0, 5).
  EXPECT_EQ(free.stages[0].endLayer, 5);
  EXPECT_DOUBLE_EQ(free.bottleneckSeconds, 15.0);
  // Stage 0 with k layers needs 1 + k + 2 * 4k = 1 + 9k bytes; cap at 40:
  // k <= 4.
  problem.memoryLimit = 40;
  StageAssignment tight = assignStages(problem);
  ASSERT_TRUE(tight.feasible) << tight.error;
  EXPECT_EQ(tight.stages[0].endLayer, 4);
  EXPECT_LE(tight.stages[0].memoryBytes, 40.0);
  EXPECT_GT(tight.bottleneckSeconds, free.bottleneckSeconds);
  // Stage 0 fits 20 only with k <= 2, stage 1 (1 + 5 (8 - k)) only with
  // k >= 5: nothing fits.
  problem.memoryLimit = 20;
  StageAssignment none = assignStages(problem);
  EXPECT_FALSE(none.feasible);
  EXPECT_NE(none.error.find("no split of 8 layers into 2 stages"),
            std::string::npos)
      << none.error;
}

TEST(StageAssignment, MoreStagesThanLayersIsAnError) {
  StageProblem problem;
  problem.layers.resize(2);
  problem.stages = 3;
  problem.memoryLimit = 1;
  StageAssignment result = assignStages(problem);
  EXPECT_FALSE(result.feasible);
  EXPECT_NE(result.error.find("3 stages"), std::string::npos);
}

/// Interleaved 1F1B over 8 equal layers, 2 stages of 2 chunks: chunk c
/// holds layers [2c, 2c + 2) on stage c mod 2; with no hop latency the
/// bubble is 1F1B's over V; a stage's memory is its chunks' state plus its
/// (chunk, micro-batch) units in flight times a chunk's activations.
TEST(StageAssignment, InterleavedChunksAndTheirPrediction) {
  StageProblem problem;
  for (int i = 0; i < 8; ++i)
    problem.layers.push_back({1.0, 2.0, 0.5, 10.0, 4.0});
  problem.stages = 2;
  problem.microBatches = 4;
  problem.memoryLimit = 1e9;
  problem.schedule = ScheduleKind::OneFOneB;
  StageAssignment plain = assignStages(problem);
  ASSERT_TRUE(plain.feasible) << plain.error;
  problem.schedule = ScheduleKind::Interleaved1F1B;
  problem.virtualStages = 2;
  StageAssignment interleaved = assignStages(problem);
  ASSERT_TRUE(interleaved.feasible) << interleaved.error;
  ASSERT_EQ(interleaved.chunks.size(), 4u);
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_EQ(interleaved.chunks[c].firstLayer, 2 * c);
    EXPECT_EQ(interleaved.chunks[c].endLayer, 2 * c + 2);
    EXPECT_DOUBLE_EQ(interleaved.chunks[c].times.forward, 2.0);
    EXPECT_DOUBLE_EQ(interleaved.chunks[c].times.backward, 4.0);
  }
  ASSERT_EQ(interleaved.stages.size(), 2u);
  EXPECT_NEAR(interleaved.bubbleSeconds, plain.bubbleSeconds / 2, 1e-12);
  EXPECT_LT(interleaved.stepSeconds, plain.stepSeconds);
  // Stage 0: 4 layers of state (40) + 5 units in flight of 2 layers' (8)
  // activations; once-per-step 4 layers' 0.5 s.
  EXPECT_EQ(interleaved.stages[0].inFlight, 5);
  EXPECT_DOUBLE_EQ(interleaved.stages[0].memoryBytes, 40.0 + 5 * 8.0);
  EXPECT_DOUBLE_EQ(interleaved.stages[0].stepSeconds, 2.0);
  // The hops: V times as many per micro-batch, so a slow link costs the
  // interleaved step more than the plain one.
  problem.p2pSeconds = 1.0;
  StageAssignment slowInterleaved = assignStages(problem);
  problem.schedule = ScheduleKind::OneFOneB;
  problem.virtualStages = 1;
  StageAssignment slowPlain = assignStages(problem);
  ASSERT_TRUE(slowInterleaved.feasible && slowPlain.feasible);
  EXPECT_GT(slowInterleaved.stepSeconds - interleaved.stepSeconds,
            slowPlain.stepSeconds - plain.stepSeconds);
}

TEST(StageAssignment, InterleavedErrors) {
  StageProblem problem;
  for (int i = 0; i < 6; ++i)
    problem.layers.push_back({1.0, 2.0, 0.0, 1.0, 1.0});
  problem.stages = 2;
  problem.virtualStages = 2;
  problem.microBatches = 4;
  problem.memoryLimit = 1e9;
  problem.schedule = ScheduleKind::Interleaved1F1B;
  StageAssignment uneven = assignStages(problem);
  EXPECT_FALSE(uneven.feasible);
  EXPECT_NE(uneven.error.find("6 layers do not split evenly into 2 stages "
                              "of 2 chunks"),
            std::string::npos)
      << uneven.error;
  problem.layers.resize(8, {1.0, 2.0, 0.0, 1.0, 1.0});
  problem.microBatches = 3;
  StageAssignment odd = assignStages(problem);
  EXPECT_FALSE(odd.feasible);
  EXPECT_NE(odd.error.find("multiple of the pipeline stages"),
            std::string::npos)
      << odd.error;
  problem.microBatches = 4;
  problem.memoryLimit = 5;
  StageAssignment full = assignStages(problem);
  EXPECT_FALSE(full.feasible);
  EXPECT_NE(full.error.find("over the limit"), std::string::npos) << full.error;
}

} // namespace

namespace {

/// ZeRO-3 on a pipeline: a stage keeps its layers' shards (stateBytes) and
/// the whole parameters of two of its layers at a time (the largest two),
/// plus its pseudo-layers' whole; not every layer's whole copy.
TEST(StageAssignment, ZeroThreeChargesATwoLayerWindow) {
  StageProblem problem;
  // Layer i: state 1 (its shard), activations 0, whole parameters 10 + i.
  for (int i = 0; i < 6; ++i) {
    LayerCost layer{1.0, 2.0, 0.0, 1.0, 0.0};
    layer.gatheredBytes = 10.0 + i;
    problem.layers.push_back(layer);
  }
  problem.head.gatheredBytes = 7.0;
  problem.stages = 2;
  problem.microBatches = 4;
  problem.memoryLimit = 1e9;
  EXPECT_DOUBLE_EQ(getGatherWindow(problem, 0, 3), 12.0 + 11.0);
  EXPECT_DOUBLE_EQ(getGatherWindow(problem, 3, 4), 13.0);
  StageAssignment split = evaluateStageSplit(problem, {0, 3, 6});
  ASSERT_TRUE(split.feasible) << split.error;
  // Stage 0: 3 shards + layers 2 and 1 whole.
  EXPECT_DOUBLE_EQ(split.stages[0].memoryBytes, 3.0 + 23.0);
  // Stage 1: 3 shards + layers 5 and 4 whole + the head's whole.
  EXPECT_DOUBLE_EQ(split.stages[1].memoryBytes, 3.0 + 29.0 + 7.0);

  // Interleaved, 2 stages of 3 one-layer chunks: one chunk runs at a time,
  // so a stage keeps its largest chunk's window, not the sum of its
  // chunks'.
  problem.schedule = ScheduleKind::Interleaved1F1B;
  problem.virtualStages = 3;
  problem.microBatches = 4;
  StageAssignment interleaved = assignStages(problem);
  ASSERT_TRUE(interleaved.feasible) << interleaved.error;
  // Stage 0 holds chunks 0, 2, 4 = layers 0, 2, 4 (one each): 3 shards and
  // the largest one-layer window, layer 4's 14.
  EXPECT_DOUBLE_EQ(interleaved.stages[0].memoryBytes, 3.0 + 14.0);
}

} // namespace

//===- PipelineScheduleTest.cpp - GPipe / 1F1B orders and simulation ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The unit orders hold every unit once with each micro-batch's forward before
// its backward; 1F1B keeps at most min(S - s, M) micro-batches in flight on
// stage s, GPipe M; with equal stages both schedules' bubble is the closed
// form (S - 1) * (tf + tb), and an uneven stage sets the pace. Interleaved
// 1F1B (V chunks per stage) runs every (chunk, micro-batch) unit once in
// Megatron's order, needs M a multiple of S, and with equal chunks its
// bubble is (S - 1) * (tf + tb) / V.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Pipeline/Schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace loom::pipeline;

namespace {

TEST(PipelineSchedule, OrdersHoldEveryUnitOnceForwardFirst) {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (int64_t stages : {1, 2, 3, 4, 8})
      for (int64_t micro : {1, 2, 3, 4, 8, 13})
        for (int64_t s = 0; s < stages; ++s) {
          std::vector<Unit> order = getStageUnitOrder(kind, stages, s, micro);
          ASSERT_EQ(order.size(), static_cast<size_t>(2 * micro));
          std::set<int64_t> forwards;
          for (const Unit &unit : order) {
            if (!unit.backward) {
              EXPECT_TRUE(forwards.insert(unit.microBatch).second);
            } else {
              EXPECT_TRUE(forwards.count(unit.microBatch))
                  << "B(" << unit.microBatch << ") before its forward";
            }
          }
          EXPECT_EQ(forwards.size(), static_cast<size_t>(micro));
        }
}

TEST(PipelineSchedule, OneFOneBKeepsAtMostStagesMinusIndexInFlight) {
  for (int64_t stages : {2, 4, 8})
    for (int64_t micro : {1, 2, 4, 8, 16})
      for (int64_t s = 0; s < stages; ++s) {
        EXPECT_EQ(getMaxInFlight(getStageUnitOrder(ScheduleKind::OneFOneB,
                                                   stages, s, micro)),
                  std::min(stages - s, micro));
        EXPECT_EQ(getMaxInFlight(
                      getStageUnitOrder(ScheduleKind::GPipe, stages, s, micro)),
                  micro);
      }
}

TEST(PipelineSchedule, OneFOneBOrderOfTheFirstStage) {
  // 4 stages, 6 micro-batches: 3 warm-up forwards, then 1F1B, then drain.
  std::vector<Unit> order =
      getStageUnitOrder(ScheduleKind::OneFOneB, 4, 0, 6);
  std::vector<Unit> expected = {{false, 0}, {false, 1}, {false, 2},
                                {false, 3}, {true, 0},  {false, 4},
                                {true, 1},  {false, 5}, {true, 2},
                                {true, 3},  {true, 4},  {true, 5}};
  EXPECT_EQ(order, expected);
}

TEST(PipelineSchedule, EqualStagesHaveTheClosedFormBubble) {
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB})
    for (int64_t stages : {1, 2, 4, 8})
      for (int64_t micro : {1, 2, 4, 8, 32}) {
        double tf = 1.0, tb = 2.0;
        Simulation sim = simulatePipeline(
            kind, std::vector<StageTimes>(stages, {tf, tb}), micro);
        double bubble = static_cast<double>(stages - 1) * (tf + tb);
        EXPECT_DOUBLE_EQ(sim.bubble, bubble)
            << getScheduleKindName(kind) << " S=" << stages << " M=" << micro;
        EXPECT_DOUBLE_EQ(sim.makespan, micro * (tf + tb) + bubble);
      }
}

TEST(PipelineSchedule, UnitsRespectTheirDependencies) {
  std::vector<StageTimes> stages = {{1.0, 2.5}, {3.0, 1.0}, {0.5, 4.0}};
  double p2p = 0.25;
  Simulation sim = simulatePipeline(ScheduleKind::OneFOneB, stages, 5, p2p);
  auto endOf = [&](int64_t s, bool backward, int64_t m) {
    for (const UnitEvent &event : sim.events[s])
      if (event.unit == Unit{backward, m})
        return event.end;
    ADD_FAILURE() << "missing unit";
    return 0.0;
  };
  for (int64_t s = 0; s < 3; ++s) {
    double previousEnd = 0.0;
    for (const UnitEvent &event : sim.events[s]) {
      EXPECT_GE(event.start, previousEnd);
      previousEnd = event.end;
      int64_t m = event.unit.microBatch;
      if (!event.unit.backward && s > 0)
        EXPECT_GE(event.start, endOf(s - 1, false, m) + p2p);
      if (event.unit.backward && s < 2)
        EXPECT_GE(event.start, endOf(s + 1, true, m) + p2p);
    }
  }
  // The slowest stage (stage 2: 4.5 s per micro-batch) paces the step.
  EXPECT_GE(sim.makespan, 5 * 4.5);
  EXPECT_DOUBLE_EQ(sim.bubble, sim.makespan - 5 * 4.5);
}

/// Every (chunk, micro-batch) forward and backward once; a micro-batch's
/// chunks run forward in order and backward in reverse on every stage.
TEST(PipelineSchedule, InterleavedOrdersHoldEveryChunkUnitOnce) {
  for (int64_t stages : {2, 3, 4})
    for (int64_t chunks : {2, 3})
      for (int64_t groups : {1, 2, 3})
        for (int64_t s = 0; s < stages; ++s) {
          int64_t micro = groups * stages;
          std::vector<Unit> order = getStageUnitOrder(
              ScheduleKind::Interleaved1F1B, stages, s, micro, chunks);
          ASSERT_EQ(order.size(), static_cast<size_t>(2 * micro * chunks));
          std::set<std::pair<int64_t, int64_t>> forwards, backwards;
          std::vector<int64_t> nextForwardChunk(micro, 0);
          std::vector<int64_t> nextBackwardChunk(micro, chunks - 1);
          for (const Unit &unit : order) {
            std::pair<int64_t, int64_t> key{unit.chunk, unit.microBatch};
            if (!unit.backward) {
              EXPECT_TRUE(forwards.insert(key).second);
              EXPECT_EQ(unit.chunk, nextForwardChunk[unit.microBatch]++);
            } else {
              EXPECT_TRUE(forwards.count(key));
              EXPECT_TRUE(backwards.insert(key).second);
              EXPECT_EQ(unit.chunk, nextBackwardChunk[unit.microBatch]--);
            }
          }
          EXPECT_EQ(backwards.size(), static_cast<size_t>(micro * chunks));
        }
}

/// Megatron's order for 2 stages, 2 chunks, 4 micro-batches on stage 0:
/// 2(S-1-s) + (V-1)S = 4 warm-up forwards (micro-batches 0, 1 through chunk
/// 0, then through chunk 1), then 1F1B with the backwards from chunk 1.
TEST(PipelineSchedule, InterleavedOrderOfTheFirstStage) {
  std::vector<Unit> order =
      getStageUnitOrder(ScheduleKind::Interleaved1F1B, 2, 0, 4, 2);
  std::vector<Unit> expected = {
      {false, 0, 0}, {false, 1, 0}, {false, 0, 1}, {false, 1, 1},
      {false, 2, 0}, {true, 0, 1},  {false, 3, 0}, {true, 1, 1},
      {false, 2, 1}, {true, 0, 0},  {false, 3, 1}, {true, 1, 0},
      {true, 2, 1},  {true, 3, 1},  {true, 2, 0},  {true, 3, 0}};
  EXPECT_EQ(order, expected);
  // Units of activations alive at most: 5 (chunk, micro-batch) pairs, each
  // half the stage's layers; plain 1F1B's order keeps 2 whole micro-batches.
  EXPECT_EQ(getMaxInFlight(order), 5);
  EXPECT_EQ(getMaxInFlight(getStageUnitOrder(ScheduleKind::OneFOneB, 2, 0, 4)),
            2);
}

TEST(PipelineSchedule, InterleavedEqualChunksShrinkTheBubbleByV) {
  for (int64_t stages : {2, 4, 8})
    for (int64_t chunks : {2, 3, 4})
      for (int64_t groups : {1, 2, 4}) {
        int64_t micro = groups * stages;
        double tf = 1.0, tb = 2.0;
        std::vector<StageTimes> chunkTimes(stages * chunks,
                                           {tf / static_cast<double>(chunks),
                                            tb / static_cast<double>(chunks)});
        Simulation sim = simulatePipeline(ScheduleKind::Interleaved1F1B,
                                          chunkTimes, micro, 0.0, chunks);
        Simulation plain =
            simulatePipeline(ScheduleKind::OneFOneB,
                             std::vector<StageTimes>(stages, {tf, tb}), micro);
        EXPECT_NEAR(sim.bubble, plain.bubble / static_cast<double>(chunks),
                    1e-9)
            << "S=" << stages << " V=" << chunks << " M=" << micro;
        EXPECT_NEAR(sim.makespan, micro * (tf + tb) + sim.bubble, 1e-9);
        ASSERT_EQ(sim.events.size(), static_cast<size_t>(stages));
        EXPECT_EQ(sim.events[0].size(),
                  static_cast<size_t>(2 * micro * chunks));
      }
}

/// A unit waits for the previous global chunk (the last stage's for chunk
/// v > 0 on stage 0) and the backward of the next one.
TEST(PipelineSchedule, InterleavedUnitsRespectTheChunkChain) {
  int64_t stages = 3, chunks = 2, micro = 6;
  std::vector<StageTimes> times;
  for (int64_t c = 0; c < stages * chunks; ++c)
    times.push_back({0.5 + 0.25 * c, 1.0 + 0.1 * c});
  double p2p = 0.125;
  Simulation sim = simulatePipeline(ScheduleKind::Interleaved1F1B, times, micro,
                                    p2p, chunks);
  auto endOf = [&](int64_t c, bool backward, int64_t m) {
    for (const UnitEvent &event : sim.events[c % stages])
      if (event.unit == Unit{backward, m, c / stages})
        return event.end;
    ADD_FAILURE() << "missing unit";
    return 0.0;
  };
  for (int64_t s = 0; s < stages; ++s)
    for (const UnitEvent &event : sim.events[s]) {
      int64_t c = event.unit.chunk * stages + s;
      int64_t m = event.unit.microBatch;
      if (!event.unit.backward && c > 0)
        EXPECT_GE(event.start, endOf(c - 1, false, m) + p2p);
      if (event.unit.backward && c + 1 < stages * chunks)
        EXPECT_GE(event.start, endOf(c + 1, true, m) + p2p);
    }
}

TEST(PipelineSchedule, InterleavedNeedsMicroBatchesAMultipleOfStages) {
  EXPECT_EQ(checkSchedule(ScheduleKind::Interleaved1F1B, 4, 8, 2),
            std::nullopt);
  EXPECT_EQ(checkSchedule(ScheduleKind::OneFOneB, 4, 6, 1), std::nullopt);
  std::optional<std::string> error =
      checkSchedule(ScheduleKind::Interleaved1F1B, 4, 6, 2);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("micro-batches (6) to be a multiple of the pipeline "
                        "stages (4)"),
            std::string::npos)
      << *error;
  EXPECT_TRUE(checkSchedule(ScheduleKind::Interleaved1F1B, 4, 8, 1));
  EXPECT_TRUE(checkSchedule(ScheduleKind::OneFOneB, 4, 8, 2));
  EXPECT_EQ(parseScheduleKind("interleaved-1f1b"),
            ScheduleKind::Interleaved1F1B);
}

} // namespace

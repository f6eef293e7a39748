//===- PipelineScheduleTest.cpp - GPipe / 1F1B orders and simulation ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The unit orders hold every unit once with each micro-batch's forward before
// its backward; 1F1B keeps at most min(S - s, M) micro-batches in flight on
// stage s, GPipe M; with equal stages both schedules' bubble is the closed
// form (S - 1) * (tf + tb), and an uneven stage sets the pace.
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

} // namespace

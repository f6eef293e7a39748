//===- Schedule.cpp - Pipeline schedules and their simulation -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The unit orders of GPipe and 1F1B, and a list simulation of them:
//
//   1. every stage holds a cursor into its order;
//   2. sweep the stages: a stage's next unit starts once its previous unit
//      and the units it depends on (F(m) of the stage before, B(m) of the
//      stage after, each plus the point-to-point latency) have ended;
//   3. repeat until every unit ran (a sweep without progress would be a
//      deadlock, which the orders above cannot produce).
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Pipeline/Schedule.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>

namespace loom::pipeline {

std::optional<ScheduleKind> parseScheduleKind(std::string_view text) {
  if (text == "gpipe")
    return ScheduleKind::GPipe;
  if (text == "1f1b")
    return ScheduleKind::OneFOneB;
  return std::nullopt;
}

const char *getScheduleKindName(ScheduleKind kind) {
  return kind == ScheduleKind::GPipe ? "gpipe" : "1f1b";
}

std::vector<Unit> getStageUnitOrder(ScheduleKind kind, int64_t stages,
                                    int64_t stage, int64_t microBatches) {
  std::vector<Unit> order;
  order.reserve(2 * microBatches);
  // GPipe is 1F1B with a warm-up that covers every micro-batch.
  int64_t warmup = kind == ScheduleKind::GPipe
                       ? microBatches
                       : std::min(stages - 1 - stage, microBatches);
  int64_t nextForward = 0, nextBackward = 0;
  for (; nextForward < warmup; ++nextForward)
    order.push_back({false, nextForward});
  for (; nextForward < microBatches; ++nextForward) {
    order.push_back({false, nextForward});
    order.push_back({true, nextBackward++});
  }
  for (; nextBackward < microBatches; ++nextBackward)
    order.push_back({true, nextBackward});
  return order;
}

int64_t getMaxInFlight(const std::vector<Unit> &order) {
  int64_t live = 0, most = 0;
  for (const Unit &unit : order) {
    live += unit.backward ? -1 : 1;
    most = std::max(most, live);
  }
  return most;
}

Simulation simulatePipeline(ScheduleKind kind,
                            const std::vector<StageTimes> &stages,
                            int64_t microBatches, double p2pSeconds) {
  int64_t numStages = static_cast<int64_t>(stages.size());
  Simulation sim;
  sim.events.resize(numStages);
  std::vector<std::vector<Unit>> orders;
  for (int64_t s = 0; s < numStages; ++s)
    orders.push_back(getStageUnitOrder(kind, numStages, s, microBatches));

  // End times per stage and micro-batch; negative = not run yet.
  std::vector<std::vector<double>> forwardEnd(
      numStages, std::vector<double>(microBatches, -1.0));
  std::vector<std::vector<double>> backwardEnd = forwardEnd;
  std::vector<size_t> cursor(numStages, 0);
  std::vector<double> stageFree(numStages, 0.0);

  size_t remaining = 0;
  for (const auto &order : orders)
    remaining += order.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int64_t s = 0; s < numStages; ++s) {
      while (cursor[s] < orders[s].size()) {
        const Unit &unit = orders[s][cursor[s]];
        double ready = stageFree[s];
        int64_t m = unit.microBatch;
        if (!unit.backward && s > 0) {
          if (forwardEnd[s - 1][m] < 0)
            break;
          ready = std::max(ready, forwardEnd[s - 1][m] + p2pSeconds);
        }
        if (unit.backward && s + 1 < numStages) {
          if (backwardEnd[s + 1][m] < 0)
            break;
          ready = std::max(ready, backwardEnd[s + 1][m] + p2pSeconds);
        }
        double duration =
            unit.backward ? stages[s].backward : stages[s].forward;
        double end = ready + duration;
        (unit.backward ? backwardEnd : forwardEnd)[s][m] = end;
        sim.events[s].push_back({unit, ready, end});
        stageFree[s] = end;
        ++cursor[s];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) {
      // Only a hand-made order could get here; getStageUnitOrder's cannot.
      std::fprintf(stderr, "loom: internal error: pipeline schedule "
                           "deadlocks in simulation\n");
      std::abort();
    }
  }

  double busiest = 0.0;
  for (int64_t s = 0; s < numStages; ++s) {
    sim.makespan = std::max(sim.makespan, stageFree[s]);
    busiest = std::max(busiest, static_cast<double>(microBatches) *
                                    (stages[s].forward + stages[s].backward));
  }
  sim.bubble = sim.makespan - busiest;
  return sim;
}

} // namespace loom::pipeline

//===- Schedule.cpp - Pipeline schedules and their simulation -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The unit orders of GPipe, 1F1B and interleaved 1F1B, and a list
// simulation of them:
//
//   1. every stage holds a cursor into its order;
//   2. sweep the stages: a stage's next unit starts once its previous unit
//      and the units it depends on (F(m) of the chunk before, B(m) of the
//      chunk after, each plus the point-to-point latency) have ended;
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
  if (text == "interleaved-1f1b")
    return ScheduleKind::Interleaved1F1B;
  return std::nullopt;
}

const char *getScheduleKindName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return "gpipe";
  case ScheduleKind::OneFOneB:
    return "1f1b";
  case ScheduleKind::Interleaved1F1B:
    return "interleaved-1f1b";
  }
  return "1f1b";
}

std::optional<std::string> checkSchedule(ScheduleKind kind, int64_t stages,
                                         int64_t microBatches,
                                         int64_t virtualStages) {
  if (kind != ScheduleKind::Interleaved1F1B) {
    if (virtualStages != 1)
      return std::string("virtual stages (") + std::to_string(virtualStages) +
             ") need the interleaved-1f1b schedule, found " +
             getScheduleKindName(kind);
    return std::nullopt;
  }
  if (virtualStages < 2)
    return "the interleaved-1f1b schedule needs at least 2 virtual stages "
           "(chunks per device), found " +
           std::to_string(virtualStages);
  if (stages < 2)
    return std::string("the interleaved-1f1b schedule needs at least 2 "
                       "pipeline stages, found ") +
           std::to_string(stages);
  // Megatron's order takes the micro-batches in groups of S per chunk.
  if (microBatches % stages != 0)
    return "the interleaved-1f1b schedule needs the micro-batches (" +
           std::to_string(microBatches) +
           ") to be a multiple of the pipeline stages (" +
           std::to_string(stages) + ")";
  return std::nullopt;
}

/// Megatron's interleaved order: forward unit k of a stage (backward unit k
/// with the chunks reversed) in groups of S micro-batches per chunk.
static std::vector<Unit> getInterleavedOrder(int64_t stages, int64_t stage,
                                             int64_t microBatches,
                                             int64_t chunks) {
  int64_t total = microBatches * chunks;
  auto unitOf = [&](int64_t k, bool backward) {
    int64_t inGroup = k % (stages * chunks);
    int64_t chunk = inGroup / stages;
    int64_t microBatch = (k / (stages * chunks)) * stages + k % stages;
    return Unit{backward, microBatch, backward ? chunks - 1 - chunk : chunk};
  };
  // The first stage waits the longest for its first backward: its chunk
  // V-1 backward needs every other stage's forwards of the group first.
  int64_t warmup =
      std::min(2 * (stages - 1 - stage) + (chunks - 1) * stages, total);
  std::vector<Unit> order;
  order.reserve(2 * total);
  int64_t nextForward = 0, nextBackward = 0;
  for (; nextForward < warmup; ++nextForward)
    order.push_back(unitOf(nextForward, false));
  for (; nextForward < total; ++nextForward) {
    order.push_back(unitOf(nextForward, false));
    order.push_back(unitOf(nextBackward++, true));
  }
  for (; nextBackward < total; ++nextBackward)
    order.push_back(unitOf(nextBackward, true));
  return order;
}

std::vector<Unit> getStageUnitOrder(ScheduleKind kind, int64_t stages,
                                    int64_t stage, int64_t microBatches,
                                    int64_t virtualStages) {
  if (kind == ScheduleKind::Interleaved1F1B)
    return getInterleavedOrder(stages, stage, microBatches, virtualStages);
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
                            const std::vector<StageTimes> &chunks,
                            int64_t microBatches, double p2pSeconds,
                            int64_t virtualStages) {
  int64_t numChunks = static_cast<int64_t>(chunks.size());
  int64_t numStages = numChunks / std::max<int64_t>(virtualStages, 1);
  Simulation sim;
  sim.events.resize(numStages);
  std::vector<std::vector<Unit>> orders;
  for (int64_t s = 0; s < numStages; ++s)
    orders.push_back(
        getStageUnitOrder(kind, numStages, s, microBatches, virtualStages));

  // End times per global chunk (v * S + s) and micro-batch; negative = not
  // run yet.
  std::vector<std::vector<double>> forwardEnd(
      numChunks, std::vector<double>(microBatches, -1.0));
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
        int64_t c = unit.chunk * numStages + s;
        if (!unit.backward && c > 0) {
          if (forwardEnd[c - 1][m] < 0)
            break;
          ready = std::max(ready, forwardEnd[c - 1][m] + p2pSeconds);
        }
        if (unit.backward && c + 1 < numChunks) {
          if (backwardEnd[c + 1][m] < 0)
            break;
          ready = std::max(ready, backwardEnd[c + 1][m] + p2pSeconds);
        }
        double duration =
            unit.backward ? chunks[c].backward : chunks[c].forward;
        double end = ready + duration;
        (unit.backward ? backwardEnd : forwardEnd)[c][m] = end;
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
    double work = 0.0;
    for (int64_t c = s; c < numChunks; c += numStages)
      work += static_cast<double>(microBatches) *
              (chunks[c].forward + chunks[c].backward);
    busiest = std::max(busiest, work);
  }
  sim.bubble = sim.makespan - busiest;
  return sim;
}

} // namespace loom::pipeline

//===- Timeline.cpp - A simulated pipeline step as a Chrome trace ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Metadata events first (process and thread names), then per stage, per
// rank of that stage, its units in the order they run. Times are in
// microseconds, as the trace format expects.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Pipeline/Timeline.h"

#include <nlohmann/json.hpp>

namespace loom::pipeline {

std::string getTimelineJSON(const Simulation &simulation, ScheduleKind kind,
                            int64_t microBatches, int64_t ranksPerStage) {
  using ojson = nlohmann::ordered_json;
  constexpr double kMicroseconds = 1e6;
  ojson events = ojson::array();
  int64_t stages = int64_t(simulation.events.size());
  for (int64_t stage = 0; stage < stages; ++stage) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", stage},
                      {"args", {{"name", "stage " + std::to_string(stage)}}}});
    events.push_back({{"name", "process_sort_index"},
                      {"ph", "M"},
                      {"pid", stage},
                      {"args", {{"sort_index", stage}}}});
    for (int64_t local = 0; local < ranksPerStage; ++local) {
      int64_t rank = stage * ranksPerStage + local;
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", stage},
                        {"tid", rank},
                        {"args", {{"name", "rank " + std::to_string(rank)}}}});
    }
  }
  for (int64_t stage = 0; stage < stages; ++stage)
    for (int64_t local = 0; local < ranksPerStage; ++local)
      for (const UnitEvent &event : simulation.events[stage]) {
        // Interleaved units name their chunk: F3.1 is micro-batch 3's
        // forward through the stage's chunk 1.
        std::string name = (event.unit.backward ? "B" : "F") +
                           std::to_string(event.unit.microBatch);
        if (kind == ScheduleKind::Interleaved1F1B)
          name += "." + std::to_string(event.unit.chunk);
        events.push_back({{"name", name},
                          {"cat", event.unit.backward ? "backward" : "forward"},
                          {"ph", "X"},
                          {"pid", stage},
                          {"tid", stage * ranksPerStage + local},
                          {"ts", event.start * kMicroseconds},
                          {"dur", (event.end - event.start) * kMicroseconds},
                          {"args",
                           {{"micro_batch", event.unit.microBatch},
                            {"chunk", event.unit.chunk}}}});
      }
  ojson trace = {
      {"traceEvents", events},
      {"displayTimeUnit", "ms"},
      {"otherData",
       {{"schedule", getScheduleKindName(kind)},
        {"stages", stages},
        {"micro_batches", microBatches},
        {"makespan_us", simulation.makespan * kMicroseconds},
        {"bubble_us", simulation.bubble * kMicroseconds}}}};
  return trace.dump(1) + "\n";
}

} // namespace loom::pipeline

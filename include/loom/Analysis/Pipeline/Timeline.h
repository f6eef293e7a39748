//===- Timeline.h - A simulated pipeline step as a Chrome trace -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Writes a `Simulation` (Schedule.h) as Chrome-trace JSON, which Perfetto
// (ui.perfetto.dev) and chrome://tracing open: one complete event (ph "X")
// per unit per rank, named "F3" / "B3" for micro-batch 3's forward and
// backward, timestamps and durations in microseconds. pid is the stage, tid
// the global rank (rank = stage * ranksPerStage + intra-stage rank, the
// pipeline axis being the mesh's major axis), so every rank of a stage
// shows its stage's units and the idle gaps are the bubble. Metadata events
// name the processes ("stage 0") and threads ("rank 5").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_PIPELINE_TIMELINE_H
#define LOOM_ANALYSIS_PIPELINE_TIMELINE_H

#include "loom/Analysis/Pipeline/Schedule.h"

#include <cstdint>
#include <string>

namespace loom::pipeline {

/// The trace of `simulation` for `ranksPerStage` ranks per stage, as JSON
/// text: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData":
/// {"schedule", "stages", "micro_batches", "makespan_us", "bubble_us"}}.
std::string getTimelineJSON(const Simulation &simulation, ScheduleKind kind,
                            int64_t microBatches, int64_t ranksPerStage);

} // namespace loom::pipeline

#endif // LOOM_ANALYSIS_PIPELINE_TIMELINE_H

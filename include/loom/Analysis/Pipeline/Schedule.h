//===- Schedule.h - Pipeline schedules and their simulation -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A pipeline of S stages runs M micro-batches per training step. Each stage
// works through *units* in a fixed order: F(m), the forward of micro-batch m,
// and B(m), its backward. The schedule fixes that order:
//
//   GPipe: F(0) .. F(M-1), then B(0) .. B(M-1);
//   1F1B:  stage s first runs min(S-1-s, M) forwards (warm-up), then
//          alternates one forward and one backward, then drains the
//          remaining backwards (PipeDream-Flush / Megatron's schedule), so
//          stage s keeps at most min(S-s, M) micro-batches' activations.
//
// F(m) on stage s needs F(m) of stage s-1 (its activations); B(m) on stage
// s needs B(m) of stage s+1 (their gradients) and F(m) of stage s.
// `simulatePipeline` plays the orders against those dependencies with
// per-unit durations and a point-to-point latency and returns when every
// unit runs: the step's makespan and its bubble. The search's prediction
// and `loomc --timeline` both call it, so they agree by construction.
//
// Plain C++ with no MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_PIPELINE_SCHEDULE_H
#define LOOM_ANALYSIS_PIPELINE_SCHEDULE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::pipeline {

enum class ScheduleKind { GPipe, OneFOneB };

/// "gpipe" or "1f1b"; nullopt for anything else.
std::optional<ScheduleKind> parseScheduleKind(std::string_view text);
/// The spelling `parseScheduleKind` accepts.
const char *getScheduleKindName(ScheduleKind kind);

/// One unit of a stage's work.
struct Unit {
  bool backward = false;
  int64_t microBatch = 0;

  bool operator==(const Unit &other) const {
    return backward == other.backward && microBatch == other.microBatch;
  }
};

/// The order in which stage `stage` (0-based, of `stages`) runs its 2 *
/// `microBatches` units under `kind`.
std::vector<Unit> getStageUnitOrder(ScheduleKind kind, int64_t stages,
                                    int64_t stage, int64_t microBatches);

/// The most micro-batches whose forward has run and whose backward has not,
/// over the order: the number of micro-batches of activations a stage keeps.
int64_t getMaxInFlight(const std::vector<Unit> &order);

/// How long one stage's units take, in seconds (the same for every
/// micro-batch).
struct StageTimes {
  double forward = 0.0;
  double backward = 0.0;
};

/// When one unit runs on its stage.
struct UnitEvent {
  Unit unit;
  double start = 0.0;
  double end = 0.0;
};

/// The simulated step.
struct Simulation {
  /// Per stage, its units in the order they run.
  std::vector<std::vector<UnitEvent>> events;
  /// The end of the last unit of any stage.
  double makespan = 0.0;
  /// makespan minus the busiest stage's work: the time that stage idles.
  double bubble = 0.0;
};

/// Plays `kind` over `stages.size()` stages with `microBatches`
/// micro-batches; a unit that waits on another stage starts `p2pSeconds`
/// after that stage's unit ends. Every stage starts at time 0. The orders
/// `getStageUnitOrder` gives never deadlock.
Simulation simulatePipeline(ScheduleKind kind,
                            const std::vector<StageTimes> &stages,
                            int64_t microBatches, double p2pSeconds = 0.0);

} // namespace loom::pipeline

#endif // LOOM_ANALYSIS_PIPELINE_SCHEDULE_H

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
//          stage s keeps at most min(S-s, M) micro-batches' activations;
//   interleaved 1F1B (Megatron's virtual pipeline, MindSpore's
//          `pp_interleave_num`): the layers are cut into S·V chunks and
//          stage s holds the V non-adjacent chunks s, s+S, ..., s+(V-1)S.
//          Units are per chunk: F(v, m) runs the forward of micro-batch m
//          through the stage's v-th chunk. Forward unit k (0 <= k < M·V)
//          of a stage is micro-batch (k / (S·V))·S + k mod S of chunk
//          (k mod S·V) / S: groups of S micro-batches go through chunk 0,
//          then chunk 1, ...; backward unit k takes the chunks from the
//          last. Stage s runs min(2(S-1-s) + (V-1)S, M·V) warm-up forwards,
//          then one forward and one backward alternately, then the rest of
//          the backwards. M must be a multiple of S (as in Megatron). Each
//          unit is 1/V of the stage's work, so the bubble is (S-1)/V of
//          1F1B's: the ramp is S-1 chunk units instead of S-1 stage units.
//
// F(m) on stage s needs F(m) of stage s-1 (its activations); B(m) on stage
// s needs B(m) of stage s+1 (their gradients) and F(m) of stage s. With
// chunks the same holds for the global chunk c = v·S + s: F(c, m) needs
// F(c-1, m) (on stage s-1, or on the last stage for s = 0), B(c, m) needs
// B(c+1, m).
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

enum class ScheduleKind { GPipe, OneFOneB, Interleaved1F1B };

/// "gpipe", "1f1b" or "interleaved-1f1b"; nullopt for anything else.
std::optional<ScheduleKind> parseScheduleKind(std::string_view text);
/// The spelling `parseScheduleKind` accepts.
const char *getScheduleKindName(ScheduleKind kind);

/// One unit of a stage's work.
struct Unit {
  bool backward = false;
  int64_t microBatch = 0;
  /// Interleaved 1F1B: which of the stage's chunks (0 .. V-1, the global
  /// chunk is chunk · S + stage); 0 otherwise.
  int64_t chunk = 0;

  bool operator==(const Unit &other) const {
    return backward == other.backward && microBatch == other.microBatch &&
           chunk == other.chunk;
  }
};

/// Why `kind` cannot run `microBatches` micro-batches over `stages` stages
/// of `virtualStages` chunks each (V > 1 only with interleaved 1F1B, which
/// needs V >= 2 and M a multiple of S); nullopt when it can.
std::optional<std::string> checkSchedule(ScheduleKind kind, int64_t stages,
                                         int64_t microBatches,
                                         int64_t virtualStages);

/// The order in which stage `stage` (0-based, of `stages`) runs its 2 *
/// `microBatches` * `virtualStages` units under `kind` (the arguments must
/// pass `checkSchedule`).
std::vector<Unit> getStageUnitOrder(ScheduleKind kind, int64_t stages,
                                    int64_t stage, int64_t microBatches,
                                    int64_t virtualStages = 1);

/// The most units whose forward has run and whose backward has not, over
/// the order: the micro-batches of activations a stage keeps (with chunks,
/// the (chunk, micro-batch) pairs: each holds one chunk's activations).
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

/// Plays `kind` with `microBatches` micro-batches; a unit that waits on
/// another stage starts `p2pSeconds` after that stage's unit ends. Every
/// stage starts at time 0. `chunks` holds the times of each global chunk:
/// one per stage (S = chunks.size()) when `virtualStages` is 1, else
/// S · V of them, chunk c on stage c mod S. The orders `getStageUnitOrder`
/// gives never deadlock.
Simulation simulatePipeline(ScheduleKind kind,
                            const std::vector<StageTimes> &chunks,
                            int64_t microBatches, double p2pSeconds = 0.0,
                            int64_t virtualStages = 1);

} // namespace loom::pipeline

#endif // LOOM_ANALYSIS_PIPELINE_SCHEDULE_H

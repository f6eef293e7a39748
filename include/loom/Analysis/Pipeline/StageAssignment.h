//===- StageAssignment.h - Layers to pipeline stages ------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Splits a model's transformer layers into S contiguous pipeline stages. The
// embedding always goes with stage 0 and the head (with the loss) with the
// last stage; every stage holds at least one layer and every layer is in
// exactly one stage, so layer counts that S does not divide are fine.
//
// A stage's per-micro-batch work w_s = F_s + B_s is the sum of its layers'
// (and pseudo-layers'), so Σ_s w_s is the same for every split and the
// pipeline's analytic step time Σ_s w_s + (M - 1) · max_s w_s (plus the
// fixed send/recv hops) falls with the bottleneck alone: the assignment is
// the split that minimizes max_s w_s subject to each stage's memory fitting
// the limit. A stage keeps its parameters, gradients and optimizer states
// plus its activations times the micro-batches its schedule keeps in
// flight (`getMaxInFlight`: 1F1B stage s min(S - s, M), GPipe M). The
// predicted step time is `simulatePipeline`'s makespan of the chosen split
// plus the slowest stage's once-per-step work (gradient synchronization and
// optimizer update run after the stage's last backward, on every stage at
// once). Under ZeRO-3 a stage's state holds its parameters' shards, plus the
// whole parameters of its two largest layers (the gathered window) and of its
// pseudo-layers.
//
// Under interleaved 1F1B (V chunks per stage) the layers are cut evenly into
// S · V chunks (L must divide: the search offers V only where it does), the
// embedding joins chunk 0 and the head the last chunk; the simulation runs
// per chunk, with the hop latency on every one of the S · V - 1 chunk
// boundaries (V times the hops per micro-batch of 1F1B), and a stage keeps
// its chunks' state plus, per (chunk, micro-batch) unit in flight, its
// largest chunk's activations.
//
// Plain C++ with no MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_PIPELINE_STAGEASSIGNMENT_H
#define LOOM_ANALYSIS_PIPELINE_STAGEASSIGNMENT_H

#include "loom/Analysis/Pipeline/Schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::pipeline {

/// What one layer (or the embedding / head pseudo-layer) costs on its
/// stage's sub-mesh, per device.
struct LayerCost {
  /// Forward and backward seconds of one micro-batch.
  double forwardSeconds = 0.0;
  double backwardSeconds = 0.0;
  /// Seconds spent once per step: the data-parallel gradient reduction and
  /// the optimizer update of the layer's parameters.
  double stepSeconds = 0.0;
  /// Bytes held for the whole step: parameters, gradients, optimizer states.
  double stateBytes = 0.0;
  /// Bytes of activations kept for the backward, per micro-batch in flight.
  double activationBytes = 0.0;
  /// ZeRO-3: the whole parameters gathered while the layer runs (its
  /// stateBytes hold only their shards). A stage keeps them live for a
  /// window of two layers at a time (the layer computing and the one
  /// gathered ahead, ParameterGathers.cpp), so it is charged its two
  /// largest layers' and the pseudo-layers' in full (see getGatherWindow).
  double gatheredBytes = 0.0;
};

/// The stage-assignment problem.
struct StageProblem {
  LayerCost embedding;
  std::vector<LayerCost> layers;
  LayerCost head;
  int64_t stages = 1;
  int64_t microBatches = 1;
  ScheduleKind schedule = ScheduleKind::OneFOneB;
  /// Chunks per stage (interleaved 1F1B only; 1 otherwise).
  int64_t virtualStages = 1;
  /// Latency of one activation (or gradient) hop between stages.
  double p2pSeconds = 0.0;
  /// Per-device memory limit in bytes; every stage must fit.
  double memoryLimit = 0.0;
};

/// One stage of an assignment.
struct StageInfo {
  /// Its layers, half-open: [firstLayer, endLayer).
  int64_t firstLayer = 0;
  int64_t endLayer = 0;
  /// One micro-batch's forward and backward seconds, and the once-per-step
  /// seconds.
  StageTimes times;
  double stepSeconds = 0.0;
  /// Peak bytes per device: state + activations × micro-batches in flight.
  double memoryBytes = 0.0;
  int64_t inFlight = 0;
};

/// The chosen split and its prediction.
struct StageAssignment {
  /// False when no split fits the memory limit (or S exceeds the layers);
  /// `error` says why and the rest is unset.
  bool feasible = false;
  std::string error;
  std::vector<StageInfo> stages;
  /// Interleaved 1F1B: per global chunk (v · S + s) its layers and times;
  /// empty otherwise.
  std::vector<StageInfo> chunks;
  /// The simulated step: the schedule's makespan plus the slowest stage's
  /// once-per-step seconds.
  double stepSeconds = 0.0;
  /// The schedule's bubble (simulatePipeline's).
  double bubbleSeconds = 0.0;
  /// The bottleneck the split minimized: max over stages of F + B.
  double bottleneckSeconds = 0.0;
  /// The simulation the prediction came from, and the hop latency it used.
  Simulation simulation;
  double p2pSeconds = 0.0;
};

/// ZeRO-3's gathered whole parameters a stage holding layers [first, end)
/// keeps live at its peak: its two largest layers' gatheredBytes (one
/// computing, the next gathered ahead), without the pseudo-layers'.
double getGatherWindow(const StageProblem &problem, int64_t first, int64_t end);

/// Memory of stage `stage` holding layers [first, end) (pseudo-layers
/// included at the ends) under the problem's schedule.
double getStageMemory(const StageProblem &problem, int64_t stage,
                      int64_t first, int64_t end);

/// The times of stage `stage` holding layers [first, end).
StageInfo getStageInfo(const StageProblem &problem, int64_t stage,
                       int64_t first, int64_t end);

/// Predicts the step of a given split (`bounds[s]` is stage s's first layer,
/// `bounds[S]` the layer count): stage infos, simulation, step time, bubble.
/// Infeasible when a stage exceeds the memory limit.
StageAssignment evaluateStageSplit(const StageProblem &problem,
                                   const std::vector<int64_t> &bounds);

/// The split minimizing the bottleneck stage subject to memory, by dynamic
/// programming over (stages, layer prefix) in O(S · L²); under interleaved
/// 1F1B the even split into S · V chunks (`assignInterleavedStages`).
StageAssignment assignStages(const StageProblem &problem);

/// Interleaved 1F1B: chunk c holds layers [c · L / (S V), (c + 1) · L /
/// (S V)) and runs on stage c mod S. Infeasible when S · V does not divide
/// the layers, the schedule refuses M (checkSchedule) or a stage exceeds
/// the memory limit.
StageAssignment assignInterleavedStages(const StageProblem &problem);

/// The even split (`pipeline_stage` given by hand): the first L mod S stages
/// take one layer more.
std::vector<int64_t> getEvenStageBounds(int64_t layers, int64_t stages);

} // namespace loom::pipeline

#endif // LOOM_ANALYSIS_PIPELINE_STAGEASSIGNMENT_H

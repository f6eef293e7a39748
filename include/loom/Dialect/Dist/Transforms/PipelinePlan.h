//===- PipelinePlan.h - The search's pipeline plans -------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The bridge between the strategy search and the stage assignment
// (include/loom/Analysis/Pipeline/StageAssignment.h): per-layer costs read
// off an intra-stage plan, and the `dist.pipeline` module attribute that
// hands the chosen split to `dist-assign-stages` / `dist-partition-stages`
// (docs/Pipeline.md, "Automatic stage assignment").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_PIPELINEPLAN_H
#define LOOM_DIALECT_DIST_TRANSFORMS_PIPELINEPLAN_H

#include "loom/Analysis/Pipeline/StageAssignment.h"
#include "loom/Dialect/Dist/Transforms/StrategyCostGraph.h"

#include "mlir/IR/BuiltinOps.h"

#include <vector>

namespace mlir::loom::dist {

/// The plain-C++ pipeline library (Analysis/Pipeline), by its short name.
namespace pipeline = ::loom::pipeline;

/// Which pipeline piece each search node belongs to.
struct LayerGroups {
  /// The distinct repeated-layer indices of the nodes, ascending; stage
  /// bounds index into this list.
  std::vector<int64_t> layerIds;
  /// Per node: -1 for the embedding (nodes before the first layer), the
  /// position in `layerIds`, or layerIds.size() for the head (nodes after).
  std::vector<int64_t> nodeGroup;
};

/// Groups the nodes of `builder` (which must have layers).
LayerGroups getLayerGroups(const StrategyCostGraphBuilder &builder);

/// The stage-assignment problem of the intra-stage plan `choice` (one
/// candidate per node) under `outer` with `microBatches` micro-batches:
/// per layer, forward = its nodes' forward seconds, backward = their
/// followers (plus the recomputed forward and the reshards), both priced at
/// one micro-batch's shapes (StrategyCostGraphBuilder::getMicroBatchCompute),
/// with the reshards, optimizer updates and edges (split evenly between
/// forward and backward) at 1/`microBatches` of the step's; once-per-step = the
/// gradient synchronization; state = parameters, gradients, optimizer
/// states and the transients of one micro-batch; activations = one
/// micro-batch's. `p2pSeconds` prices one micro-batch's layer input over
/// the link between consecutive stages. Stages, schedule and limit are left
/// for the caller.
pipeline::StageProblem
getStageProblem(const StrategyCostGraphBuilder &builder,
                const LayerGroups &groups, const std::vector<unsigned> &choice,
                const StrategyChoice &outer, int64_t microBatches,
                int64_t stageDevices);

/// A chosen pipeline plan.
struct PipelinePlan {
  int64_t stages = 1;
  int64_t microBatches = 1;
  pipeline::ScheduleKind schedule = pipeline::ScheduleKind::OneFOneB;
  pipeline::StageAssignment assignment;
  /// Stage s holds layers [layerIds[first], layerIds[end - 1] + 1).
  std::vector<int64_t> layerIds;
  /// Chunks per stage (interleaved 1F1B); the assignment's `chunks` then
  /// hold the layer ranges.
  int64_t virtualStages = 1;
};

/// Writes `dist.pipeline = {axis = "pp", stages, micro_batches, schedule,
/// virtual_stages, stage_layers = [[first, end), ...] (per chunk under
/// interleaved 1F1B), predicted = {step_time_s, bubble_s,
/// p2p_s, stage_memory_bytes, stage_forward_s, stage_backward_s}}` on
/// `module` (stage times per micro-batch; p2p_s the hop latency the
/// simulation used, so the timeline replays it exactly).
void writePipelineAttr(ModuleOp module, const PipelinePlan &plan);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PIPELINEPLAN_H

//===- PipelinePlan.cpp - The search's pipeline plans ---------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Per-layer costs of an intra-stage plan for the stage assignment, and the
// `dist.pipeline` attribute. A micro-batch's compute is priced at its own
// shapes (StrategyCostGraphBuilder::getMicroBatchCompute): the cost model is
// not linear in the batch (a GEMM's weights are read whatever the batch, a
// calibrated GEMM runs small products below peak). Its reshards,
// activations and transients are the whole-batch figures over M (the
// redistribution planner's prices are close to linear in the bytes at
// these sizes); gradient synchronization, parameters and optimizer states
// do not shrink.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/PipelinePlan.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

using ::mlir::loom::kPipelineAttrName;

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

LayerGroups mlir::loom::dist::getLayerGroups(
    const StrategyCostGraphBuilder &builder) {
  LayerGroups groups;
  const std::vector<SearchNode> &nodes = builder.getNodes();
  for (const SearchNode &node : nodes)
    if (node.layer >= 0)
      groups.layerIds.push_back(node.layer);
  llvm::sort(groups.layerIds);
  groups.layerIds.erase(
      std::unique(groups.layerIds.begin(), groups.layerIds.end()),
      groups.layerIds.end());
  bool seenLayer = false;
  for (const SearchNode &node : nodes) {
    if (node.layer >= 0) {
      seenLayer = true;
      groups.nodeGroup.push_back(
          llvm::lower_bound(groups.layerIds, node.layer) -
          groups.layerIds.begin());
    } else {
      groups.nodeGroup.push_back(seenLayer ? int64_t(groups.layerIds.size())
                                           : -1);
    }
  }
  return groups;
}

pipeline::StageProblem mlir::loom::dist::getStageProblem(
    const StrategyCostGraphBuilder &builder, const LayerGroups &groups,
    const std::vector<unsigned> &choice, const StrategyChoice &outer,
    int64_t microBatches, int64_t stageDevices) {
  pipeline::StageProblem problem;
  problem.layers.resize(groups.layerIds.size());
  auto pieceOf = [&](unsigned node) -> pipeline::LayerCost & {
    int64_t group = groups.nodeGroup[node];
    if (group < 0)
      return problem.embedding;
    if (group >= int64_t(problem.layers.size()))
      return problem.head;
    return problem.layers[group];
  };
  double perMicro = 1.0 / double(microBatches);
  double layerInputBytes = 0;
  const std::vector<SearchNode> &nodes = builder.getNodes();
  for (auto [index, node] : llvm::enumerate(nodes)) {
    unsigned candidate = choice[index];
    const CandidateCost &cost = node.costs[candidate];
    pipeline::LayerCost &piece = pieceOf(index);
    // The compute at the micro-batch's own shapes; the reshards and the
    // optimizer update at 1/M of the step's (an update runs once per step,
    // spread here over its micro-batches as before).
    MicroBatchCompute compute =
        builder.getMicroBatchCompute(index, candidate, microBatches);
    double recomputed =
        outer.recompute && node.layer >= 0 ? compute.forwardSeconds : 0;
    piece.forwardSeconds += compute.forwardSeconds;
    piece.backwardSeconds +=
        compute.followerSeconds + recomputed +
        (cost.reshardSeconds + cost.updateSeconds) * perMicro;
    piece.stepSeconds += cost.getSyncSeconds(outer.zeroStage, microBatches);
    // ZeRO-3 stores shards and gathers each layer's whole parameters while
    // it runs: the stage assignment charges those per window of two layers
    // (pipeline::getGatherWindow), not every layer's at once.
    bool gathered = outer.zeroStage >= 3;
    piece.gatheredBytes += gathered ? cost.parameterBytes : 0.0;
    piece.stateBytes +=
        (gathered ? cost.zeroParameterBytes
                  : cost.getParameterBytes(outer.zeroStage)) +
        cost.getGradientBytes(outer.zeroStage) +
        cost.getOptimizerBytes(outer.zeroStage) +
        builder.getNodeTransientBytes(index, candidate, outer) * perMicro;
    piece.activationBytes +=
        builder.getNodeActivationBytes(index, candidate, outer) * perMicro;
    if (groups.nodeGroup[index] == 0)
      layerInputBytes += cost.layerInputBytes * perMicro;
  }
  for (const SearchEdge &edge : builder.getEdges()) {
    double seconds =
        (*edge.cost)[choice[edge.source] *
                         nodes[edge.destination].candidates.size() +
                     choice[edge.destination]] *
        perMicro;
    pipeline::LayerCost &piece = pieceOf(edge.destination);
    piece.forwardSeconds += seconds / 2;
    piece.backwardSeconds += seconds / 2;
  }
  // Consecutive stages are `stageDevices` ranks apart (the pipeline axis is
  // the mesh's major axis): inside a node only when a stage is smaller than
  // one.
  problem.p2pSeconds = builder.getCostModel().getPointToPointSeconds(
      layerInputBytes, stageDevices);
  problem.microBatches = microBatches;
  return problem;
}

void mlir::loom::dist::writePipelineAttr(ModuleOp module,
                                         const PipelinePlan &plan) {
  MLIRContext *context = module.getContext();
  const pipeline::StageAssignment &assignment = plan.assignment;
  PipelineInfo info;
  info.stages = plan.stages;
  info.microBatches = plan.microBatches;
  info.schedule = plan.schedule;
  info.virtualStages = plan.virtualStages;
  SmallVector<double> forward, backward;
  SmallVector<int64_t> memory;
  // Layer ranges and times per chunk (per stage without virtual stages),
  // memory per stage.
  const std::vector<pipeline::StageInfo> &pieces =
      assignment.chunks.empty() ? assignment.stages : assignment.chunks;
  for (const pipeline::StageInfo &piece : pieces) {
    info.stageLayers.push_back({plan.layerIds[piece.firstLayer],
                                plan.layerIds[piece.endLayer - 1] + 1});
    forward.push_back(piece.times.forward);
    backward.push_back(piece.times.backward);
  }
  for (const pipeline::StageInfo &stage : assignment.stages)
    memory.push_back(int64_t(stage.memoryBytes));
  info.predicted = PipelinePredictionAttr::get(
      context, llvm::APFloat(assignment.stepSeconds),
      llvm::APFloat(assignment.bubbleSeconds),
      llvm::APFloat(assignment.p2pSeconds),
      DenseF64ArrayAttr::get(context, forward),
      DenseF64ArrayAttr::get(context, backward),
      DenseI64ArrayAttr::get(context, memory));
  module->setAttr(kPipelineAttrName, info.toAttr(context));
}

//===- StrategyCostGraph.h - A training step as a search problem -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Turns the `train_step` of a module into the strategy search's CostGraph
// (include/loom/Analysis/Search/CostGraph.h) for one mesh and one cluster:
//
//   - a node per forward op with a sharding rule (the first op of each
//     `loom.fwd` id), whose candidates are the valid assignments of mesh
//     axes to its factors that keep the user's fixed factors; a candidate's
//     cost prices the forward op at its local shapes, its backward and
//     optimizer followers, the gradient synchronization of the parameters it
//     consumes first, and the reshards of data inputs and returned values
//     it needs; its memory counts those parameters, their gradients and
//     optimizer states and the forward results kept for backward;
//   - an edge per tensor between two forward ops, priced by the
//     redistribution planner forward (producer result layout → consumer
//     operand layout) and backward (the operand's gradient, partial over
//     the consumer's axes that split factors it lacks → the producer's
//     layout made whole).
//
// Ops of identical layers have identical rules and shapes, so node costs and
// edge matrices are keyed by a signature and computed once. Everything that
// does not depend on the outer choices (ZeRO, recompute) is computed once
// per mesh by `analyze`; `build` then assembles a graph for one choice.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_STRATEGYCOSTGRAPH_H
#define LOOM_DIALECT_DIST_TRANSFORMS_STRATEGYCOSTGRAPH_H

#include "loom/Analysis/Cost/ClusterCostModel.h"
#include "loom/Analysis/Search/CostGraph.h"
#include "loom/Dialect/Dist/Transforms/FixedStrategies.h"
#include "loom/Dialect/Dist/Transforms/MicroBatchShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir::loom::dist {

/// The outer choices of the search, priced into node costs and memories.
struct StrategyChoice {
  /// The ZeRO stage over the data-parallel axes: 1 splits optimizer states
  /// and updates (gradients reduce-scattered once per step, updated
  /// parameters all-gathered); 2 also keeps the accumulated gradient split
  /// (each micro-batch's gradient reduce-scattered); 3 also stores the
  /// parameters split (gathered at the step's start, the gathered copy held
  /// through the backward).
  int zeroStage = 0;
  /// Full per-layer activation recompute: a layer keeps only its input and
  /// runs its forward once more in the backward.
  bool recompute = false;
  /// Micro-batches of a step split already (gradient accumulation without
  /// a pipeline): ZeRO-2/3 reduce-scatter each one's gradient. Pipelined
  /// plans price their micro-batches in getStageProblem instead.
  int64_t microBatches = 1;
};

/// What one candidate of one node costs, split by kind (seconds, bytes).
struct CandidateCost {
  /// Forward op at local shapes, and its followers.
  double forwardSeconds = 0;
  double followerSeconds = 0;
  /// The part of followerSeconds that is optimizer updates: once per step,
  /// whatever the micro-batches (StrategyCostGraphBuilder::
  /// getMicroBatchCompute leaves it out).
  double updateSeconds = 0;
  /// Whether forwardSeconds is the op's global time over the candidate's
  /// parallelism (ring attention) rather than its time at local shapes.
  bool forwardFromGlobal = false;
  /// Reshards of data inputs and returned values this node needs.
  double reshardSeconds = 0;
  /// Gradient synchronization of the parameters this node owns: all-reduce,
  /// or under ZeRO reduce-scatter + all-gather.
  /// Under ZeRO the reduce-scatter (`zeroReduceSeconds`, once per step at
  /// stage 1, once per micro-batch at stages 2 and 3) and the all-gather of
  /// the shard (`zeroGatherSeconds`: once per step after the update at
  /// stages 1 and 2; at stage 3 before each micro-batch's forward and, for
  /// a parameter the backward reads, again before its backward) are apart
  /// from the rest (`zeroSyncSeconds`: any all-reduce over other axes).
  double syncSeconds = 0;
  double zeroSyncSeconds = 0;
  double zeroReduceSeconds = 0;
  double zeroGatherSeconds = 0;
  /// Stage 3's gathers per micro-batch summed over the owned parameters,
  /// in seconds: each parameter's gather once (forward) or twice (its
  /// backward reads it too).
  double zeroLayerGatherSeconds = 0;
  /// Per-device bytes of owned parameters, of their gradients (in the type
  /// the optimizer reads them: f32 for f32 master weights), optimizer
  /// states with and without ZeRO, and the values kept for the backward:
  /// results the node's followers read, at its result layouts, and operands
  /// they read, at its operand layouts.
  double parameterBytes = 0;
  double gradientBytes = 0;
  double optimizerBytes = 0;
  double zeroOptimizerBytes = 0;
  double activationBytes = 0;
  /// The owned parameters' and gradients' bytes split over the
  /// data-parallel group (ZeRO-3's stored copy, ZeRO-2's gradients).
  double zeroParameterBytes = 0;
  double zeroGradientBytes = 0;

  /// Under recompute: the bytes this node keeps when it starts a layer (its
  /// input), else 0.
  double layerInputBytes = 0;
  /// What the node's backward holds only for a while: its followers'
  /// results (gradients, reshaped copies) other than parameter gradients,
  /// split by the candidate's parallelism, and the gradients of its results
  /// at its result layouts (docs/Search.md, "Memory").
  double transientBytes = 0;
  double resultGradientBytes = 0;

  /// Seconds of gradient synchronization per step under `zeroStage` with
  /// `microBatches` micro-batches.
  double getSyncSeconds(int zeroStage, int64_t microBatches) const {
    if (zeroStage == 0)
      return syncSeconds;
    double micro = double(microBatches);
    if (zeroStage >= 3)
      return zeroSyncSeconds +
             (zeroReduceSeconds + zeroLayerGatherSeconds) * micro;
    return zeroSyncSeconds + zeroGatherSeconds +
           zeroReduceSeconds * (zeroStage >= 2 ? micro : 1.0);
  }
  /// Bytes of parameters, gradients and optimizer states under `zeroStage`:
  /// stage 2 divides the gradients by the group; stage 3 the parameters'
  /// stored copy too. What stage 3 gathers is live a layer or two at a time,
  /// which only the graph can say (StrategyCostGraphBuilder::
  /// getNodeParameterBytes); here, for a node alone, its whole gathered
  /// copy is counted as well (an upper bound, which pipelined plans use).
  double getParameterBytes(int zeroStage) const {
    return zeroStage >= 3 ? parameterBytes + zeroParameterBytes
                          : parameterBytes;
  }
  double getGradientBytes(int zeroStage) const {
    return zeroStage >= 2 ? zeroGradientBytes : gradientBytes;
  }
  double getOptimizerBytes(int zeroStage) const {
    return zeroStage >= 1 ? zeroOptimizerBytes : optimizerBytes;
  }
};

/// One searched op.
struct SearchNode {
  Operation *op = nullptr;
  /// The strategies it may take; `costs` is parallel to it.
  std::vector<FactorAxes> candidates;
  std::vector<CandidateCost> costs;
  /// The repeated-layer index its parameters name (`transformer.h.3.*` is
  /// 3), inherited by parameterless ops after it; -1 outside layers.
  int64_t layer = -1;
  /// The signature its costs were cached under.
  std::string signature;
};

/// One tensor between two nodes (or a parameter shared by two nodes: then
/// only the forward reshard of the later consumer's copy is priced).
struct SearchEdge {
  unsigned source = 0, destination = 0;
  /// Row-major [source candidates][destination candidates], seconds.
  std::shared_ptr<const std::vector<double>> cost;
};

/// The compute of one candidate of one node on one micro-batch, priced at
/// the micro-batch's shapes.
struct MicroBatchCompute {
  /// The forward op at its local micro-batch shapes.
  double forwardSeconds = 0;
  /// Its followers other than optimizer updates at the micro-batch's global
  /// shapes over the candidate's parallelism (as CandidateCost prices them
  /// at the whole batch's).
  double followerSeconds = 0;
};

/// Cache statistics of one analysis: how many node cost vectors and edge
/// matrices were reused by signature.
struct SearchCacheStats {
  int64_t nodeHits = 0, nodeMisses = 0, edgeHits = 0, edgeMisses = 0;
  double getHitRate() const {
    int64_t total = nodeHits + nodeMisses + edgeHits + edgeMisses;
    return total ? double(nodeHits + edgeHits) / total : 0;
  }
};

/// Builds cost graphs of `func` for one mesh.
class StrategyCostGraphBuilder {
public:
  /// `fixed` comes from resolveFixedStrategies on the same mesh;
  /// `dataParallelAxes` split the batch of data inputs.
  StrategyCostGraphBuilder(func::FuncOp func, const ClusterCostModel &model,
                           const FixedStrategies &fixed,
                           Layout::AxisList dataParallelAxes);

  /// Finds the nodes, enumerates their candidates and prices everything
  /// that does not depend on the outer choice. Fails with an error on the
  /// op when a node has no candidate (its fixed factors are invalid on this
  /// mesh) or an op cannot be priced.
  LogicalResult analyze();
  /// The two halves of `analyze`: the nodes with their candidates and
  /// costs, then the edges (the redistribution planner over every pair of
  /// candidates: most of the analysis). A search may bound a mesh by its
  /// nodes alone and skip the edges (getNodeCostLowerBound).
  LogicalResult analyzeNodes();
  void analyzeEdges();

  /// A lower bound on the cost of every plan of the graph `build(choice)`
  /// gives: each node's cheapest candidate, no edge (edges cost >= 0).
  /// Valid after analyzeNodes.
  double getNodeCostLowerBound(const StrategyChoice &choice) const;

  /// The graph for `choice`: node costs and memories from the candidates'
  /// parts, the edges as analyzed.
  CostGraph build(const StrategyChoice &choice) const;

  /// The cost and memory of candidate `candidate` of `node` under `choice`,
  /// as `build` sums them.
  double getNodeCost(unsigned node, unsigned candidate,
                     const StrategyChoice &choice) const;
  double getNodeMemory(unsigned node, unsigned candidate,
                       const StrategyChoice &choice) const;
  /// The part of getNodeMemory that is parameters: CandidateCost::
  /// getParameterBytes below stage 3; at stage 3 the stored shard, plus
  /// the gathered copies the per-layer gathers keep live (two layers,
  /// charged to layer 0, and the parameters outside the layers).
  double getNodeParameterBytes(unsigned node, unsigned candidate,
                               const StrategyChoice &choice) const;
  /// The part of getNodeMemory that is activations kept for the backward
  /// (layer inputs only under recompute, plus one recomputed layer's worth
  /// charged to layer 0).
  double getNodeActivationBytes(unsigned node, unsigned candidate,
                                const StrategyChoice &choice) const;
  /// The part of getNodeMemory that is transient (CandidateCost::
  /// transientBytes as the model charges it under `choice`).
  double getNodeTransientBytes(unsigned node, unsigned candidate,
                               const StrategyChoice &choice) const;

  /// Candidate `candidate` of `node` on one of `microBatches` micro-batches,
  /// each op priced at the micro-batch's shapes (MicroBatchShapes.h), not
  /// at 1/M of the batch's: a GEMM's weights do not shrink with the
  /// micro-batch, and a calibrated GEMM curve runs small products below
  /// peak. Falls back to 1/M of the batch's figures where a batch dim does
  /// not divide. A step split into K micro-batches already has K copies of
  /// each op: each copy is priced split into M / K pieces and counts 1/K
  /// (with M = K, 1/M of the node's own figures, one copy's share of the
  /// stage problem's sum). Computed on first use and cached per
  /// (signature, batch dims, candidate, M), so identical layers price
  /// once. Valid after analyzeNodes.
  MicroBatchCompute getMicroBatchCompute(unsigned node, unsigned candidate,
                                         int64_t microBatches) const;

  /// The step's batch dims, when the caller analyzed them already (they
  /// depend on the step alone, so a search shares them across its meshes).
  void setBatchDims(std::shared_ptr<const BatchDims> dims) {
    batchDims = std::move(dims);
  }

  const std::vector<SearchNode> &getNodes() const { return nodes; }
  const std::vector<SearchEdge> &getEdges() const { return edges; }
  const SearchCacheStats &getCacheStats() const { return stats; }
  const ClusterCostModel &getCostModel() const { return model; }
  /// Whether some node can use each mesh axis (an axis no op can use wastes
  /// its devices).
  bool usesEveryAxis() const;
  /// Whether any node lies in a repeated layer (recompute applies).
  bool hasLayers() const;
  /// The solver's layer hint (SearchOptions::layers): per repeated layer in
  /// index order, its nodes in program order; empty with fewer than two
  /// layers. The solver checks that they really repeat.
  std::vector<std::vector<unsigned>> getLayerHint() const;
  /// The global FLOPs of every op of the step (the model FLOPs).
  double getModelFlops() const { return modelFlops; }
  /// The number of repeated layers (distinct layer indices of the nodes).
  int64_t getNumLayers() const { return numLayers; }

private:
  LogicalResult analyzeNode(unsigned index);
  std::string getSignature(Operation *op) const;
  MicroBatchCompute priceMicroBatch(unsigned node, unsigned candidate,
                                    int64_t microBatches) const;

  func::FuncOp func;
  const ClusterCostModel &model;
  const FixedStrategies &fixed;
  Layout::AxisList dataParallelAxes;
  std::unique_ptr<RedistributionPlanner> planner;

  std::vector<SearchNode> nodes;
  std::vector<SearchEdge> edges;
  llvm::DenseMap<Operation *, unsigned> nodeOf;
  /// Followers of each forward op.
  llvm::DenseMap<Operation *, std::vector<Operation *>> followers;
  /// The node that first consumes each parameter argument.
  llvm::DenseMap<unsigned, unsigned> parameterOwner;
  SearchCacheStats stats;
  double modelFlops = 0;
  int64_t numLayers = 0;
  /// The largest transient no plan avoids inside the layers: max over
  /// layer nodes of their smallest transientBytes + resultGradientBytes.
  double transientFloor = 0;

  /// Micro-batch pricing, on first use: the batch dims of the step, per
  /// node the first node with its signature and batch dims, and the
  /// priced (representative, candidate, M).
  mutable std::shared_ptr<const BatchDims> batchDims;
  /// The micro-batches the step is split into already (getMicroBatchCount;
  /// 0 until asked).
  mutable int64_t stepMicroBatches = 0;
  mutable std::vector<unsigned> microRepresentative;
  /// [representative][candidate]: (pieces, price) pairs, a few per
  /// candidate (the stage problem asks once per schedule and chunk count,
  /// so lookups must be cheap).
  mutable std::vector<std::vector<
      llvm::SmallVector<std::pair<int64_t, MicroBatchCompute>, 2>>>
      microCache;
};

/// The first integer component of a dotted parameter name
/// (`transformer.h.3.mlp.c_fc.weight` is 3), or -1: the layer it belongs to.
int64_t getLayerIndex(StringRef name);

/// The element type name (`f32`, ...) an op's compute is priced at: its
/// first floating-point result or operand, else `f32`; for a matmul whose
/// operands are all casts widening one narrower type, that type (the GEMM
/// reads the narrow operands and writes the wide result).
std::string getComputeTypeName(Operation *op);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_STRATEGYCOSTGRAPH_H

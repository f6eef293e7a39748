//===- SearchStrategy.cpp - dist-search-strategy --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Load the cluster spec, the entry function and the user's constraints
//    (strategy file, parallel config, `dist.strategy` attributes).
// 2. Candidate meshes: the module's mesh, else `mesh`, else the spec's,
//    else every `dp x tp` factorization of `devices` (axes of size 1 left
//    out, `tp` minor so that it maps inside a node), then, when self-
//    attention runs on long sequences, every `cp x tp` and `dp x cp` one
//    for the context-parallel degrees CandidateMeshes.h allows (ring
//    attention over `cp`). A mesh whose data-parallel axes do not divide
//    a data input's batch is skipped, and so is
//    one with an axis no op can use. With pipelining the candidates are
//    pp x (dp x [cp x] tp): per stage count S (given, or every divisor of
//    `devices` up to the layer count) the intra-stage meshes over
//    devices / S, tp kept inside a node when the search chooses S > 1.
// 3. Per mesh: resolve the fixed factors, build the cost graph once
//    (StrategyCostGraph.cpp), then per outer choice (ZeRO stage 0, 1 or 2
//    when the mesh has data-parallel axes, the config's when it fixes one;
//    stage 2 skipped on a flat mesh where stage 1 fits; recompute off/all
//    layers when there are layers, only on when the config asks for it)
//    assemble the graph and solve it by elimination under the memory limit,
//    with the repeated layers named so that the solver reduces one layer and
//    chains it (it checks that they repeat and falls back to the plain solve
//    otherwise). With S > 1 stages the plan of the whole model on the
//    intra-stage mesh gives per-layer costs, and per micro-batch count the
//    stage-assignment DP (StageAssignment.h) splits the layers under the memory
//    limit per stage and predicts the step by simulating the schedule (a plan
//    whose layers split nowhere is solved again under 0.75, then 0.5 times S
//    times the limit). Keep the plan with the least predicted step time over
//    all candidates (ties keep the earlier: no pipeline, less tensor
//    parallelism, a lower ZeRO stage, no recompute).
// 4. Write the mesh, every node's `dist.strategy`, the `#dist.plan`
//    (choices and predictions) and, with S > 1, `dist.pipeline`; under
//    `explain`, one remark per mesh and per node
//    (its strategy, its cost and the runner-up's given its neighbours).
// 5. Follow-ups the options ask for (end of file): `fit-liveness` runs
//    steps 1-4, partitions a copy of a plan without a pipeline and
//    measures its liveness to fit the memory limit (searching again under
//    a scaled limit while it does not fit); then, when a pipelined plan
//    chose another micro-batch count than @train_step's one,
//    loom-slice-micro-batches splits the step as it was before the search
//    into that count, and it is searched again.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/ClusterSpec.h"
#include "loom/Analysis/Cost/GradientOverlap.h"
#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/Analysis/Cost/MultiCopy.h"
#include "loom/Analysis/Strategy/ShardingSpec.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Dist/Transforms/CandidateMeshes.h"
#include "loom/Dialect/Dist/Transforms/FixedStrategies.h"
#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"
#include "loom/Dialect/Dist/Transforms/MultiCopyChoice.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Dist/Transforms/PipelinePlan.h"
#include "loom/Dialect/Dist/Transforms/StrategyCostGraph.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/LoomTraits.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Support/Flags.h"
#include "loom/Support/InputLimits.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>
#include <set>
#include <utility>

using ::mlir::loom::kClusterAttrName;
using ::mlir::loom::kCopyAttrName;
using ::mlir::loom::kHandConfigAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kMemoryAttrName;
using ::mlir::loom::kMemoryFitAttrName;
using ::mlir::loom::kMultiCopyAttrName;
using ::mlir::loom::kParamAttrName;
using ::mlir::loom::kPlanAttrName;
using ::mlir::loom::kStrategyAttrName;

#define DEBUG_TYPE "dist-search-strategy"

namespace mlir::loom::dist {
#define GEN_PASS_DEF_SEARCHSTRATEGYPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

/// What the memory of `func` is made of, for "no plan fits": its parameters'
/// total and its largest argument with its dims (the tensor the user most
/// likely mis-sized), e.g. "; parameters 1.5 GiB in all; the largest
/// argument is `wte` (tensor<50257x768xf32>, 147.2 MiB)". Sizes are
/// computed in double: the import phase has checked that each fits int64.
static std::string describeLargestArguments(func::FuncOp func) {
  // Bytes as a message says them; a sum past int64 saturates.
  auto format = [](double bytes) {
    return ::loom::support::formatBytes(int64_t(std::min(bytes, 9.0e18)));
  };
  double parameterBytes = 0, largestBytes = -1;
  std::string largest;
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      continue;
    double bytes = double((type.getElementTypeBitWidth() + 7) / 8);
    for (int64_t dim : type.getShape())
      bytes *= double(dim);
    auto param = func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                                  kParamAttrName);
    if (param)
      parameterBytes += bytes;
    if (bytes <= largestBytes)
      continue;
    largestBytes = bytes;
    std::string name;
    if (param)
      name = param.getName().str();
    else if (auto text = func.getArgAttrOfType<StringAttr>(
                 arg.getArgNumber(), ::mlir::loom::kNameAttrName))
      name = text.getValue().str();
    else if (auto role = func.getArgAttrOfType<InputRoleAttr>(
                 arg.getArgNumber(), kInputAttrName))
      name = stringifyInputRole(role.getValue()).str();
    else
      name = "#" + std::to_string(arg.getArgNumber());
    std::string typeText;
    llvm::raw_string_ostream os(typeText);
    os << type;
    largest = "`" + name + "` (" + typeText + ", " + format(bytes) + ")";
  }
  if (largestBytes < 0)
    return "";
  return "; parameters " + format(parameterBytes) +
         " in all; the largest argument is " + largest;
}

/// `1.23 ms`, `4.5 s`.
static std::string formatSeconds(double seconds) {
  if (!std::isfinite(seconds))
    return "inf";
  if (seconds >= 1)
    return llvm::formatv("{0:F3} s", seconds).str();
  if (seconds >= 1e-3)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F3} us", seconds * 1e6).str();
}

/// `[["dp"], [], ["tp"]]`.
static std::string printFactorAxes(const FactorAxes &axes) {
  std::string text = "[";
  for (auto [i, factor] : llvm::enumerate(axes)) {
    text += i ? ", [" : "[";
    for (auto [j, axis] : llvm::enumerate(factor))
      text += (j ? ", \"" : "\"") + axis + "\"";
    text += "]";
  }
  return text + "]";
}

namespace {
/// The best plan found so far.
struct Plan {
  std::unique_ptr<StrategyCostGraphBuilder> builder;
  std::unique_ptr<FixedStrategies> fixed;
  std::unique_ptr<ClusterCostModel> model;
  StrategyChoice choice;
  SearchSolution solution;
  /// The pipeline plan when it has more than one stage.
  std::optional<PipelinePlan> pipeline;
  /// The predicted step: solution.cost without a pipeline, else the
  /// simulated schedule's.
  double stepTime = kInfiniteCost;
};

/// One mesh to search: `stages` pipeline stages, each over `mesh`.
struct MeshCandidate {
  int64_t stages = 1;
  Mesh mesh;
};

struct SearchStrategyPass
    : mlir::loom::dist::impl::SearchStrategyPassBase<SearchStrategyPass> {
  using SearchStrategyPassBase::SearchStrategyPassBase;

  void runOnOperation() override;

private:
  /// Steps 1-4: one search of the module under the options.
  LogicalResult search();
  void explainNodes(const Plan &plan);
  /// `fit-liveness`: the search under a limit fitted by liveness.
  LogicalResult searchFittingLiveness();
  /// The step `unsplit` (@train_step before the search) split into the
  /// plan's micro-batches and searched again, when they differ from the
  /// step's.
  LogicalResult splitForMicroBatches(OwningOpRef<func::FuncOp> unsplit);
  /// `hand-configs`: the Megatron-style grid priced on copies of
  /// `pristine` (the module before the search), the closest recorded.
  LogicalResult compareHandConfigs(ModuleOp pristine);
  /// A fresh search pass with these options, the follow-ups off.
  std::unique_ptr<SearchStrategyPass> cloneSearch() const;

  /// The predicted step of the best plan without a pipeline the last
  /// search found (infinite when none): what a split pipelined plan must
  /// beat.
  double bestFlatStepTime = kInfiniteCost;
  /// The best plan's step as the first search priced it (the step not yet
  /// split: a micro-batch's ops priced at its shapes by getStageProblem),
  /// what hand configs are compared with.
  double firstStepTime = kInfiniteCost;
};
} // namespace

void SearchStrategyPass::explainNodes(const Plan &plan) {
  const StrategyCostGraphBuilder &builder = *plan.builder;
  const std::vector<SearchNode> &nodes = builder.getNodes();
  const std::vector<unsigned> &choice = plan.solution.choice;
  // Each node's cost alone: its own, plus its edges given the neighbours'
  // choices.
  std::vector<std::vector<unsigned>> incident(nodes.size());
  for (auto [index, edge] : llvm::enumerate(builder.getEdges())) {
    incident[edge.source].push_back(index);
    incident[edge.destination].push_back(index);
  }
  for (unsigned index = 0; index < nodes.size(); ++index) {
    const SearchNode &node = nodes[index];
    auto costOf = [&](unsigned candidate) {
      double total = builder.getNodeCost(index, candidate, plan.choice);
      for (unsigned e : incident[index]) {
        const SearchEdge &edge = builder.getEdges()[e];
        unsigned source = edge.source == index ? candidate : choice[edge.source];
        unsigned destination =
            edge.destination == index ? candidate : choice[edge.destination];
        total += (*edge.cost)[source * nodes[edge.destination].candidates.size() +
                              destination];
      }
      return total;
    };
    unsigned chosen = choice[index];
    double chosenCost = costOf(chosen);
    std::optional<unsigned> runnerUp;
    double runnerUpCost = kInfiniteCost;
    for (unsigned c = 0; c < node.candidates.size(); ++c) {
      if (c == chosen)
        continue;
      double cost = costOf(c);
      if (!runnerUp || cost < runnerUpCost) {
        runnerUp = c;
        runnerUpCost = cost;
      }
    }
    InFlightDiagnostic remark = node.op->emitRemark();
    remark << "strategy " << printFactorAxes(node.candidates[chosen]) << ": "
           << formatSeconds(chosenCost);
    if (runnerUp)
      remark << "; runner-up " << printFactorAxes(node.candidates[*runnerUp])
             << ": " << formatSeconds(runnerUpCost);
    else
      remark << "; the only candidate";
  }
}

/// Multi-copy interleave as a choice of the search (docs/Search.md,
/// "Multi-copy interleave in the search"): for a plan without a pipeline
/// whose step has no copies yet, the layers' time with 1, 2 and 4 copies of
/// each rank's rows. A copy count must divide the rows a rank holds of one
/// micro-batch (`rowsPerRank`). The layers' compute is their ops' and
/// followers' at the copies' shapes (StrategyCostGraphBuilder::
/// getMicroBatchCompute, which prices an op at a slice of the batch, so a
/// smaller GEMM's lost efficiency counts), the optimizer updates once; their
/// communication is the reshards into layer ops (the tensor- and
/// sequence-parallel collectives; the data-parallel gradient reductions are
/// not the copies' to hide). Empty when there are no layers.
static SmallVector<MultiCopyPrice>
priceCopies(const Plan &plan, int64_t rowsPerRank, int64_t stepMicroBatches) {
  SmallVector<MultiCopyPrice> prices;
  const StrategyCostGraphBuilder &graph = *plan.builder;
  const std::vector<SearchNode> &nodes = graph.getNodes();
  bool recompute = plan.choice.recompute;
  double comm = 0;
  for (const SearchEdge &edge : graph.getEdges())
    if (nodes[edge.destination].layer >= 0)
      comm += (*edge.cost)[plan.solution.choice[edge.source] *
                               nodes[edge.destination].candidates.size() +
                           plan.solution.choice[edge.destination]];
  bool anyLayer = false;
  for (int64_t copies : {1, 2, 4}) {
    if (rowsPerRank % copies)
      continue;
    double compute = 0;
    for (auto [index, node] : llvm::enumerate(nodes)) {
      if (node.layer < 0)
        continue;
      anyLayer = true;
      unsigned candidate = plan.solution.choice[index];
      const CandidateCost &cost = node.costs[candidate];
      if (copies == 1) {
        compute +=
            cost.forwardSeconds * (recompute ? 2 : 1) + cost.followerSeconds;
        comm += cost.reshardSeconds;
        continue;
      }
      // getMicroBatchCompute returns one of `pieces` slices divided by the
      // step's own micro-batch count (a stage problem's convention).
      int64_t pieces = stepMicroBatches * copies;
      MicroBatchCompute slice =
          graph.getMicroBatchCompute(index, candidate, pieces);
      compute += double(pieces) * (slice.forwardSeconds * (recompute ? 2 : 1) +
                                   slice.followerSeconds) +
                 cost.updateSeconds;
    }
    if (!anyLayer)
      return {};
    prices.push_back(priceMultiCopies(compute, comm, copies));
  }
  return prices;
}

LogicalResult SearchStrategyPass::search() {
  ModuleOp module = getOperation();
  MLIRContext *context = module.getContext();
  bestFlatStepTime = kInfiniteCost;

  // 1. Cluster, entry and constraints.
  if (cluster.empty()) {
    module.emitError() << "dist-search-strategy needs a cluster: a preset ("
                       << llvm::join(getClusterPresetNames(), ", ")
                       << ") or a cluster spec file";
    return failure();
  }
  ValueOrError<ClusterSpec> spec = loadClusterSpec(cluster);
  if (!spec) {
    module.emitError() << spec.error();
    return failure();
  }
  auto func = module.lookupSymbol<func::FuncOp>(entryName);
  if (!func)
    func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func || func.isExternal()) {
    module.emitError() << "no entry function `" << entryName
                       << "` (nor `forward`) to search";
    return failure();
  }
  if (!func.getBody().hasOneBlock()) {
    func.emitOpError() << "must have a single block to be searched";
    return failure();
  }
  ShardingSpec sharding;
  std::string error = loadShardingSpec(strategyFile, parallelConfig, sharding);
  if (!error.empty()) {
    module.emitError() << error;
    return failure();
  }
  if (memoryLimitGiB < 0) {
    module.emitError() << "memory-limit: expected a value >= 0 (GiB), found "
                       << memoryLimitGiB.getValue();
    return failure();
  }
  double memoryLimit = memoryLimitGiB > 0
                           ? memoryLimitGiB * double(int64_t(1) << 30)
                           : double(spec->device.memoryBytes);

  // 2. Candidate meshes.
  std::optional<pipeline::ScheduleKind> scheduleKind =
      pipeline::parseScheduleKind(schedule);
  if (!scheduleKind) {
    module.emitError() << "schedule: expected `1f1b`, `gpipe` or "
                          "`interleaved-1f1b`, found `"
                       << schedule.getValue() << "`";
    return failure();
  }
  if (virtualStages < 0 ||
      (virtualStages > 1 &&
       *scheduleKind != pipeline::ScheduleKind::Interleaved1F1B)) {
    module.emitError() << "virtual-stages = " << virtualStages.getValue()
                       << ": expected 0 (the search chooses), 1, or more "
                          "chunks under schedule `interleaved-1f1b`";
    return failure();
  }
  if (auto error = ::loom::support::checkAtLeast(
          "devices", devices, 0, "0: from the mesh or the parallel config")) {
    module.emitError() << *error;
    return failure();
  }
  if (pipelineStages < 0 || microBatches < 0) {
    module.emitError() << "pipeline-stages and micro-batches: expected values "
                          ">= 0, found "
                       << pipelineStages.getValue() << " and "
                       << microBatches.getValue();
    return failure();
  }
  // The option wins unless it lets the search choose (0): then the
  // parallel config's `pipeline_stage`, when given, fixes S. Under the
  // default (1) the config's stages are the driver's business: loomc
  // divides the devices by them before the search, which then plans one
  // stage's sub-mesh.
  int64_t fixedStages = pipelineStages == 0 && sharding.pipelineStages > 1
                            ? sharding.pipelineStages
                            : int64_t(pipelineStages);
  int64_t fixedMicro = microBatches > 0 ? int64_t(microBatches)
                       : sharding.microBatches > 1 ? sharding.microBatches
                                                   : 0;
  // A step split into micro-batches already (loom-slice-micro-batches) is
  // priced as it is: it cannot be split again.
  if (int64_t split = getMicroBatchCount(func);
      split > 1 && fixedStages != 1) {
    if (fixedMicro > 0 && fixedMicro != split) {
      func.emitError() << "micro-batches = " << fixedMicro << " disagrees "
                       << "with @" << func.getSymName()
                       << ", which is split into " << split
                       << " micro-batches already";
      return failure();
    }
    fixedMicro = split;
  }
  SmallVector<MeshOp> meshOps(module.getOps<MeshOp>());
  if (meshOps.size() > 1) {
    meshOps[1].emitOpError() << "is a second mesh; the search expects one";
    return failure();
  }
  std::vector<MeshCandidate> candidates;
  std::string fixedMesh;
  if (std::string error = resolveMeshSpec(meshSpec, sharding, fixedMesh);
      !error.empty()) {
    module.emitError() << error;
    return failure();
  }
  if (!meshOps.empty() || !fixedMesh.empty()) {
    // A given mesh is the intra-stage mesh; pipelining only when asked.
    ValueOrError<Mesh> mesh = !meshOps.empty() ? meshOps[0].getMesh()
                                               : Mesh::parse(fixedMesh);
    if (!mesh) {
      if (!meshOps.empty())
        meshOps[0].emitOpError() << mesh.error();
      else
        module.emitError() << mesh.error();
      return failure();
    }
    candidates.push_back({std::max<int64_t>(fixedStages, 1), *mesh});
  } else if (devices > 0) {
    std::vector<int64_t> stageCounts;
    if (fixedStages > 0) {
      if (devices % fixedStages) {
        module.emitError() << "pipeline-stages = " << fixedStages
                           << " does not divide the " << devices.getValue()
                           << " devices";
        return failure();
      }
      stageCounts.push_back(fixedStages);
    } else {
      for (int64_t stages = 1; stages <= devices; ++stages)
        if (devices % stages == 0)
          stageCounts.push_back(stages);
    }
    // Long self-attention sequences add cp x tp and dp x cp meshes
    // (CandidateMeshes.h), after the dp x tp ones so that ties keep those.
    std::vector<int64_t> contextDegrees =
        getContextParallelDegrees(getRingSequenceLengths(func), devices);
    for (int64_t stages : stageCounts)
      for (const Mesh &mesh :
           enumerateMeshes(devices / stages, contextDegrees)) {
        // Tensor parallelism across nodes is never worth it once the
        // pipeline can take the model apart instead: prune it.
        std::optional<size_t> tp = mesh.findAxis("tp");
        if (fixedStages == 0 && stages > 1 && tp &&
            mesh.getAxis(*tp).size > spec->devicesPerNode)
          continue;
        candidates.push_back({stages, mesh});
      }
  } else {
    module.emitError() << "dist-search-strategy needs the devices: give "
                          "`devices`, `mesh`, a parallel config or a mesh op";
    return failure();
  }
  int64_t wanted = devices > 0 ? int64_t(devices)
                               : sharding.devices * std::max<int64_t>(
                                                        fixedStages, 1);
  // Each candidate's (per-stage) mesh is placed on the cluster alone below,
  // so the whole job, stages included, is checked against its size here: a
  // calibrated spec (one machine, `max_nodes` 1) must not get a plan for
  // more devices than it has.
  if (wanted > 0 && spec->maxNodes > 0 &&
      (wanted + spec->devicesPerNode - 1) / spec->devicesPerNode >
          spec->maxNodes) {
    module.emitError() << wanted << " devices do not fit cluster `"
                       << spec->name << "`: it has at most " << spec->maxNodes
                       << " node(s) of " << spec->devicesPerNode << " devices";
    return failure();
  }
  if (wanted > 0 && candidates.size() == 1 &&
      candidates[0].mesh.getNumDevices() * candidates[0].stages != wanted) {
    InFlightDiagnostic diag = module.emitError();
    diag << "mesh " << candidates[0].mesh.toString() << " has "
         << candidates[0].mesh.getNumDevices() << " devices";
    if (candidates[0].stages > 1)
      diag << " per stage (" << candidates[0].stages << " stages)";
    diag << ", not " << wanted;
    return failure();
  }
  FlatSymbolRefAttr meshRef =
      FlatSymbolRefAttr::get(context, meshOps.empty()
                                          ? StringRef("mesh")
                                          : meshOps[0].getSymName());

  // 3. Search every mesh and outer choice.
  Plan best;
  Block &body = func.getBody().front();
  bool hasOptimizer = llvm::any_of(
      body, [](Operation &op) { return isOptimizerUpdate(&op); });
  // Gradient accumulation without a pipeline: ZeRO-2/3 pay a reduce-scatter
  // per micro-batch.
  int64_t flatMicroBatches = getMicroBatchCount(func);
  // The global batch: dim 0 of the first data input.
  int64_t batch = 1;
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (type && type.getRank() > 0 &&
        func.getArgAttr(arg.getArgNumber(), kInputAttrName)) {
      batch = type.getDimSize(0);
      break;
    }
  }
  double smallestMemory = kInfiniteCost;
  // Why candidate meshes were passed over before memory was considered, so
  // that "nothing fits" names the real cause when memory is not it.
  std::vector<std::string> skipReasons;
  auto skip = [&](const std::string &meshName, const Twine &why) {
    std::string text = why.str();
    // The cost model's errors name the mesh already.
    if (!StringRef(text).starts_with("mesh "))
      text = "mesh " + meshName + ": " + text;
    skipReasons.push_back(text);
  };
  std::string smallestMesh;
  std::shared_ptr<const BatchDims> batchDims;
  // Why the user's micro-batch count ruled meshes out, for the error when
  // nothing is left.
  std::string microNote;
  // The layer count, once a cost graph has told it (stage counts above it
  // are skipped).
  int64_t knownLayers = -1;
  bool single = candidates.size() == 1;
  // A pipeline of more stages than the model has layers: an error when the
  // user asked for it (or it is the only candidate), else the candidate is
  // skipped. Checked before the cost graph is built when the layer count is
  // already known, and after it otherwise.
  enum class StageFit { Fits, Skip, Fail };
  auto checkStages = [&](int64_t stages, int64_t layers) {
    if (stages <= 1 || layers < 0 || stages <= layers)
      return StageFit::Fits;
    if (!single && fixedStages <= 0)
      return StageFit::Skip;
    module.emitError() << stages << " pipeline stages need at least "
                       << stages << " layers; the model has " << layers;
    return StageFit::Fail;
  };
  for (const MeshCandidate &candidate : candidates) {
    const Mesh &mesh = candidate.mesh;
    int64_t stages = candidate.stages;
    std::string meshName = mesh.toString();
    if (stages > 1)
      meshName = llvm::formatv("pp={0} x {1}", stages, meshName).str();
    StageFit fit = checkStages(stages, knownLayers);
    if (fit == StageFit::Fail)
      return failure();
    if (fit == StageFit::Skip) {
      skip(meshName, "more stages than layers");
      continue;
    }
    Layout::AxisList dataParallelAxes;
    if (sharding.dataParallelAxes)
      dataParallelAxes = *sharding.dataParallelAxes;
    else if (mesh.findAxis("dp"))
      dataParallelAxes = {"dp"};
    int64_t dataParallel = 1;
    bool axesExist = true;
    for (const std::string &axis : dataParallelAxes) {
      std::optional<size_t> found = mesh.findAxis(axis);
      axesExist &= found.has_value();
      if (found)
        dataParallel *= mesh.getAxis(*found).size;
    }
    if (!axesExist) {
      module.emitError() << "data-parallel axes name an axis mesh "
                         << mesh.toString() << " lacks";
      return failure();
    }
    bool divides = true;
    for (BlockArgument arg : body.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (type && type.getRank() > 0 &&
          func.getArgAttr(arg.getArgNumber(), kInputAttrName) &&
          type.getDimSize(0) % dataParallel != 0)
        divides = false;
    }
    if (!divides) {
      if (single) {
        module.emitError() << "mesh " << mesh.toString()
                           << ": the data-parallel axes (" << dataParallel
                           << " devices) do not divide the batch";
        return failure();
      }
      skip(meshName, llvm::formatv("the data-parallel axes ({0} devices) do "
                                   "not divide the batch",
                                   dataParallel));
      continue;
    }
    // Micro-batch counts: the divisors of the per-replica batch up to 256
    // (down to one sample per micro-batch), or the user's.
    std::vector<int64_t> microChoices;
    if (stages > 1) {
      int64_t perReplica = batch / dataParallel;
      if (fixedMicro > 0) {
        if (perReplica % fixedMicro) {
          microNote = llvm::formatv("; micro-batches = {0} does not divide "
                                    "the batch per replica ({1} on mesh {2})",
                                    fixedMicro, perReplica, mesh.toString())
                          .str();
          continue;
        }
        microChoices.push_back(fixedMicro);
      } else {
        for (int64_t micro = 1; micro <= std::min<int64_t>(perReplica, 256);
             ++micro)
          if (perReplica % micro == 0)
            microChoices.push_back(micro);
      }
    }
    ValueOrError<ClusterCostModel> model = ClusterCostModel::get(*spec, mesh);
    if (!model) {
      if (single) {
        module.emitError() << model.error();
        return failure();
      }
      skip(meshName, model.error());
      continue;
    }
    auto costModel = std::make_unique<ClusterCostModel>(*model);
    FailureOr<FixedStrategies> fixed =
        resolveFixedStrategies(func, mesh, meshRef, sharding);
    if (failed(fixed))
      return failure();
    auto fixedPtr = std::make_unique<FixedStrategies>(std::move(*fixed));
    auto builder = std::make_unique<StrategyCostGraphBuilder>(
        func, *costModel, *fixedPtr, dataParallelAxes);
    // Pipelined meshes price micro-batches at their shapes, from the
    // step's batch dims: analyzed once for all of them (a step split
    // already, the follow-up search's, needs none).
    if (stages > 1 && flatMicroBatches == 1) {
      if (!batchDims)
        batchDims = std::make_shared<const BatchDims>(BatchDims::analyze(func));
      builder->setBatchDims(batchDims);
    }
    if (failed(builder->analyzeNodes()))
      return failure();
    knownLayers = builder->hasLayers() ? builder->getNumLayers() : 0;
    fit = checkStages(stages, knownLayers);
    if (fit == StageFit::Fail)
      return failure();
    if (fit == StageFit::Skip) {
      skip(meshName, "more stages than layers");
      continue;
    }
    if (!single && !builder->usesEveryAxis()) {
      if (explain)
        module.emitRemark() << "mesh " << meshName
                            << ": skipped, an axis no op can use";
      skip(meshName, "an axis no op can split (no dim divides by its size)");
      continue;
    }

    // ZeRO stages: the config's when it names one, else every stage up to
    // its bound where there is an optimizer and a data-parallel group.
    // Stage 3 (parameters gathered per layer, docs/Search.md, "ZeRO
    // stages") is tried on pipelined meshes too: the stage assignment
    // charges each stage its two-layer window of gathered copies
    // (pipeline::getGatherWindow).
    std::vector<int> zeroChoices = {0};
    if (sharding.zeroFixed)
      zeroChoices = {dataParallel > 1 && hasOptimizer ? sharding.optimizerShard
                                                      : 0};
    else if (hasOptimizer && dataParallel > 1)
      for (int stage = 1; stage <= std::min(3, sharding.zeroMaxStage); ++stage)
        zeroChoices.push_back(stage);
    // A config that asks for recompute gets it (the partition pipeline
    // recomputes every layer then), so only plans that pay for it compete.
    std::vector<bool> recomputeChoices = {false};
    if (builder->hasLayers())
      recomputeChoices = sharding.recompute ? std::vector<bool>{true}
                                            : std::vector<bool>{false, true};

    // Bound before the edges (most of the analysis): no plan of this mesh
    // costs less than its nodes' cheapest candidates, spread over the
    // stages, under the cheapest outer choice. A mesh whose bound cannot
    // beat the best plan so far could never be chosen (ties keep the
    // earlier plan), so skipping it changes nothing but the time.
    if (best.builder) {
      double bound = kInfiniteCost;
      for (int zero : zeroChoices)
        for (bool recompute : recomputeChoices)
          bound = std::min(bound, builder->getNodeCostLowerBound(StrategyChoice{
                                      zero, recompute, flatMicroBatches}));
      bound /= double(stages);
      if (bound >= best.stepTime) {
        if (explain)
          module.emitRemark() << "mesh " << meshName << ": skipped, its "
                              << "nodes alone cost "
                              << formatSeconds(bound) << " per step, no "
                              << "better than " << formatSeconds(best.stepTime);
        continue;
      }
    }
    builder->analyzeEdges();

    std::optional<Plan> meshBest;
    std::vector<std::vector<unsigned>> layerHint = builder->getLayerHint();
    std::optional<LayerGroups> groups;
    if (stages > 1)
      groups = getLayerGroups(*builder);
    // How the layered solve went on this mesh, for `explain`.
    std::string layeredNote;
    // The best pipeline split of `solution` over the micro-batch choices.
    auto splitStages = [&](const SearchSolution &solution,
                           const StrategyChoice &choice, std::string &whyNot,
                           double limit) -> std::optional<PipelinePlan> {
      std::optional<PipelinePlan> found;
      // Chunks per stage: the option's, or (0) every count that splits the
      // layers evenly, 1 (the plain schedule) included unless the
      // interleaved schedule was asked for. Each V > 1 is priced by the
      // interleaved simulation: a bubble of (S - 1) / V chunk units against
      // V times the hops.
      int64_t numLayers = int64_t(groups->layerIds.size());
      std::vector<int64_t> virtualChoices;
      bool interleavedOnly =
          *scheduleKind == pipeline::ScheduleKind::Interleaved1F1B;
      // `interleaved-1f1b` with the option's default (1) lets it choose.
      if (virtualStages > 1 || (virtualStages == 1 && !interleavedOnly)) {
        virtualChoices.push_back(virtualStages);
      } else {
        if (!interleavedOnly)
          virtualChoices.push_back(1);
        for (int64_t v = 2; stages * v <= numLayers; ++v)
          if (numLayers % (stages * v) == 0)
            virtualChoices.push_back(v);
      }
      for (int64_t chunks : virtualChoices)
        for (int64_t micro : microChoices) {
          pipeline::StageProblem problem =
              getStageProblem(*builder, *groups, solution.choice, choice, micro,
                              mesh.getNumDevices());
          problem.stages = stages;
          problem.schedule =
              chunks > 1        ? pipeline::ScheduleKind::Interleaved1F1B
              : interleavedOnly ? pipeline::ScheduleKind::OneFOneB
                                : *scheduleKind;
          problem.virtualStages = chunks;
          problem.memoryLimit = limit;
          pipeline::StageAssignment assignment =
              pipeline::assignStages(problem);
          LLVM_DEBUG(llvm::dbgs()
                     << meshName << " zero=" << choice.zeroStage
                     << " recompute=" << choice.recompute << " M=" << micro
                     << ": "
                     << (assignment.feasible
                             ? formatSeconds(assignment.stepSeconds)
                             : assignment.error)
                     << "\n");
          if (!assignment.feasible) {
            whyNot = assignment.error;
            continue;
          }
          if (found && assignment.stepSeconds >= found->assignment.stepSeconds)
            continue;
          found = PipelinePlan{stages,           micro,
                               problem.schedule, std::move(assignment),
                               groups->layerIds, chunks};
        }
      return found;
    };
    std::string pipelineWhyNot;
    // Per recompute choice, whether a lower ZeRO stage's unconstrained plan
    // fits: a higher stage then cannot beat it (each stage's nodes cost no
    // less than the one below's, and ties keep the earlier plan), so a flat
    // mesh skips it.
    std::set<bool> lowerStageFits;
    for (int zero : zeroChoices) {
      for (bool recompute : recomputeChoices) {
        if (zero >= 2 && stages == 1 && !sharding.zeroFixed &&
            lowerStageFits.count(recompute))
          continue;
        // A pipelined plan prices its micro-batches in getStageProblem.
        StrategyChoice choice{zero, recompute,
                              stages > 1 ? int64_t(1) : flatMicroBatches};
        CostGraph graph = builder->build(choice);
        // Branch and bound: the unconstrained optimum is a lower bound on
        // the constrained one (the solver is exact without a limit), so a
        // choice whose bound cannot beat the best plan so far is skipped,
        // and one whose unconstrained plan fits needs no Lagrangian walk.
        // Over S stages the bound is the whole work spread evenly.
        SearchOptions unlimited;
        unlimited.layers = layerHint;
        SearchSolution free = solveByElimination(graph, unlimited);
        if (layerHint.empty())
          layeredNote = "no repeated layers";
        else if (free.layered)
          layeredNote = llvm::formatv("layered solve ({0} layers of {1} nodes)",
                                      layerHint.size(), layerHint[0].size())
                            .str();
        else
          layeredNote = "plain solve (layers not chained: " +
                        free.layeredFallback + ")";
        double bestSoFar = kInfiniteCost;
        if (meshBest)
          bestSoFar = meshBest->stepTime;
        if (best.builder)
          bestSoFar = std::min(bestSoFar, best.stepTime);
        if (stages > 1) {
          if (free.choice.empty())
            continue;
          if (free.cost / double(stages) >= bestSoFar) {
            pipelineWhyNot = llvm::formatv(
                "skipped, the work over {0} stages ({1}) cannot beat {2}",
                stages, formatSeconds(free.cost / double(stages)),
                formatSeconds(bestSoFar));
            continue;
          }
          std::optional<PipelinePlan> split =
              splitStages(free, choice, pipelineWhyNot, memoryLimit);
          SearchSolution solution = free;
          // The fastest intra-stage plan split without a memory limit
          // bounds what a leaner one can reach: when even that cannot beat
          // the best plan, the (costly) re-solves below are skipped.
          if (!split) {
            std::string ignored;
            std::optional<PipelinePlan> unlimitedSplit =
                splitStages(free, choice, ignored, kInfiniteCost);
            if (!unlimitedSplit ||
                unlimitedSplit->assignment.stepSeconds >= bestSoFar) {
              if (unlimitedSplit)
                pipelineWhyNot = llvm::formatv(
                    "skipped, {0} per step even without a memory limit, no "
                    "better than {1}",
                    formatSeconds(unlimitedSplit->assignment.stepSeconds),
                    formatSeconds(bestSoFar));
              continue;
            }
          }
          // Spread over S stages the model has about S times the memory
          // of one: a leaner intra-stage plan may split where the fastest
          // did not. The whole-model graph counts every layer's activations
          // once and the stages unevenly (the first keeps more micro-batches
          // in flight, and the embedding), hence the margins.
          for (double margin : {0.75, 0.5}) {
            if (split)
              break;
            SearchOptions options;
            options.memoryLimit = memoryLimit * double(stages) * margin;
            options.layers = layerHint;
            solution = solveByElimination(graph, options);
            if (!solution.choice.empty())
              split = splitStages(solution, choice, pipelineWhyNot,
                                  memoryLimit);
          }
          if (split && split->assignment.stepSeconds >= bestSoFar)
            pipelineWhyNot = llvm::formatv(
                "{0} per step at best ({1} micro-batches), no better than {2}",
                formatSeconds(split->assignment.stepSeconds),
                split->microBatches, formatSeconds(bestSoFar));
          if (!split || split->assignment.stepSeconds >= bestSoFar)
            continue;
          double step = split->assignment.stepSeconds;
          meshBest = Plan{nullptr, nullptr, nullptr, choice, solution,
                          std::move(split), step};
          continue;
        }
        if (zero >= 1 && !free.choice.empty() && free.memory <= memoryLimit)
          lowerStageFits.insert(recompute);
        if (!free.choice.empty() && free.cost >= bestSoFar &&
            free.memory <= memoryLimit)
          continue;
        SearchSolution solution = free;
        if (free.choice.empty() || free.memory > memoryLimit) {
          if (!free.choice.empty() && free.cost >= bestSoFar)
            continue;
          SearchOptions options;
          options.memoryLimit = memoryLimit;
          options.layers = layerHint;
          solution = solveByElimination(graph, options);
        }
        LLVM_DEBUG(llvm::dbgs()
                   << mesh.toString() << " zero=" << zero
                   << " recompute=" << recompute << ": "
                   << formatSeconds(solution.cost) << ", "
                   << solution.memory / double(1 << 30) << " GiB\n");
        if (solution.choice.empty()) {
          // Why nothing fits: the least memory any plan needs.
          if (!free.choice.empty() && free.memory < smallestMemory) {
            smallestMemory = free.memory;
            smallestMesh = mesh.toString();
          }
          continue;
        }
        if (meshBest && solution.cost >= meshBest->stepTime)
          continue;
        meshBest = Plan{nullptr, nullptr, nullptr, choice, solution,
                        std::nullopt, solution.cost};
      }
    }
    if (!meshBest) {
      if (explain && stages > 1 && !pipelineWhyNot.empty())
        module.emitRemark() << "mesh " << meshName << ": " << pipelineWhyNot;
      continue;
    }
    if (explain) {
      const SearchCacheStats &stats = builder->getCacheStats();
      double memory = meshBest->solution.memory;
      std::string pipelineNote;
      if (meshBest->pipeline) {
        const pipeline::StageAssignment &assignment =
            meshBest->pipeline->assignment;
        memory = 0;
        for (const pipeline::StageInfo &stage : assignment.stages)
          memory = std::max(memory, stage.memoryBytes);
        pipelineNote =
            llvm::formatv(
                "; {0} micro-batches, {1}{3}, bubble {2}",
                meshBest->pipeline->microBatches,
                pipeline::getScheduleKindName(meshBest->pipeline->schedule),
                formatSeconds(assignment.bubbleSeconds),
                meshBest->pipeline->virtualStages > 1
                    ? " x " +
                          std::to_string(meshBest->pipeline->virtualStages) +
                          " chunks"
                    : std::string())
                .str();
      }
      module.emitRemark() << llvm::formatv(
          "mesh {0}: {1} per step, {2:F3} GiB per device (zero={3}, "
          "recompute={4}); {5} nodes, {6} edges, signature cache hit rate "
          "{7:F1}%; {8}{9}",
          meshName, formatSeconds(meshBest->stepTime),
          memory / double(int64_t(1) << 30), meshBest->choice.zeroStage,
          meshBest->choice.recompute ? "on" : "off", builder->getNodes().size(),
          builder->getEdges().size(), 100 * stats.getHitRate(), layeredNote,
          pipelineNote);
    }
    if (stages == 1)
      bestFlatStepTime = std::min(bestFlatStepTime, meshBest->stepTime);
    if (best.builder && meshBest->stepTime >= best.stepTime)
      continue;
    best = Plan{std::move(builder),        std::move(fixedPtr),
                std::move(costModel),      meshBest->choice,
                meshBest->solution,        std::move(meshBest->pipeline),
                meshBest->stepTime};
  }

  if (!best.builder) {
    InFlightDiagnostic diag = module.emitError();
    diag << llvm::formatv("no plan fits in {0:F3} GiB per device",
                          memoryLimit / double(int64_t(1) << 30));
    if (std::isfinite(smallestMemory))
      diag << llvm::formatv(
                  ": the smallest needs {0:F3} GiB (mesh {1}); raise "
                  "--memory-limit or add devices",
                  smallestMemory / double(int64_t(1) << 30), smallestMesh)
           << describeLargestArguments(func);
    else
      diag << " on any mesh of " << devices.getValue() << " devices";
    diag << microNote;
    // Memory was not the reason: say what was.
    if (!std::isfinite(smallestMemory) && !skipReasons.empty()) {
      diag << "; no candidate mesh could hold the model at all: ";
      constexpr size_t kShown = 6;
      for (size_t i = 0; i < skipReasons.size() && i < kShown; ++i)
        diag << (i ? "; " : "") << skipReasons[i];
      if (skipReasons.size() > kShown)
        diag << "; and " << skipReasons.size() - kShown << " more";
    }
    return failure();
  }

  firstStepTime = best.stepTime;

  // 4. Write the plan.
  const Mesh &mesh = best.model->getMesh();
  OpBuilder builder(context);
  if (meshOps.empty()) {
    builder.setInsertionPointToStart(module.getBody());
    std::vector<int64_t> shape;
    std::vector<StringRef> names;
    for (const Mesh::Axis &axis : mesh.getAxes()) {
      shape.push_back(axis.size);
      names.push_back(axis.name);
    }
    MeshOp::create(builder, module.getLoc(), builder.getStringAttr("mesh"),
                   builder.getDenseI64ArrayAttr(shape),
                   builder.getStrArrayAttr(names));
  }
  double compute = 0, comm = 0;
  double parameters = 0, gradients = 0, optimizerStates = 0, activations = 0,
         transients = 0;
  const std::vector<SearchNode> &nodes = best.builder->getNodes();
  // With a pipeline the memory breakdown is the fullest stage's (its
  // activations times its micro-batches in flight, of 1/M of the batch
  // each) and compute and communication are the slowest stage's.
  std::vector<int64_t> nodeStage(nodes.size(), 0);
  int64_t memoryStage = 0, timeStage = 0;
  double activationScale = 1, transientScale = 1;
  double stepTime = best.solution.cost, bubble = 0;
  double memoryPerDevice = best.solution.memory;
  if (best.pipeline) {
    const pipeline::StageAssignment &assignment = best.pipeline->assignment;
    LayerGroups groups = getLayerGroups(*best.builder);
    int64_t numStages = int64_t(assignment.stages.size());
    for (size_t index = 0; index < nodes.size(); ++index) {
      int64_t group = groups.nodeGroup[index];
      int64_t stage = group < 0 ? 0 : numStages - 1;
      for (int64_t s = 0; s < numStages; ++s)
        if (group >= assignment.stages[s].firstLayer &&
            group < assignment.stages[s].endLayer)
          stage = s;
      nodeStage[index] = stage;
    }
    for (int64_t s = 0; s < numStages; ++s) {
      const pipeline::StageInfo &stage = assignment.stages[s];
      const pipeline::StageInfo &fullest = assignment.stages[memoryStage];
      const pipeline::StageInfo &slowest = assignment.stages[timeStage];
      if (stage.memoryBytes > fullest.memoryBytes)
        memoryStage = s;
      if (stage.times.forward + stage.times.backward >
          slowest.times.forward + slowest.times.backward)
        timeStage = s;
    }
    double micro = double(best.pipeline->microBatches);
    activationScale =
        double(assignment.stages[memoryStage].inFlight) / micro;
    transientScale = 1 / micro;
    stepTime = assignment.stepSeconds;
    bubble = assignment.bubbleSeconds;
    memoryPerDevice = assignment.stages[memoryStage].memoryBytes;
  }
  // Multi-copy interleave (loom-interleave-copies): the layers' ops of
  // the copies, whose compute and communication bound what the copies
  // could hide behind each other (the slowest stage's, with a pipeline).
  int64_t copies = 1;
  for (const SearchNode &node : nodes)
    if (auto copy = node.op->getAttrOfType<IntegerAttr>(kCopyAttrName))
      copies = std::max(copies, copy.getInt() + 1);
  auto isCopyNode = [&](size_t index) {
    return copies > 1 && nodes[index].layer >= 0 &&
           nodes[index].op->hasAttr(kCopyAttrName);
  };
  double copyCompute = 0, copyComm = 0;
  // ZeRO-3 on a pipeline: the fullest stage's layers' whole parameters, of
  // which the stage keeps two layers' live (pipeline::getGatherWindow).
  bool pipelineGathers = best.pipeline && best.choice.zeroStage >= 3;
  std::map<int64_t, double> layerGathered;
  for (auto [index, node] : llvm::enumerate(nodes)) {
    unsigned candidate = best.solution.choice[index];
    node.op->setAttr(kStrategyAttrName,
                     StrategyAttr::get(meshRef, node.candidates[candidate]));
    const CandidateCost &cost = node.costs[candidate];
    bool countMemory = !best.pipeline || nodeStage[index] == memoryStage;
    bool countTime = !best.pipeline || nodeStage[index] == timeStage;
    bool recomputed = best.choice.recompute && node.layer >= 0;
    double nodeCompute = cost.forwardSeconds + cost.followerSeconds;
    if (recomputed)
      nodeCompute += cost.forwardSeconds;
    if (countMemory) {
      if (!best.pipeline)
        parameters +=
            best.builder->getNodeParameterBytes(index, candidate, best.choice);
      else if (pipelineGathers && node.layer >= 0) {
        // The shard; the whole copies count per layer, in the window below.
        parameters += cost.zeroParameterBytes;
        layerGathered[node.layer] += cost.parameterBytes;
      } else if (pipelineGathers)
        parameters += cost.zeroParameterBytes + cost.parameterBytes;
      else
        parameters += cost.getParameterBytes(best.choice.zeroStage);
      gradients += cost.getGradientBytes(best.choice.zeroStage);
      optimizerStates += cost.getOptimizerBytes(best.choice.zeroStage);
      activations += activationScale * best.builder->getNodeActivationBytes(
                                           index, candidate, best.choice);
      transients += transientScale * best.builder->getNodeTransientBytes(
                                         index, candidate, best.choice);
    }
    if (countTime) {
      double nodeComm =
          best.builder->getNodeCost(index, candidate, best.choice) -
          nodeCompute;
      compute += nodeCompute;
      comm += nodeComm;
      if (isCopyNode(index)) {
        copyCompute += nodeCompute;
        copyComm += nodeComm;
      }
    }
  }
  if (pipelineGathers) {
    double largest = 0, second = 0;
    for (auto [layer, bytes] : layerGathered) {
      if (bytes > largest)
        second = std::exchange(largest, bytes);
      else
        second = std::max(second, bytes);
    }
    parameters += largest + second;
  }
  for (const SearchEdge &edge : best.builder->getEdges())
    if (!best.pipeline || nodeStage[edge.destination] == timeStage) {
      double edgeComm =
          (*edge.cost)[best.solution.choice[edge.source] *
                           nodes[edge.destination].candidates.size() +
                       best.solution.choice[edge.destination]];
      comm += edgeComm;
      // The reshards into a copy's layer op are that copy's collectives.
      if (isCopyNode(edge.destination))
        copyComm += edgeComm;
    }

  // The data-parallel gradient reductions the backward hides, by the
  // overlap rule (docs/CostModel.md, "Overlapped gradient reduction") with
  // the default bucket cap of dist-bucket-gradient-reductions. Only the
  // last micro-batch's backward runs after the gradients are complete, so
  // it alone can hide them; a pipelined plan's are those of its slowest
  // stage (whose once-per-step synchronization the step time adds).
  // ZeRO-2 without a pipeline buckets its reduce-scatters too: with one
  // micro-batch by the same rule, with more each micro-batch's behind the
  // next one's compute (estimateAccumulatedReduceScatterOverlap). ZeRO-3's
  // gathers and pipelined ZeRO-2 are priced blocking.
  bool accumulatedScatters = best.choice.zeroStage == 2 && !best.pipeline &&
                             best.choice.microBatches > 1;
  if (best.choice.zeroStage <= 1 ||
      (best.choice.zeroStage == 2 && !best.pipeline)) {
    std::vector<GradientSlot> slots;
    int64_t microBatches =
        best.pipeline ? best.pipeline->microBatches : best.choice.microBatches;
    double micro = double(std::max<int64_t>(microBatches, 1));
    // Under accumulation: one micro-batch's reduce-scatters and compute.
    double reduce = 0, compute = 0;
    for (size_t index = nodes.size(); index-- > 0;) {
      if (best.pipeline && nodeStage[index] != timeStage)
        continue;
      const SearchNode &node = nodes[index];
      const CandidateCost &cost = node.costs[best.solution.choice[index]];
      double backward = cost.followerSeconds;
      if (best.choice.recompute && node.layer >= 0)
        backward += cost.forwardSeconds;
      double sync = cost.getSyncSeconds(best.choice.zeroStage, microBatches);
      if (accumulatedScatters) {
        // The reduce-scatters follow the accumulation rule; the rest of
        // the synchronization (after the update) the bucket rule.
        sync -= cost.zeroReduceSeconds * micro;
        reduce += cost.zeroReduceSeconds;
        compute += (cost.forwardSeconds + backward) / micro;
      }
      slots.push_back({backward / micro, sync, cost.gradientBytes});
    }
    constexpr double kBucketCapMB = 25;
    GradientOverlap overlap =
        estimateGradientOverlap(slots, kBucketCapMB * 1024 * 1024);
    if (accumulatedScatters) {
      GradientOverlap scatters = estimateAccumulatedReduceScatterOverlap(
          reduce, compute, microBatches);
      overlap.syncSeconds += scatters.syncSeconds;
      overlap.exposedSeconds += scatters.exposedSeconds;
      overlap.buckets += scatters.buckets;
    }
    module->setAttr(
        kCommOverlapAttrName,
        builder.getDictionaryAttr(
            {builder.getNamedAttr("sync_s",
                                  builder.getF64FloatAttr(overlap.syncSeconds)),
             builder.getNamedAttr(
                 "exposed_s", builder.getF64FloatAttr(overlap.exposedSeconds)),
             builder.getNamedAttr("buckets",
                                  builder.getI64IntegerAttr(overlap.buckets)),
             builder.getNamedAttr("bucket_cap_mb",
                                  builder.getF64FloatAttr(kBucketCapMB))}));
  }

  // The cluster, so dist-lower-reshards prices chains as the search did.
  // On one line: the printed spec is indented for people, and no string in
  // it holds a line break, so dropping each break and its indent is safe.
  std::string printedCluster = printClusterSpec(*spec), clusterJson;
  for (StringRef line : llvm::split(printedCluster, '\n'))
    clusterJson += line.ltrim(' ').str();
  module->setAttr(kClusterAttrName, builder.getStringAttr(clusterJson));
  module->setAttr(kPlanAttrName,
                  PlanAttr::get(builder.getContext(), best.choice.zeroStage,
                                best.choice.recompute,
                                best.pipeline ? stepTime : compute + comm,
                                compute, comm, bubble, int64_t(memoryPerDevice),
                                best.builder->getModelFlops()));
  if (best.pipeline)
    writePipelineAttr(module, *best.pipeline);
  // What the copies could hide: reported, not subtracted from the step
  // (the cost model has no overlap, and no backend overlaps yet).
  module->removeAttr(kMultiCopyAttrName);
  if (copies > 1)
    module->setAttr(
        kMultiCopyAttrName,
        builder.getDictionaryAttr(
            {builder.getNamedAttr("copies", builder.getI64IntegerAttr(copies)),
             builder.getNamedAttr(
                 "hidden_comm_s",
                 builder.getF64FloatAttr(getMultiCopyHiddenSeconds(
                     copyCompute, copyComm, copies))),
             builder.getNamedAttr("layer_comm_s",
                                  builder.getF64FloatAttr(copyComm)),
             builder.getNamedAttr("layer_compute_s",
                                  builder.getF64FloatAttr(copyCompute))}));
  // Multi-copy interleave as the search's choice, where the config turns
  // sequence parallelism on over a tensor-parallel axis and the step has no
  // copies yet: the cheapest copy count and what it predicts.
  module->removeAttr(kMultiCopyChoiceAttrName);
  std::optional<size_t> tpAxis = mesh.findAxis("tp");
  if (copies == 1 && !best.pipeline && sharding.sequenceParallel && tpAxis &&
      mesh.getAxis(*tpAxis).size > 1) {
    int64_t dataParallel = 1;
    Layout::AxisList dataAxes = sharding.dataParallelAxes
                                    ? *sharding.dataParallelAxes
                                    : Layout::AxisList{"dp"};
    for (const std::string &axis : dataAxes)
      if (std::optional<size_t> found = mesh.findAxis(axis))
        dataParallel *= mesh.getAxis(*found).size;
    int64_t micro = std::max<int64_t>(flatMicroBatches, 1);
    int64_t rows =
        batch % (dataParallel * micro) ? 0 : batch / (dataParallel * micro);
    SmallVector<MultiCopyPrice> prices = rows > 0
                                             ? priceCopies(best, rows, micro)
                                             : SmallVector<MultiCopyPrice>{};
    if (!prices.empty()) {
      const MultiCopyPrice &chosen = chooseMultiCopies(prices);
      double oneCopy = prices.front().getLayerSeconds();
      SmallVector<Attribute> priced;
      for (const MultiCopyPrice &price : prices)
        priced.push_back(builder.getDictionaryAttr(
            {builder.getNamedAttr("copies",
                                  builder.getI64IntegerAttr(price.copies)),
             builder.getNamedAttr(
                 "compute_s", builder.getF64FloatAttr(price.computeSeconds)),
             builder.getNamedAttr(
                 "exposed_comm_s",
                 builder.getF64FloatAttr(price.exposedCommSeconds))}));
      module->setAttr(
          kMultiCopyChoiceAttrName,
          builder.getDictionaryAttr(
              {builder.getNamedAttr("copies",
                                    builder.getI64IntegerAttr(chosen.copies)),
               builder.getNamedAttr(
                   "step_time_s",
                   builder.getF64FloatAttr(best.solution.cost - oneCopy +
                                           chosen.getLayerSeconds())),
               builder.getNamedAttr("priced", builder.getArrayAttr(priced))}));
    }
  }
  // The memory breakdown, for reports and the plan JSON.
  module->setAttr(
      kMemoryAttrName,
      builder.getDictionaryAttr(
          {builder.getNamedAttr("activations",
                                builder.getI64IntegerAttr(activations)),
           builder.getNamedAttr("gradients",
                                builder.getI64IntegerAttr(gradients)),
           builder.getNamedAttr("optimizer_states",
                                builder.getI64IntegerAttr(optimizerStates)),
           builder.getNamedAttr("parameters",
                                builder.getI64IntegerAttr(parameters)),
           builder.getNamedAttr("transients",
                                builder.getI64IntegerAttr(transients))}));
  if (explain)
    explainNodes(best);
  return success();
}

//===----------------------------------------------------------------------===//
// Follow-ups: fitting the limit by liveness, splitting into micro-batches
//===----------------------------------------------------------------------===//

void SearchStrategyPass::runOnOperation() {
  // A pipelined plan may split the step into micro-batches: keep the
  // one-micro-batch step as it is before the search writes its strategies
  // (which the search again would take as the user's). Under
  // `fit-liveness` only a plan without a pipeline is measured, so a
  // pipelined one is split alike.
  OwningOpRef<ModuleOp> pristine;
  if (handConfigs)
    pristine = cast<ModuleOp>(getOperation()->clone());
  OwningOpRef<func::FuncOp> unsplit;
  auto step = getOperation().lookupSymbol<func::FuncOp>("train_step");
  if (splitStep && pipelineStages != 1 && step &&
      !step.isExternal() && getStepCounterIndex(step) &&
      getMicroBatchCount(step) == 1)
    unsplit = step.clone();
  if (fitLiveness ? failed(searchFittingLiveness()) : failed(search()))
    return signalPassFailure();
  if (unsplit && failed(splitForMicroBatches(std::move(unsplit))))
    return signalPassFailure();
  if (pristine && failed(compareHandConfigs(*pristine)))
    return signalPassFailure();
}

/// Megatron-LM's knobs as an expert sets them: tensor parallelism t inside
/// a node, p pipeline stages (powers of two up to the layers), d = devices
/// / (t p) replicas dividing the batch, one sample per micro-batch (M =
/// batch / d, at most 256; none without a pipeline). Each is given to a
/// search as the parallel config Loom reads (mesh, Megatron's column/row
/// linears, vocab-parallel embedding and head fixed; stages and
/// micro-batches fixed; ZeRO and recompute left to the search: the expert
/// gets the cheaper) without splitting the step, so it is priced as the
/// first search priced the chosen plan.
LogicalResult SearchStrategyPass::compareHandConfigs(ModuleOp pristine) {
  ModuleOp module = getOperation();
  if (devices <= 0 || !std::isfinite(firstStepTime))
    return success();
  ValueOrError<ClusterSpec> spec = loadClusterSpec(cluster);
  auto step = pristine.lookupSymbol<func::FuncOp>(entryName);
  if (!spec || !step || step.isExternal())
    return success();
  int64_t batch = 0;
  std::set<int64_t> layerIds;
  for (BlockArgument arg : step.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!batch && type && type.getRank() > 0 &&
        step.getArgAttr(arg.getArgNumber(), kInputAttrName))
      batch = type.getDimSize(0);
    if (auto param = step.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                                      kParamAttrName))
      if (int64_t layer = getLayerIndex(param.getName()); layer >= 0)
        layerIds.insert(layer);
  }
  int64_t layers = std::max<int64_t>(1, layerIds.size());
  int64_t n = devices;
  std::optional<std::string> bestName;
  double bestTime = kInfiniteCost;
  int64_t priced = 0;
  MLIRContext *context = module.getContext();
  for (int64_t t : {1, 2, 4, 8}) {
    if (t > spec->devicesPerNode || n % t)
      continue;
    for (int64_t p = 1; p <= std::min(layers, n / t); p *= 2) {
      if ((n / t) % p)
        continue;
      int64_t d = n / (t * p);
      if (!batch || batch % d)
        continue;
      int64_t micro = p > 1 ? batch / d : 1;
      if (micro > 256)
        continue;
      std::string config = llvm::formatv(
          " {{\"data_parallel\": {0}, \"model_parallel\": {1}}", d, t);
      OpBuilder builder(module.getBodyRegion());
      builder.setInsertionPointToEnd(module.getBody());
      auto trial = cast<ModuleOp>(builder.clone(*pristine));
      OpPassManager pm(ModuleOp::getOperationName());
      auto search = std::make_unique<SearchStrategyPass>();
      search->copyOptionValuesFrom(this);
      search->fitLiveness = false;
      search->splitStep = false;
      search->handConfigs = false;
      search->explain = false;
      search->devices = 0;
      search->meshSpec = "";
      search->strategyFile = "";
      search->parallelConfig = config;
      search->pipelineStages = p;
      search->microBatches = p > 1 ? micro : 0;
      pm.addPass(std::move(search));
      LogicalResult ran = success();
      {
        ScopedDiagnosticHandler silence(
            context, [](Diagnostic &) { return success(); });
        ran = runPipeline(pm, trial);
      }
      if (succeeded(ran))
        if (auto plan = trial->getAttrOfType<PlanAttr>(kPlanAttrName)) {
          ++priced;
          if (plan.getStepTime() < bestTime) {
            bestTime = plan.getStepTime();
            bestName = llvm::formatv("t={0} p={1} d={2} M={3}{4}", t, p, d,
                                     micro, plan.getRecompute()
                                                ? " recompute"
                                                : "")
                           .str();
          }
        }
      trial.erase();
    }
  }
  if (!bestName)
    return success();
  Builder b(context);
  module->setAttr(
      kHandConfigAttrName,
      b.getDictionaryAttr(
          {b.getNamedAttr("config", b.getStringAttr(*bestName)),
           b.getNamedAttr("priced", b.getI64IntegerAttr(priced)),
           b.getNamedAttr("searched_step_time_s",
                          b.getF64FloatAttr(firstStepTime)),
           b.getNamedAttr("step_time_s", b.getF64FloatAttr(bestTime))}));
  return success();
}

std::unique_ptr<SearchStrategyPass> SearchStrategyPass::cloneSearch() const {
  auto pass = std::make_unique<SearchStrategyPass>();
  pass->copyOptionValuesFrom(this);
  pass->fitLiveness = false;
  pass->splitStep = false;
  return pass;
}

/// The largest peak live bytes of the functions of a partitioned module,
/// over its pipeline stages.
static int64_t getPartitionedPeak(ModuleOp module) {
  FailureOr<SmallVector<std::optional<int64_t>>> stages = getStageList(module);
  int64_t peak = 0;
  if (failed(stages))
    return peak;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      for (std::optional<int64_t> stage : *stages)
        peak = std::max(peak, analyzeMemory(func, stage).getPeak());
  return peak;
}

/// The search prices memory per op (parameters, gradients, optimizer
/// states, activations kept at the layouts the backward reads them in, the
/// transients of the ops outside the layers; docs/Search.md, "Memory"), an
/// additive model of a liveness peak. So a plan without a pipeline is
/// checked by the liveness analysis of the per-rank program it yields (the
/// partition pipeline run on a copy): while that exceeds the limit, the
/// search runs again (quietly) with its limit scaled by limit / peak, a few
/// rounds at most, and the first plan that fits is taken. The model is not
/// exact, so this can fail: then the unscaled plan is kept and a warning
/// gives both numbers. A pipelined plan is taken as the model prices it
/// (docs/Pipeline.md): its stages are partitioned later, by the pipeline
/// phase. Each round searches the module itself (the whole space when the
/// stages are left to the search) and only a copy of its result is
/// partitioned, so a plan that fits costs one search. `dist.memory_fit`
/// records the rounds for the report.
LogicalResult SearchStrategyPass::searchFittingLiveness() {
  ModuleOp module = getOperation();
  MLIRContext *context = module.getContext();
  ValueOrError<ClusterSpec> spec = loadClusterSpec(cluster);
  if (!spec)
    return module.emitError() << spec.error();
  constexpr double kGiB = double(int64_t(1) << 30);
  double limit = memoryLimitGiB > 0 ? double(memoryLimitGiB)
                                    : double(spec->device.memoryBytes) / kGiB;
  PartitionPipelineOptions partition;
  partition.assignment.entryName = entryName;
  partition.assignment.strategyFile = strategyFile;
  partition.assignment.parallelConfig = parallelConfig;

  // The module before any search, to start each later round from.
  OwningOpRef<ModuleOp> pristine = cast<ModuleOp>(module->clone());
  auto restore = [&]() {
    module.getBody()->clear();
    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    for (Operation &op : pristine->getBody()->getOperations())
      builder.clone(op);
    module->setAttrs((*pristine)->getAttrDictionary());
  };

  constexpr int kRounds = 4;
  double searchLimit = limit, firstPeakGiB = 0;
  std::optional<double> fitted;
  bool pipelined = false;
  int round = 0;
  for (; round < kRounds; ++round) {
    if (round > 0)
      restore();
    OpPassManager searchPm(ModuleOp::getOperationName());
    std::unique_ptr<SearchStrategyPass> roundSearch = cloneSearch();
    roundSearch->memoryLimitGiB = searchLimit;
    // Only the first round speaks (remarks included): later rounds run
    // under a limit the user never gave.
    if (round > 0)
      roundSearch->explain = false;
    SearchStrategyPass *roundPass = roundSearch.get();
    searchPm.addPass(std::move(roundSearch));
    LogicalResult searched = success();
    {
      std::optional<ScopedDiagnosticHandler> silence;
      if (round > 0)
        silence.emplace(context, [](Diagnostic &) { return success(); });
      searched = runPipeline(searchPm, module);
    }
    if (failed(searched)) {
      if (round == 0)
        return failure();
      break;
    }
    bestFlatStepTime = roundPass->bestFlatStepTime;
    firstStepTime = roundPass->firstStepTime;
    FailureOr<std::optional<PipelineInfo>> info = getPipelineInfo(module);
    if (failed(info))
      return failure();
    if (*info && (*info)->stages > 1) {
      // Priced by the model, stage by stage: taken as it is.
      pipelined = true;
      fitted = searchLimit;
      break;
    }
    // The trial lives inside the module while its pipeline runs (a dynamic
    // pipeline may only run on what the pass owns).
    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    auto trial = cast<ModuleOp>(builder.clone(*module));
    OpPassManager pm(ModuleOp::getOperationName());
    buildPartitionPipeline(pm, partition);
    LogicalResult ran = success();
    {
      std::optional<ScopedDiagnosticHandler> silence;
      if (round > 0)
        silence.emplace(context, [](Diagnostic &) { return success(); });
      ran = runPipeline(pm, trial);
    }
    double peakGiB = succeeded(ran) ? double(getPartitionedPeak(trial)) / kGiB
                                    : 0.0;
    trial.erase();
    if (failed(ran)) {
      if (round == 0)
        return failure();
      break;
    }
    if (round == 0)
      firstPeakGiB = peakGiB;
    if (peakGiB <= limit) {
      fitted = searchLimit;
      break;
    }
    searchLimit *= limit / peakGiB;
  }
  if (!fitted) {
    emitWarning(module.getLoc()) << llvm::formatv(
        "the per-rank program needs {0:F3} GiB per device by liveness "
        "analysis, over the {1:F3} GiB limit the search's memory model "
        "respects (docs/Search.md, \"Memory\"); no searched plan was found "
        "under the limit by both",
        firstPeakGiB, limit);
    // The same search as the first round, under the user's limit.
    restore();
    OpPassManager pm(ModuleOp::getOperationName());
    std::unique_ptr<SearchStrategyPass> finalSearch = cloneSearch();
    finalSearch->memoryLimitGiB = limit;
    finalSearch->explain = false;
    pm.addPass(std::move(finalSearch));
    if (failed(runPipeline(pm, module)))
      return failure();
  }
  // A pipelined plan was not measured: no calibration to report.
  if (pipelined)
    return success();
  double chosen = fitted.value_or(limit);
  Builder b(context);
  module->setAttr(
      kMemoryFitAttrName,
      b.getDictionaryAttr(
          {b.getNamedAttr("fits", b.getBoolAttr(fitted.has_value())),
           b.getNamedAttr("limit_gib", b.getF64FloatAttr(chosen)),
           b.getNamedAttr("rounds",
                          b.getI64IntegerAttr(fitted ? round + 1 : round))}));
  return success();
}

/// A plan that pipelines the step prices M micro-batches; when the step has
/// another count (one: the search chose M), the step as it was before the
/// search (`unsplit`) takes its place, loom-slice-micro-batches splits it
/// into M, and it is searched again under the chosen stages and
/// micro-batches, so that every op of the new step has its strategy.
///
/// The first search priced a micro-batch's ops at its shapes on the unsplit
/// step; the split step prices each of the M copies of an op on its own,
/// with what the split adds (each micro-batch's gradients accumulated, a
/// reshard per copy), which can cost more. When the split plan then loses to
/// the best plan without a pipeline (`bestFlatStepTime`), that plan is
/// taken instead: the step goes back to one micro-batch and is searched
/// without stages, so the whole space never returns a worse plan than the
/// constrained search `pipeline-stages=1` would.
LogicalResult
SearchStrategyPass::splitForMicroBatches(OwningOpRef<func::FuncOp> unsplit) {
  ModuleOp module = getOperation();
  FailureOr<std::optional<PipelineInfo>> plan = getPipelineInfo(module);
  if (failed(plan))
    return failure();
  if (!*plan || (*plan)->stages <= 1)
    return success();
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  int64_t micro = (*plan)->microBatches;
  if (micro == getMicroBatchCount(step))
    return success();
  OwningOpRef<func::FuncOp> fallback = unsplit->clone();
  module.getBody()->getOperations().insert(step->getIterator(),
                                           unsplit.release());
  step.erase();
  OpPassManager pm(ModuleOp::getOperationName());
  SliceMicroBatchesPassOptions slicing;
  slicing.microBatches = micro;
  pm.addPass(createSliceMicroBatchesPass(slicing));
  pm.addPass(createVerifyTrainStepPass());
  std::unique_ptr<SearchStrategyPass> search = cloneSearch();
  search->pipelineStages = (*plan)->stages;
  search->microBatches = micro;
  // The chosen schedule and chunks, so the split step is priced as planned.
  search->schedule = ::loom::pipeline::getScheduleKindName((*plan)->schedule);
  search->virtualStages = (*plan)->virtualStages;
  pm.addPass(std::move(search));
  if (failed(runPipeline(pm, module)))
    return failure();
  auto split = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (!split || !std::isfinite(bestFlatStepTime) ||
      split.getStepTime() <= bestFlatStepTime)
    return success();
  // The plan without a pipeline wins after all: the step, the mesh and the
  // pipeline go back to what the first search started from.
  step = module.lookupSymbol<func::FuncOp>("train_step");
  module.getBody()->getOperations().insert(step->getIterator(),
                                           fallback.release());
  step.erase();
  for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
    mesh.erase();
  module->removeAttr(kPipelineAttrName);
  OpPassManager flat(ModuleOp::getOperationName());
  std::unique_ptr<SearchStrategyPass> flatSearch = cloneSearch();
  flatSearch->pipelineStages = 1;
  flatSearch->microBatches = 0;
  flatSearch->explain = false;
  flat.addPass(std::move(flatSearch));
  return runPipeline(flat, module);
}

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
//    out, `tp` minor so that it maps inside a node). A mesh whose data-
//    parallel axes do not divide a data input's batch is skipped, and so is
//    one with an axis no op can use.
// 3. Per mesh: resolve the fixed factors, build the cost graph once
//    (StrategyCostGraph.cpp), then per outer choice (ZeRO-1 off/on when the
//    mesh has data-parallel axes, recompute off/all layers when there are
//    layers) assemble the graph and solve it by elimination under the
//    memory limit, with the repeated layers named so that the solver
//    reduces one layer and chains it (it checks that they repeat and falls
//    back to the plain solve otherwise). Keep the cheapest feasible plan over all meshes and
//    choices (ties keep the earlier: less tensor parallelism, no ZeRO, no
//    recompute).
// 4. Write the mesh, every node's `dist.strategy`, `dist.plan` and
//    `dist.predicted`; under `explain`, one remark per mesh and per node
//    (its strategy, its cost and the runner-up's given its neighbours).
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/ClusterSpec.h"
#include "loom/Analysis/Strategy/ShardingSpec.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Transforms/FixedStrategies.h"
#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Dist/Transforms/StrategyCostGraph.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

#define DEBUG_TYPE "dist-search-strategy"

namespace mlir::loom::dist {
#define GEN_PASS_DEF_SEARCHSTRATEGYPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

/// `{dp:2, tp:4}` as `dp x tp` factors: every factorization of `devices`
/// into a data-parallel and a tensor-parallel axis, tp ascending.
static std::vector<Mesh> enumerateMeshes(int64_t devices) {
  std::vector<Mesh> meshes;
  for (int64_t tp = 1; tp <= devices; ++tp) {
    if (devices % tp)
      continue;
    int64_t dp = devices / tp;
    std::vector<Mesh::Axis> axes;
    if (dp > 1 || tp == devices)
      axes.push_back({"dp", dp});
    if (tp > 1)
      axes.push_back({"tp", tp});
    if (ValueOrError<Mesh> mesh = Mesh::get(axes))
      meshes.push_back(*mesh);
  }
  return meshes;
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
};

struct SearchStrategyPass
    : mlir::loom::dist::impl::SearchStrategyPassBase<SearchStrategyPass> {
  using SearchStrategyPassBase::SearchStrategyPassBase;

  void runOnOperation() override;

private:
  void explainNodes(const Plan &plan);
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

void SearchStrategyPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = module.getContext();

  // 1. Cluster, entry and constraints.
  if (cluster.empty()) {
    module.emitError() << "dist-search-strategy needs a cluster: a preset ("
                       << llvm::join(getClusterPresetNames(), ", ")
                       << ") or a cluster spec file";
    return signalPassFailure();
  }
  ValueOrError<ClusterSpec> spec = loadClusterSpec(cluster);
  if (!spec) {
    module.emitError() << spec.error();
    return signalPassFailure();
  }
  auto func = module.lookupSymbol<func::FuncOp>(entryName);
  if (!func)
    func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func || func.isExternal()) {
    module.emitError() << "no entry function `" << entryName
                       << "` (nor `forward`) to search";
    return signalPassFailure();
  }
  if (!func.getBody().hasOneBlock()) {
    func.emitOpError() << "must have a single block to be searched";
    return signalPassFailure();
  }
  ShardingSpec sharding;
  std::string error = loadShardingSpec(strategyFile, parallelConfig, sharding);
  if (!error.empty()) {
    module.emitError() << error;
    return signalPassFailure();
  }
  if (memoryLimitGiB < 0) {
    module.emitError() << "memory-limit: expected a value >= 0 (GiB), found "
                       << memoryLimitGiB.getValue();
    return signalPassFailure();
  }
  double memoryLimit = memoryLimitGiB > 0
                           ? memoryLimitGiB * double(int64_t(1) << 30)
                           : double(spec->device.memoryBytes);

  // 2. Candidate meshes.
  SmallVector<MeshOp> meshOps(module.getOps<MeshOp>());
  if (meshOps.size() > 1) {
    meshOps[1].emitOpError() << "is a second mesh; the search expects one";
    return signalPassFailure();
  }
  std::vector<Mesh> meshes;
  std::string fixedMesh = meshSpec.empty() ? sharding.mesh : meshSpec;
  if (!meshOps.empty()) {
    ValueOrError<Mesh> mesh = meshOps[0].getMesh();
    if (!mesh) {
      meshOps[0].emitOpError() << mesh.error();
      return signalPassFailure();
    }
    meshes.push_back(*mesh);
  } else if (!fixedMesh.empty()) {
    ValueOrError<Mesh> mesh = parseMeshSpec(fixedMesh);
    if (!mesh) {
      module.emitError() << mesh.error();
      return signalPassFailure();
    }
    meshes.push_back(*mesh);
  } else if (devices > 0) {
    meshes = enumerateMeshes(devices);
  } else {
    module.emitError() << "dist-search-strategy needs the devices: give "
                          "`devices`, `mesh`, a parallel config or a mesh op";
    return signalPassFailure();
  }
  int64_t wanted = devices > 0 ? int64_t(devices) : sharding.devices;
  if (wanted > 0 && meshes.size() == 1 &&
      meshes[0].getNumDevices() != wanted) {
    module.emitError() << "mesh " << meshes[0].toString() << " has "
                       << meshes[0].getNumDevices() << " devices, not "
                       << wanted;
    return signalPassFailure();
  }
  FlatSymbolRefAttr meshRef =
      FlatSymbolRefAttr::get(context, meshOps.empty()
                                          ? StringRef("mesh")
                                          : meshOps[0].getSymName());

  // 3. Search every mesh and outer choice.
  Plan best;
  Block &body = func.getBody().front();
  bool hasOptimizer = llvm::any_of(body, [](Operation &op) {
    StringRef name = op.getName().getStringRef();
    return name == "loom.adamw_update" || name == "loom.sgd_update";
  });
  double smallestMemory = kInfiniteCost;
  std::string smallestMesh;
  for (const Mesh &mesh : meshes) {
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
      return signalPassFailure();
    }
    bool divides = true;
    for (BlockArgument arg : body.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (type && type.getRank() > 0 &&
          func.getArgAttr(arg.getArgNumber(), "loom.input") &&
          type.getDimSize(0) % dataParallel != 0)
        divides = false;
    }
    if (!divides) {
      if (meshes.size() == 1) {
        module.emitError() << "mesh " << mesh.toString()
                           << ": the data-parallel axes (" << dataParallel
                           << " devices) do not divide the batch";
        return signalPassFailure();
      }
      continue;
    }
    ValueOrError<ClusterCostModel> model = ClusterCostModel::get(*spec, mesh);
    if (!model) {
      if (meshes.size() == 1) {
        module.emitError() << model.error();
        return signalPassFailure();
      }
      continue;
    }
    auto costModel = std::make_unique<ClusterCostModel>(*model);
    FailureOr<FixedStrategies> fixed =
        resolveFixedStrategies(func, mesh, meshRef, sharding);
    if (failed(fixed))
      return signalPassFailure();
    auto fixedPtr = std::make_unique<FixedStrategies>(std::move(*fixed));
    auto builder = std::make_unique<StrategyCostGraphBuilder>(
        func, *costModel, *fixedPtr, dataParallelAxes);
    if (failed(builder->analyze()))
      return signalPassFailure();
    if (meshes.size() > 1 && !builder->usesEveryAxis()) {
      if (explain)
        module.emitRemark() << "mesh " << mesh.toString()
                            << ": skipped, an axis no op can use";
      continue;
    }

    std::vector<bool> zeroChoices = {false};
    if (sharding.optimizerShard >= 1)
      zeroChoices = {true};
    else if (hasOptimizer && dataParallel > 1)
      zeroChoices.push_back(true);
    std::vector<bool> recomputeChoices = {false};
    if (builder->hasLayers())
      recomputeChoices.push_back(true);

    std::optional<Plan> meshBest;
    std::vector<std::vector<unsigned>> layerHint = builder->getLayerHint();
    // How the layered solve went on this mesh, for `explain`.
    std::string layeredNote;
    for (bool zero : zeroChoices) {
      for (bool recompute : recomputeChoices) {
        StrategyChoice choice{zero, recompute};
        CostGraph graph = builder->build(choice);
        // Branch and bound: the unconstrained optimum is a lower bound on
        // the constrained one (the solver is exact without a limit), so a
        // choice whose bound cannot beat the best plan so far is skipped,
        // and one whose unconstrained plan fits needs no Lagrangian walk.
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
          bestSoFar = meshBest->solution.cost;
        if (best.builder)
          bestSoFar = std::min(bestSoFar, best.solution.cost);
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
        if (meshBest && solution.cost >= meshBest->solution.cost)
          continue;
        meshBest = Plan{nullptr, nullptr, nullptr, choice, solution};
      }
    }
    if (!meshBest)
      continue;
    if (explain) {
      const SearchCacheStats &stats = builder->getCacheStats();
      module.emitRemark() << llvm::formatv(
          "mesh {0}: {1} per step, {2:F3} GiB per device (zero={3}, "
          "recompute={4}); {5} nodes, {6} edges, signature cache hit rate "
          "{7:F1}%; {8}",
          mesh.toString(), formatSeconds(meshBest->solution.cost),
          meshBest->solution.memory / double(int64_t(1) << 30),
          meshBest->choice.zero ? 1 : 0,
          meshBest->choice.recompute ? "on" : "off",
          builder->getNodes().size(), builder->getEdges().size(),
          100 * stats.getHitRate(), layeredNote);
    }
    if (best.builder && meshBest->solution.cost >= best.solution.cost)
      continue;
    best = Plan{std::move(builder), std::move(fixedPtr), std::move(costModel),
                meshBest->choice, meshBest->solution};
  }

  if (!best.builder) {
    InFlightDiagnostic diag = module.emitError();
    diag << llvm::formatv("no plan fits in {0:F3} GiB per device",
                          memoryLimit / double(int64_t(1) << 30));
    if (std::isfinite(smallestMemory))
      diag << llvm::formatv(
          ": the smallest needs {0:F3} GiB (mesh {1}); raise "
          "--memory-limit or add devices",
          smallestMemory / double(int64_t(1) << 30), smallestMesh);
    else
      diag << " on any mesh of " << devices.getValue() << " devices";
    return signalPassFailure();
  }

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
  double parameters = 0, optimizerStates = 0, activations = 0, transients = 0;
  const std::vector<SearchNode> &nodes = best.builder->getNodes();
  for (auto [index, node] : llvm::enumerate(nodes)) {
    unsigned candidate = best.solution.choice[index];
    node.op->setAttr("dist.strategy",
                     StrategyAttr::get(meshRef, node.candidates[candidate]));
    const CandidateCost &cost = node.costs[candidate];
    bool recomputed = best.choice.recompute && node.layer >= 0;
    double nodeCompute = cost.forwardSeconds + cost.followerSeconds;
    if (recomputed)
      nodeCompute += cost.forwardSeconds;
    parameters += cost.parameterBytes;
    optimizerStates +=
        best.choice.zero ? cost.zeroOptimizerBytes : cost.optimizerBytes;
    activations +=
        best.builder->getNodeActivationBytes(index, candidate, best.choice);
    transients +=
        best.builder->getNodeTransientBytes(index, candidate, best.choice);
    compute += nodeCompute;
    comm += best.builder->getNodeCost(index, candidate, best.choice) -
            nodeCompute;
  }
  for (const SearchEdge &edge : best.builder->getEdges())
    comm += (*edge.cost)[best.solution.choice[edge.source] *
                             nodes[edge.destination].candidates.size() +
                         best.solution.choice[edge.destination]];

  auto f64 = [&](double value) { return builder.getF64FloatAttr(value); };
  module->setAttr(
      "dist.plan",
      builder.getDictionaryAttr(
          {builder.getNamedAttr("recompute",
                                builder.getBoolAttr(best.choice.recompute)),
           builder.getNamedAttr(
               "zero", builder.getI64IntegerAttr(
                           best.choice.zero
                               ? std::max(1, sharding.optimizerShard)
                               : 0))}));
  // The cluster, so dist-lower-reshards prices chains as the search did.
  // On one line: the printed spec is indented for people, and no string in
  // it holds a line break, so dropping each break and its indent is safe.
  std::string printedCluster = printClusterSpec(*spec), clusterJson;
  for (StringRef line : llvm::split(printedCluster, '\n'))
    clusterJson += line.ltrim(' ').str();
  module->setAttr("dist.cluster", builder.getStringAttr(clusterJson));
  module->setAttr(
      "dist.predicted",
      builder.getDictionaryAttr(
          {builder.getNamedAttr("bubble_s", f64(0)),
           builder.getNamedAttr("comm_s", f64(comm)),
           builder.getNamedAttr("compute_s", f64(compute)),
           builder.getNamedAttr(
               "memory_bytes_per_device",
               builder.getI64IntegerAttr(int64_t(best.solution.memory))),
           builder.getNamedAttr("model_flops_per_step",
                                f64(best.builder->getModelFlops())),
           builder.getNamedAttr("step_time_s", f64(compute + comm))}));
  // The memory breakdown, for reports (parameters and gradients alike).
  module->setAttr(
      "dist.memory",
      builder.getDictionaryAttr(
          {builder.getNamedAttr("activations",
                                builder.getI64IntegerAttr(activations)),
           builder.getNamedAttr("gradients",
                                builder.getI64IntegerAttr(parameters)),
           builder.getNamedAttr("optimizer_states",
                                builder.getI64IntegerAttr(optimizerStates)),
           builder.getNamedAttr("parameters",
                                builder.getI64IntegerAttr(parameters)),
           builder.getNamedAttr("transients",
                                builder.getI64IntegerAttr(transients))}));
  if (explain)
    explainNodes(best);
}

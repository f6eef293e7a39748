//===- LayoutAssignment.cpp - Strategies in, layouts assigned -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Find the entry function (`train_step`, else `forward`), erase the other
//    functions, find or create the one `dist.mesh`.
// 2. Fix what the user gave: `dist.layout` argument attributes and the
//    spec's `args`; `dist.strategy` attributes and the spec's op entries,
//    resolved through each forward op's sharding rule into fixed factors
//    (a factor two entries or two operand dims set differently is an error).
//    Data inputs default to their batch dim over the data-parallel axes.
// 3. Walk the entry block in program order. An op's strategy is its fixed
//    factors completed by *following its producers*: every operand layout is
//    read back into factor axes, the readings are merged, each candidate is
//    trimmed to a valid strategy, and the candidate whose operands' reshards
//    cost least (the redistribution planner's price, as lowering will pay
//    it) wins (a layout some user already needs costs nothing; a
//    backward op that would re-layout a value its forward op used counts a
//    penalty first, so backward and optimizer ops follow their forward op).
//    An op linear in all its operands whose operands are all pending sums
//    over common axes may keep them (a `partial` strategy) when that costs
//    no more, counting the reduction its result will need.
//    Optimizer updates get the data-parallel axes added under ZeRO; under
//    ZeRO-2/3 so do the adds that accumulate a parameter's gradient over
//    micro-batches (found before the walk by following each update's
//    gradient back), so each micro-batch's part is reduce-scattered into
//    the shard and no rank keeps a whole accumulated gradient. A
//    recomputed clone (`loom.recompute`) takes its forward op's strategy.
//    An argument without a layout takes the one its first user requires
//    (ZeRO-3: that layout, also split over the data-parallel axes).
// 4. Results: the loss replicated, loop-carried state (matched by name) the
//    layout of its argument, others their producer's layout made whole.
// 5. Materialize: one `dist.reshard` per (value, required layout), right
//    after the producer; `dist.annotate` ops are replaced by the value under
//    their layout; `dist.strategy` and `dist.layout` attributes are written.
// 6. ZeRO-3: the gathers of the stored shards are re-issued before each
//    layer's forward and backward, per micro-batch, one layer ahead
//    (ParameterGathers.cpp).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Analysis/Layout/Redistribution.h"
#include "loom/Analysis/Strategy/FollowProducers.h"
#include "loom/Analysis/Strategy/OpLayouts.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h"
#include "loom/Dialect/Dist/Transforms/FixedStrategies.h"
#include "loom/Dialect/Dist/Transforms/ParameterGathers.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"
#include "loom/Support/InputFile.h"
#include "loom/Support/ParseCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <set>
#include <unordered_map>

using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kLayoutAttrName;
using ::mlir::loom::kMicroBatchAttrName;
using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;
using ::mlir::loom::kRecomputeAttrName;
using ::mlir::loom::kStrategyAttrName;

#define DEBUG_TYPE "dist-insert-reshards"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

static std::vector<int64_t> getShape(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getShape().vec();
}

static int64_t getElementBytes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

/// Parses the texts of a parallel config (`configText`, given as the option
/// `parallelConfig`: inline or a path) and a strategy file into a spec.
static LoadedShardingSpec parseShardingSpec(const std::string &parallelConfig,
                                            const std::string &configText,
                                            const std::string &strategyFile,
                                            const std::string &strategyText) {
  LoadedShardingSpec loaded;
  ShardingSpec &spec = loaded.spec;
  if (!parallelConfig.empty()) {
    ValueOrError<ParallelConfig> config = parseParallelConfig(configText);
    if (!config) {
      // Name the file the config came from.
      std::string error = config.error();
      const std::string prefix = "parallel config: ";
      if (configText != parallelConfig && error.rfind(prefix, 0) == 0)
        error = "parallel config `" + parallelConfig +
                "`: " + error.substr(prefix.size());
      loaded.error = error;
      return loaded;
    }
    expandParallelConfig(*config, spec);
    if (!spec.mesh.empty())
      spec.meshSource = "--parallel-config";
  }
  if (!strategyFile.empty()) {
    std::string error = parseStrategyFile(strategyText, spec);
    const std::string prefix = "strategy file: ";
    if (error.rfind(prefix, 0) == 0)
      error = "strategy file `" + strategyFile +
              "`: " + error.substr(prefix.size());
    if (!error.empty()) {
      loaded.error = error;
      return loaded;
    }
    if (!spec.mesh.empty() && spec.meshSource.empty())
      spec.meshSource = "--strategy";
  }
  return loaded;
}

static ::loom::support::ParseCache<LoadedShardingSpec> &getSpecCache() {
  static ::loom::support::ParseCache<LoadedShardingSpec> cache;
  return cache;
}

std::shared_ptr<const LoadedShardingSpec>
mlir::loom::dist::getShardingSpec(const std::string &strategyFile,
                                  const std::string &parallelConfig) {
  // Read the inputs (a parallel config is inline JSON when it starts with
  // `{`); what cannot be read is not cached.
  auto failed = [](std::string error) {
    auto loaded = std::make_shared<LoadedShardingSpec>();
    loaded->error = std::move(error);
    return std::shared_ptr<const LoadedShardingSpec>(std::move(loaded));
  };
  std::string configText = parallelConfig;
  size_t first = parallelConfig.find_first_not_of(" \t\n");
  if (!parallelConfig.empty() &&
      (first == std::string::npos || parallelConfig[first] != '{'))
    if (auto error = ::loom::support::readRegularFile(parallelConfig,
                                                      configText))
      return failed("parallel config: " + *error);
  std::string strategyText;
  if (!strategyFile.empty())
    if (auto error =
            ::loom::support::readRegularFile(strategyFile, strategyText))
      return failed("strategy file: " + *error);
  // The spec depends on the bytes and on the option spellings errors quote.
  std::string key =
      parallelConfig + '\0' + configText + '\0' + strategyFile + '\0' +
      strategyText;
  return getSpecCache().getOrParse(key, [&] {
    return parseShardingSpec(parallelConfig, configText, strategyFile,
                             strategyText);
  });
}

size_t mlir::loom::dist::getNumShardingSpecParses() {
  return getSpecCache().getNumParses();
}

std::string mlir::loom::dist::loadShardingSpec(const std::string &strategyFile,
                                               const std::string &parallelConfig,
                                               ShardingSpec &spec) {
  std::shared_ptr<const LoadedShardingSpec> loaded =
      getShardingSpec(strategyFile, parallelConfig);
  if (loaded->error.empty())
    spec = loaded->spec;
  return loaded->error;
}

std::string mlir::loom::dist::resolveMeshSpec(const std::string &meshOption,
                                              const ShardingSpec &spec,
                                              std::string &mesh) {
  mesh = meshOption.empty() ? spec.mesh : meshOption;
  if (meshOption.empty() || spec.mesh.empty())
    return "";
  // Compared as meshes: `dp=2` is `dp=2` however it is spelled. A mesh
  // that does not parse is reported by its user.
  ValueOrError<Mesh> given = Mesh::parse(meshOption);
  ValueOrError<Mesh> fromSpec = Mesh::parse(spec.mesh);
  if (!given || !fromSpec || *given == *fromSpec)
    return "";
  return "--mesh " + meshOption + " and " +
         (spec.meshSource.empty() ? "the parallel config" : spec.meshSource) +
         " (mesh " + spec.mesh +
         ") disagree: give the mesh once, or the same mesh in both";
}

bool mlir::loom::dist::requestsRecompute(const std::string &strategyFile,
                                         const std::string &parallelConfig) {
  ShardingSpec spec;
  return loadShardingSpec(strategyFile, parallelConfig, spec).empty() &&
         spec.recompute;
}

RequestedPipeline
mlir::loom::dist::getRequestedPipeline(const std::string &strategyFile,
                                       const std::string &parallelConfig) {
  ShardingSpec spec;
  RequestedPipeline request;
  if (!loadShardingSpec(strategyFile, parallelConfig, spec).empty())
    return request;
  request.stages = spec.pipelineStages;
  request.microBatches = spec.microBatches;
  request.virtualStages = spec.virtualStages;
  request.copies = spec.fineGrainInterleave;
  request.dataParallel = spec.dataParallel;
  request.sequenceParallel = spec.sequenceParallel;
  for (int64_t stage : spec.layerStages) {
    if (static_cast<int64_t>(request.stageLayerCounts.size()) <= stage)
      request.stageLayerCounts.push_back(0);
    ++request.stageLayerCounts.back();
  }
  return request;
}

std::string
mlir::loom::dist::getRequestedPrecision(const std::string &strategyFile,
                                        const std::string &parallelConfig) {
  ShardingSpec spec;
  if (!loadShardingSpec(strategyFile, parallelConfig, spec).empty())
    return "";
  return spec.precision;
}

namespace {
/// A chosen strategy: factor axes and the pending sums the op keeps.
struct Choice {
  FactorAxes factors;
  Layout::AxisList partial;
};

class LayoutAssigner {
public:
  LayoutAssigner(ModuleOp module, const LayoutAssignmentOptions &options)
      : module(module), options(options) {}

  LogicalResult run();

private:
  LogicalResult setUpEntryAndMesh();
  LogicalResult setUpArguments();
  LogicalResult applyOpEntries();
  LogicalResult assignOp(Operation *op);
  FailureOr<Choice> chooseStrategy(Operation *op, const OpShardingRule &rule,
                                   const FixedFactors &fixed);
  FailureOr<Choice> computeStrategy(Operation *op, const OpShardingRule &rule,
                                    const FixedFactors &fixed);
  std::string getChoiceKey(Operation *op, const FixedFactors &fixed) const;
  void choosePartial(Operation *op, const OpShardingRule &rule,
                     const FixedFactors &fixed,
                     const std::vector<FactorAxes> &raw, Choice &best,
                     int bestPenalties, double bestCost);
  int countPenalties(Operation *op, const OpLayouts &derived);
  double reshardCost(Value value, const Layout &from, const Layout &to);
  FactorAxes shardOptimizer(const OpShardingRule &rule, Operation *op,
                            FactorAxes strategy);
  Layout shardOverDataParallel(const Layout &layout,
                               const std::vector<int64_t> &shape);
  void collectGradientAccumulators();
  std::optional<FactorAxes> shardAccumulator(const OpShardingRule &rule,
                                             Value parameter);
  void require(OpOperand &use, const Layout &layout);
  LogicalResult assignResults(func::ReturnOp ret);
  void materialize();

  std::optional<Layout> getLayout(Value value) const {
    auto it = layouts.find(value);
    if (it == layouts.end())
      return std::nullopt;
    return it->second;
  }
  bool isAvailable(Value value, const Layout &layout) const {
    auto it = available.find(value);
    return it != available.end() && llvm::is_contained(it->second, layout);
  }

  ModuleOp module;
  const LayoutAssignmentOptions &options;
  /// Prices reshards as dist-lower-reshards will (the same planner and cost
  /// model), so the strategies chosen here are the ones whose chains are
  /// cheapest once lowered; its cache serves repeated questions.
  RedistributionPlanner planner;
  func::FuncOp func;
  std::optional<Mesh> mesh;
  FlatSymbolRefAttr meshRef;
  Layout::AxisList dataParallelAxes;

  /// The layout each value is produced with.
  llvm::DenseMap<Value, Layout> layouts;
  /// The layouts each value will exist in: its own and its reshards'.
  llvm::DenseMap<Value, std::vector<Layout>> available;
  /// Each use's required layout, in program order.
  std::vector<std::pair<OpOperand *, Layout>> uses;
  llvm::DenseMap<OpOperand *, size_t> useIndex;
  /// Fixed factors of the ops the user constrained, and where they came from.
  llvm::DenseMap<Operation *, FixedFactors> fixedFactors;
  llvm::DenseMap<Operation *, std::vector<std::string>> fixedOrigins;
  /// The partial axes of the ops whose `dist.strategy` attribute gives
  /// them (kept as given).
  llvm::DenseMap<Operation *, Layout::AxisList> givenPartial;
  /// The chosen strategies.
  llvm::DenseMap<Operation *, Choice> strategies;

  /// Whether `op` is the gradient of an attention whose chosen strategy
  /// splits its op-partitioned sequence (ring attention).
  bool isGradOfRing(Operation *op) const {
    auto grad = dyn_cast<AttentionGradOp>(op);
    if (!grad)
      return false;
    auto forward = grad.getOut().getDefiningOp<AttentionOp>();
    auto chosen = forward ? strategies.find(forward) : strategies.end();
    if (chosen == strategies.end())
      return false;
    OpShardingRule rule =
        cast<ShardingRuleOpInterface>(forward.getOperation()).getShardingRule();
    for (auto [factor, axes] : llvm::enumerate(chosen->second.factors))
      if (!axes.empty() &&
          rule.getFactors()[factor].kind == FactorKind::OpPartitioned)
        return true;
    return false;
  }
  /// Choices by everything `computeStrategy` reads (`getChoiceKey`): the
  /// micro-batches of a split step repeat the same ops on the same layouts,
  /// so all but the first get their choice here.
  std::unordered_map<std::string, Choice> choiceCache;
  /// The forward op of each `loom.fwd` id: the first op carrying it.
  llvm::DenseMap<int64_t, Operation *> forwardOps;
  /// The forward op a `loom-recompute` clone (`loom.recompute`) repeats,
  /// if it has been assigned: the clone takes its strategy as it is, so
  /// the layer is recomputed split as the search priced it (following
  /// producers alone may gather a whole batch to recompute it replicated).
  Operation *getRecomputedOriginal(Operation *op) const;
  /// The forward op whose strategy `op` (a backward or optimizer op, with
  /// the forward op's `loom.fwd` id) follows; null for a forward op.
  Operation *getFollowedForwardOp(Operation *op) const;
  /// The original forward value of each recomputed clone's result.
  llvm::DenseMap<Value, Value> recomputedFrom;
  /// Under ZeRO-2/3: each add that accumulates a parameter's gradient (over
  /// micro-batches, or a tied parameter's parts), with that parameter.
  llvm::DenseMap<Operation *, Value> gradientAccumulators;
  /// Argument names and required result layouts.
  std::vector<std::string> argNames;
  std::vector<std::optional<Layout>> resultLayouts;
};
} // namespace

//===----------------------------------------------------------------------===//
// Entry function and mesh
//===----------------------------------------------------------------------===//

LogicalResult LayoutAssigner::setUpEntryAndMesh() {
  func = module.lookupSymbol<func::FuncOp>(options.entry);
  if (!func)
    func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func || func.isExternal())
    return module.emitError() << "no entry function `" << options.entry
                              << "` (nor `forward`) to partition";
  if (!func.getBody().hasOneBlock())
    return func.emitOpError() << "must have a single block to be partitioned";

  // A partitioned module holds one per-rank program.
  for (auto other :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (other != func)
      other.erase();

  SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
  if (meshes.size() > 1)
    return meshes[1].emitOpError()
           << "is a second mesh; layout assignment expects one";
  std::string spec;
  if (std::string error = resolveMeshSpec(options.mesh, options.spec, spec);
      !error.empty())
    return module.emitError() << error;
  if (!meshes.empty() && options.spec.devices) {
    ValueOrError<Mesh> existing = meshes[0].getMesh();
    if (existing && existing->getNumDevices() != options.spec.devices)
      return meshes[0].emitOpError()
             << "has " << existing->getNumDevices() << " devices ("
             << existing->toString() << ") but the parallel config asks for "
             << options.spec.devices
             << " (data_parallel x model_parallel)";
  }
  if (!meshes.empty()) {
    ValueOrError<Mesh> existing = meshes[0].getMesh();
    if (!existing)
      return meshes[0].emitOpError() << existing.error();
    mesh = *existing;
    meshRef = FlatSymbolRefAttr::get(meshes[0].getSymNameAttr());
    if (!spec.empty()) {
      ValueOrError<Mesh> given = Mesh::parse(spec);
      if (!given)
        return module.emitError() << given.error();
      if (*given != *mesh)
        return meshes[0].emitOpError()
               << "is " << mesh->toString() << " but the options ask for "
               << given->toString();
    }
  } else {
    if (spec.empty())
      return module.emitError()
             << "no mesh: give `mesh` (e.g. dp=2,tp=2), a parallel config or "
                "a strategy file with a mesh, or a dist.mesh op";
    ValueOrError<Mesh> given = Mesh::parse(spec);
    if (!given)
      return module.emitError() << given.error();
    mesh = *given;
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    std::vector<int64_t> shape;
    std::vector<StringRef> names;
    for (const Mesh::Axis &axis : mesh->getAxes()) {
      shape.push_back(axis.size);
      names.push_back(axis.name);
    }
    auto meshOp = MeshOp::create(
        builder, module.getLoc(), builder.getStringAttr("mesh"),
        builder.getDenseI64ArrayAttr(shape), builder.getStrArrayAttr(names));
    meshRef = FlatSymbolRefAttr::get(meshOp.getSymNameAttr());
  }
  if (options.spec.devices && options.spec.devices != mesh->getNumDevices())
    return module.emitError()
           << "the parallel config asks for " << options.spec.devices
           << " devices (data_parallel x model_parallel) but the mesh "
           << mesh->toString() << " has " << mesh->getNumDevices();

  if (options.spec.dataParallelAxes) {
    dataParallelAxes = *options.spec.dataParallelAxes;
    for (const std::string &axis : dataParallelAxes)
      if (auto error = mesh->verifyAxis(axis))
        return module.emitError() << "data-parallel axes: " << *error;
  } else if (mesh->findAxis("dp")) {
    dataParallelAxes = {"dp"};
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

LogicalResult LayoutAssigner::setUpArguments() {
  Block &body = func.getBody().front();
  std::map<std::string, unsigned> byName;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    argNames.push_back(getArgumentName(func, i));
    if (!argNames.back().empty())
      byName[argNames.back()] = i;
  }
  for (const auto &[name, dims] : options.spec.args) {
    auto it = byName.find(name);
    if (it == byName.end())
      return func.emitOpError()
             << "strategy file: args: no argument named `" << name << "`";
    ValueOrError<Layout> layout = Layout::get(*mesh, dims);
    if (!layout)
      return func.emitOpError()
             << "strategy file: args." << name << ": " << layout.error();
    func.setArgAttr(it->second, kLayoutAttrName,
                    LayoutAttr::get(meshRef, *layout));
  }

  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    BlockArgument arg = body.getArgument(i);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return func.emitOpError() << "argument " << i
                                << " is not a static tensor";
    std::optional<Layout> layout;
    if (auto attr = func.getArgAttrOfType<LayoutAttr>(i, kLayoutAttrName)) {
      if (attr.getMesh() != meshRef)
        return func.emitOpError() << "argument " << i << " (`" << argNames[i]
                                  << "`): layout names mesh "
                                  << attr.getMesh() << ", not " << meshRef;
      ValueOrError<Layout> given = attr.toLayout(*mesh);
      if (!given)
        return func.emitOpError() << "argument " << i << " (`" << argNames[i]
                                  << "`): " << given.error();
      layout = *given;
    } else if (func.getArgAttr(i, kInputAttrName) && type.getRank() > 0) {
      // Data inputs: the batch (dim 0) over the data-parallel axes, the
      // sequence (dim 1) over the sequence-parallel ones.
      std::vector<Layout::AxisList> dims(type.getRank());
      dims[0] = dataParallelAxes;
      if (type.getRank() > 1)
        dims[1] = options.spec.sequenceParallelAxes;
      ValueOrError<Layout> data = Layout::get(*mesh, dims);
      if (!data)
        return func.emitOpError() << "argument " << i << ": " << data.error();
      layout = *data;
    }
    if (!layout)
      continue; // Takes the layout its first user requires.
    if (!layout->getPartialAxes().empty())
      return func.emitOpError() << "argument " << i << " (`" << argNames[i]
                                << "`): an argument cannot be partial";
    if (auto error = layout->verifyShape(*mesh, type.getShape().vec()))
      return func.emitOpError() << "argument " << i << " (`" << argNames[i]
                                << "`): " << *error;
    layouts.try_emplace(arg, *layout);
    available[arg].push_back(*layout);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Op entries: user splits resolved into fixed factors (FixedStrategies.cpp)
//===----------------------------------------------------------------------===//

LogicalResult LayoutAssigner::applyOpEntries() {
  FailureOr<FixedStrategies> fixed =
      resolveFixedStrategies(func, *mesh, meshRef, options.spec);
  if (failed(fixed))
    return failure();
  fixedFactors = std::move(fixed->factors);
  fixedOrigins = std::move(fixed->origins);
  forwardOps = std::move(fixed->forwardOps);
  givenPartial = std::move(fixed->partial);
  return success();
}

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

void LayoutAssigner::collectGradientAccumulators() {
  Block &body = func.getBody().front();
  for (Operation &op : body) {
    if (!isOptimizerUpdate(&op) || op.getNumOperands() < 2)
      continue;
    Value parameter = op.getOperand(0);
    auto arg = dyn_cast<BlockArgument>(parameter);
    if (!arg || arg.getOwner() != &body ||
        !func.getArgAttr(arg.getArgNumber(), kParamAttrName))
      continue;
    std::vector<int64_t> shape = getShape(parameter);
    // The gradient the update reads, under the clipping's scalar factor and
    // a widening cast (mixed precision), is the root of a tree of adds of
    // the parameter's shape: the micro-batches' parts.
    Value gradient = op.getOperand(1);
    for (;;) {
      Operation *def = gradient.getDefiningOp();
      if (auto mul = dyn_cast_or_null<MulOp>(def)) {
        auto isScalar = [](Value v) {
          return cast<RankedTensorType>(v.getType()).getRank() == 0;
        };
        if (isScalar(mul.getRhs()) && !isScalar(mul.getLhs())) {
          gradient = mul.getLhs();
          continue;
        }
        if (isScalar(mul.getLhs()) && !isScalar(mul.getRhs())) {
          gradient = mul.getRhs();
          continue;
        }
      }
      if (auto castOp = dyn_cast_or_null<CastOp>(def)) {
        gradient = castOp.getInput();
        continue;
      }
      break;
    }
    std::vector<Value> pending = {gradient};
    while (!pending.empty()) {
      Value value = pending.back();
      pending.pop_back();
      auto add = value.getDefiningOp<AddOp>();
      if (!add || add->getBlock() != &body || getShape(value) != shape ||
          getShape(add.getLhs()) != shape || getShape(add.getRhs()) != shape)
        continue;
      gradientAccumulators.try_emplace(add, parameter);
      pending.push_back(add.getLhs());
      pending.push_back(add.getRhs());
    }
  }
}

std::optional<FactorAxes>
LayoutAssigner::shardAccumulator(const OpShardingRule &rule, Value parameter) {
  // The parameter's layout is known: its forward users came first. The
  // shard is the one its update will take (shardOptimizer reads the same
  // layout through the same rule), so the accumulated shard reaches the
  // update without another reshard.
  std::optional<Layout> stored = getLayout(parameter);
  if (!stored)
    return std::nullopt;
  Layout sharded = shardOverDataParallel(*stored, getShape(parameter));
  if (llvm::none_of(dataParallelAxes,
                    [&](const std::string &a) { return sharded.uses(a); }))
    return std::nullopt;
  FactorAxes reading = readFactorAxes(rule, *mesh, 0, sharded);
  if (!verifyFactorAxes(rule, *mesh, reading).empty())
    return std::nullopt;
  return reading;
}

void LayoutAssigner::require(OpOperand &use, const Layout &layout) {
  Value value = use.get();
  if (!getLayout(value)) {
    // An argument's first user fixes its layout; ZeRO-3 stores parameters
    // split over the data-parallel axes as well and gathers them here.
    Layout stored = layout;
    auto arg = cast<BlockArgument>(value);
    if (options.spec.optimizerShard >= 3 &&
        func.getArgAttr(arg.getArgNumber(), kParamAttrName))
      stored = shardOverDataParallel(layout, getShape(value));
    layouts.try_emplace(value, stored);
    available[value].push_back(stored);
  }
  if (!isAvailable(value, layout))
    available[value].push_back(layout);
  useIndex[&use] = uses.size();
  uses.emplace_back(&use, layout);
}

Layout LayoutAssigner::shardOverDataParallel(
    const Layout &layout, const std::vector<int64_t> &shape) {
  if (dataParallelAxes.empty() ||
      llvm::any_of(dataParallelAxes,
                   [&](const std::string &a) { return layout.uses(a); }))
    return layout;
  int64_t groupSize = mesh->getGroupSize(dataParallelAxes);
  std::optional<size_t> best;
  int64_t bestSize = 0;
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    int64_t local = shape[dim] / layout.getNumBlocks(*mesh, dim);
    if (local % groupSize == 0 && local > bestSize) {
      best = dim;
      bestSize = local;
    }
  }
  if (!best)
    return layout;
  std::vector<Layout::AxisList> dims = layout.getDims();
  llvm::append_range(dims[*best], dataParallelAxes);
  ValueOrError<Layout> sharded = Layout::get(*mesh, dims);
  return sharded ? *sharded : layout;
}

FactorAxes LayoutAssigner::shardOptimizer(const OpShardingRule &rule,
                                          Operation *op, FactorAxes strategy) {
  ValueOrError<OpLayouts> derived = deriveOpLayouts(rule, *mesh, strategy);
  if (!derived)
    return strategy;
  Layout sharded =
      shardOverDataParallel(derived->operands[0], getShape(op->getOperand(0)));
  FactorAxes reading = readFactorAxes(rule, *mesh, 0, sharded);
  FactorAxes result = strategy;
  for (auto [id, axes] : llvm::enumerate(reading))
    if (!axes.empty())
      result[id] = axes;
  if (!verifyFactorAxes(rule, *mesh, result).empty())
    return strategy;
  return result;
}

/// Relative difference below which two prices are the same (they are sums
/// of the planner's floating-point step costs).
static constexpr double kCostTolerance = 1e-9;

double LayoutAssigner::reshardCost(Value value, const Layout &from,
                                   const Layout &to) {
  if (from == to)
    return 0;
  ValueOrError<RedistributionPlan> plan = planner.plan(
      *mesh, getShape(value), getElementBytes(value), from, to);
  // No chain (a pending sum cannot be created): never the cheaper choice.
  return plan ? plan->cost : 1e30;
}

Operation *LayoutAssigner::getFollowedForwardOp(Operation *op) const {
  auto id = op->getAttrOfType<IntegerAttr>(kFwdAttrName);
  if (!id)
    return nullptr;
  Operation *forward = forwardOps.lookup(id.getInt());
  return forward == op ? nullptr : forward;
}

int LayoutAssigner::countPenalties(Operation *op, const OpLayouts &derived) {
  // The forward op whose strategy this backward op follows.
  Operation *forward = getFollowedForwardOp(op);
  if (!forward)
    return 0;
  int penalties = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    const Layout &wanted = derived.operands[operand.getOperandNumber()];
    // A recomputed value stands for the original its forward op read.
    Value value = recomputedFrom.lookup(operand.get());
    if (!value)
      value = operand.get();
    for (OpOperand &forwardUse : forward->getOpOperands()) {
      if (forwardUse.get() != value)
        continue;
      auto it = useIndex.find(&forwardUse);
      if (it != useIndex.end() && uses[it->second].second != wanted)
        ++penalties;
    }
  }
  return penalties;
}

void LayoutAssigner::choosePartial(Operation *op, const OpShardingRule &rule,
                                   const FixedFactors &fixed,
                                   const std::vector<FactorAxes> &raw,
                                   Choice &best, int bestPenalties,
                                   double bestCost) {
  if (!rule.isLinear() || op->getNumOperands() == 0)
    return;
  // The axes every operand is a pending sum over, in mesh order.
  std::optional<Layout::AxisList> common;
  bool singleUses = true;
  for (Value operand : op->getOperands()) {
    std::optional<Layout> layout = getLayout(operand);
    if (!layout)
      return;
    singleUses &= operand.hasOneUse();
    Layout::AxisList axes;
    for (const std::string &axis : layout->getPartialAxes())
      if (!common || llvm::is_contained(*common, axis))
        axes.push_back(axis);
    common = axes;
  }
  if (!common || common->empty())
    return;
  for (const std::optional<Layout::AxisList> &axes : fixed)
    if (axes && llvm::any_of(*axes, [&](const std::string &axis) {
          return llvm::is_contained(*common, axis);
        }))
      return; // The user split a factor over a pending axis.

  // The partial candidates below count the reduction their results will
  // need; the best strategy reduced its operands and may have split the
  // results over a pending axis instead (a reduce-scatter), which the
  // results' users then gather back. For an op that sums over a dim (its
  // result smaller than its operand) count that gather too, so a
  // reduce-scatter of the large operand plus a gather of the small result
  // is not preferred to one all-reduce of the small result (the sum over
  // q, k and v of GPT-2's fused projection's input gradients).
  bool sums = !rule.getFactorsOfKind(FactorKind::Reduction).empty();
  ValueOrError<OpLayouts> bestLayouts =
      sums ? deriveOpLayouts(rule, *mesh, best.factors, best.partial)
           : ValueOrError<OpLayouts>::failure("not a sum");
  if (bestLayouts) {
    for (auto [result, layout] :
         llvm::zip_equal(op->getResults(), bestLayouts->results)) {
      bool splitOverPending = llvm::any_of(
          layout.getDims(), [&](const Layout::AxisList &axes) {
            return llvm::any_of(axes, [&](const std::string &axis) {
              return llvm::is_contained(*common, axis);
            });
          });
      if (!splitOverPending)
        continue;
      std::vector<Layout::AxisList> dims = layout.getDims();
      for (Layout::AxisList &axes : dims)
        llvm::erase_if(axes, [&](const std::string &axis) {
          return llvm::is_contained(*common, axis);
        });
      if (ValueOrError<Layout> gathered = Layout::get(*mesh, dims))
        bestCost += reshardCost(result, layout, *gathered);
    }
  }

  for (const FactorAxes &candidate : raw) {
    FactorAxes withoutPartial = candidate;
    for (Layout::AxisList &axes : withoutPartial)
      llvm::erase_if(axes, [&](const std::string &axis) {
        return llvm::is_contained(*common, axis);
      });
    ValueOrError<FactorAxes> trimmed =
        trimFactorAxes(rule, *mesh, withoutPartial, fixed);
    if (!trimmed)
      continue;
    ValueOrError<OpLayouts> derived =
        deriveOpLayouts(rule, *mesh, *trimmed, *common);
    if (!derived)
      continue;
    double cost = 0;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      const Layout &wanted = derived->operands[operand.getOperandNumber()];
      if (!isAvailable(value, wanted))
        cost += reshardCost(value, *getLayout(value), wanted);
    }
    // The pending sums move to the results, which some user will reduce.
    for (auto [result, layout] :
         llvm::zip_equal(op->getResults(), derived->results)) {
      ValueOrError<Layout> whole = Layout::get(*mesh, layout.getDims());
      if (whole)
        cost += reshardCost(result, layout, *whole);
    }
    int penalties = countPenalties(op, *derived);
    // On a tie the reduction moves past the op only when nothing else reads
    // the operands (another reader would need them reduced anyway).
    bool better = penalties < bestPenalties ||
                  (penalties == bestPenalties &&
                   (cost < bestCost - kCostTolerance * bestCost ||
                    (!(cost > bestCost + kCostTolerance * bestCost) &&
                     singleUses)));
    if (!better)
      continue;
    best = Choice{*trimmed, *common};
    bestPenalties = penalties;
    bestCost = cost;
    singleUses = false; // Later candidates must be strictly cheaper.
  }
}

/// Whether the partition phase implements `strategy` for `op` (attention
/// split on cross-attention's sequence is not; ring attention needs an even
/// block per device), so
/// layout assignment never chooses an unimplemented split on its own. The
/// factors the user fixed are left out of the question: a user who fixes
/// such a split gets the partitioner's error, which names it.
static bool isImplementedSplit(Operation *op, const OpShardingRule &rule,
                               const FactorAxes &strategy,
                               const FixedFactors &fixed, const Mesh &mesh,
                               bool ringForward) {
  SmallVector<int64_t> chosen;
  for (int64_t factor : getSplitFactors(strategy)) {
    size_t index = static_cast<size_t>(factor);
    bool userFixed =
        index < fixed.size() && fixed[index] && !fixed[index]->empty();
    if (!userFixed)
      chosen.push_back(factor);
  }
  if (!isSplitSupported(op, rule, chosen))
    return false;
  // Ring attention (an attention's op-partitioned sequence) communicates
  // around its ring, which the reshard costs here do not price: only the
  // cost search, which prices it, or the user chooses it; a gradient
  // follows its forward's ring (`ringForward`).
  if ((isa<AttentionOp>(op) || (isa<AttentionGradOp>(op) && !ringForward)) &&
      llvm::any_of(chosen, [&](int64_t factor) {
        return rule.getFactors()[factor].kind == FactorKind::OpPartitioned;
      }))
    return false;
  // The sizes the rewrite needs (ring attention's even blocks), likewise
  // for the factors chosen here only.
  auto partitionable = dyn_cast<PartitionableOpInterface>(op);
  if (!partitionable)
    return true;
  FactorAxes free(strategy.size());
  for (int64_t factor : chosen)
    free[factor] = strategy[factor];
  return partitionable.fitsMesh(rule, free, mesh);
}

/// Appends `layout` to a key: its dims' axes, then its pending axes.
static void appendLayout(std::string &key, const Layout &layout) {
  for (const Layout::AxisList &axes : layout.getDims()) {
    key += '[';
    for (const std::string &axis : axes)
      key.append(axis).push_back(',');
    key += ']';
  }
  key += 'p';
  for (const std::string &axis : layout.getPartialAxes())
    key.append(axis).push_back(',');
  key += ';';
}

static void appendPointer(std::string &key, const void *pointer) {
  key.append(reinterpret_cast<const char *>(&pointer), sizeof(pointer));
}

/// Everything `computeStrategy` (and `choosePartial`, `countPenalties`,
/// `reshardCost` under it) reads about `op`, so that two ops with the same
/// key get the same choice: the op's name, attributes (but its micro-batch
/// index) and types, which give its sharding rule, its split support and
/// its reshard prices; the factors the user fixed and the pending axes a
/// given strategy keeps; per operand, its single use, its layout and every
/// layout it is available in, in order, and the layouts its forward op's
/// uses of the same value require (the penalties); the forward op's result
/// types and layouts (the readings of a backward op). Types and attributes
/// are uniqued, so their addresses stand for them.
std::string LayoutAssigner::getChoiceKey(Operation *op,
                                         const FixedFactors &fixed) const {
  std::string key;
  key.reserve(512);
  appendPointer(key, op->getName().getAsOpaquePointer());
  for (NamedAttribute attr : op->getAttrs()) {
    if (attr.getName() == kMicroBatchAttrName)
      continue;
    appendPointer(key, attr.getName().getAsOpaquePointer());
    appendPointer(key, attr.getValue().getAsOpaquePointer());
  }
  key += '|';
  for (Type type : op->getOperandTypes())
    appendPointer(key, type.getAsOpaquePointer());
  key += '|';
  for (Type type : op->getResultTypes())
    appendPointer(key, type.getAsOpaquePointer());
  key += '|';
  for (const std::optional<Layout::AxisList> &axes : fixed) {
    if (!axes) {
      key += '-';
      continue;
    }
    key += '[';
    for (const std::string &axis : *axes)
      key.append(axis).push_back(',');
    key += ']';
  }
  key += '|';
  if (auto given = givenPartial.find(op); given != givenPartial.end())
    for (const std::string &axis : given->second)
      key.append(axis).push_back(',');
  key += '|';
  Operation *forward = getFollowedForwardOp(op);
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    key += value.hasOneUse() ? '1' : 'n';
    if (std::optional<Layout> layout = getLayout(value))
      appendLayout(key, *layout);
    else
      key += '?';
    if (auto it = available.find(value); it != available.end())
      for (const Layout &other : it->second)
        appendLayout(key, other);
    key += '/';
    if (!forward)
      continue;
    Value original = recomputedFrom.lookup(value);
    if (!original)
      original = value;
    for (OpOperand &forwardUse : forward->getOpOperands()) {
      if (forwardUse.get() != original)
        continue;
      key += std::to_string(forwardUse.getOperandNumber());
      auto it = useIndex.find(&forwardUse);
      if (it != useIndex.end())
        appendLayout(key, uses[it->second].second);
      else
        key += '?';
    }
    key += '/';
  }
  key += '|';
  if (forward) {
    key += 'f';
    for (Value result : forward->getResults()) {
      appendPointer(key, result.getType().getAsOpaquePointer());
      if (std::optional<Layout> layout = getLayout(result))
        appendLayout(key, *layout);
      else
        key += '?';
    }
  }
  return key;
}

FailureOr<Choice>
LayoutAssigner::chooseStrategy(Operation *op, const OpShardingRule &rule,
                               const FixedFactors &fixed) {
  if (!options.reuseChoices)
    return computeStrategy(op, rule, fixed);
  std::string key = getChoiceKey(op, fixed);
  if (auto it = choiceCache.find(key); it != choiceCache.end()) {
    if (options.reusedChoices)
      ++*options.reusedChoices;
    return it->second;
  }
  FailureOr<Choice> choice = computeStrategy(op, rule, fixed);
  if (succeeded(choice))
    choiceCache.emplace(std::move(key), *choice);
  return choice;
}

FailureOr<Choice>
LayoutAssigner::computeStrategy(Operation *op, const OpShardingRule &rule,
                                const FixedFactors &fixed) {
  // Readings of each operand's own layout, and of every layout an earlier
  // user already reshards it to (following those is free too).
  std::vector<FactorAxes> own, readings;
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<Layout> layout = getLayout(operand.get());
    if (!layout)
      continue;
    unsigned index = operand.getOperandNumber();
    own.push_back(readFactorAxes(rule, *mesh, index, *layout));
    readings.push_back(own.back());
    auto it = available.find(operand.get());
    if (it == available.end())
      continue;
    for (const Layout &other : it->second)
      if (other != *layout)
        readings.push_back(readFactorAxes(rule, *mesh, index, other));
  }
  // A backward op also reads an operand shaped like its forward op's result
  // (the result's gradient) as that result is laid out: without these
  // readings a backward op whose producers were
  // split otherwise may only find a replicated strategy that gathers a
  // whole tensor, where the forward op's own split costs an all-to-all.
  if (Operation *forward = getFollowedForwardOp(op)) {
    for (OpOperand &operand : op->getOpOperands()) {
      Type type = operand.get().getType();
      unsigned index = operand.getOperandNumber();
      for (Value result : forward->getResults()) {
        std::optional<Layout> layout = getLayout(result);
        if (result.getType() == type && layout)
          readings.push_back(readFactorAxes(rule, *mesh, index, *layout));
      }
    }
  }
  // Candidates: all operands merged in order; each reading merged first
  // (so a later operand's split is not lost to an earlier one's axis); each
  // reading alone; nothing split.
  std::vector<FactorAxes> raw;
  raw.push_back(mergeFactorAxes(rule, own));
  for (const FactorAxes &reading : readings) {
    std::vector<FactorAxes> ordered = {reading};
    llvm::append_range(ordered, own);
    raw.push_back(mergeFactorAxes(rule, ordered));
    raw.push_back(reading);
  }
  raw.push_back(getReplicatedFactorAxes(rule));
  // A split the rule cannot keep where it is (the minor part of a compound
  // dim: a sequence split under a reshape merging batch and sequence) moves
  // to another factor that takes it, instead of being gathered away: the
  // op keeps its parallelism, as the strategy search assumes of every
  // follower, and holds no gathered copy.
  size_t numReadings = raw.size();
  for (size_t r = 0; r < numReadings; ++r) {
    ValueOrError<FactorAxes> trimmed =
        trimFactorAxes(rule, *mesh, raw[r], fixed);
    if (!trimmed)
      continue;
    FactorAxes moved = *trimmed;
    bool changed = false;
    for (const Layout::AxisList &axes : raw[r]) {
      for (const std::string &axis : axes) {
        if (llvm::any_of(moved, [&](const Layout::AxisList &kept) {
              return llvm::is_contained(kept, axis);
            }))
          continue;
        for (size_t f = 0; f < moved.size(); ++f) {
          if (f < fixed.size() && fixed[f])
            continue;
          moved[f].push_back(axis);
          if (verifyFactorAxes(rule, *mesh, moved).empty()) {
            changed = true;
            break;
          }
          moved[f].pop_back();
        }
      }
    }
    if (changed)
      raw.push_back(std::move(moved));
  }

  struct Score {
    int penalties;
    double bytes;
    int64_t parallelism;
  };
  std::optional<FactorAxes> best;
  Score bestScore{0, 0, 0};
  std::set<FactorAxes> seen;
  for (const FactorAxes &candidate : raw) {
    ValueOrError<FactorAxes> trimmed =
        trimFactorAxes(rule, *mesh, candidate, fixed);
    if (!trimmed) {
      std::string origins;
      for (const std::string &origin : fixedOrigins.lookup(op))
        origins += (origins.empty() ? "" : ", ") + origin;
      op->emitOpError() << "the strategy from " << origins
                        << " is invalid for this op: " << trimmed.error();
      return failure();
    }
    if (!seen.insert(*trimmed).second ||
        !isImplementedSplit(op, rule, *trimmed, fixed, *mesh, isGradOfRing(op)))
      continue;
    ValueOrError<OpLayouts> derived = deriveOpLayouts(rule, *mesh, *trimmed);
    if (!derived)
      continue;
    Score score{countPenalties(op, *derived), 0,
                getParallelism(*mesh, *trimmed)};
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      const Layout &wanted = derived->operands[operand.getOperandNumber()];
      std::optional<Layout> own = getLayout(value);
      if (own && !isAvailable(value, wanted))
        score.bytes += reshardCost(value, *own, wanted);
    }
    auto better = [&]() {
      if (!best)
        return true;
      if (score.penalties != bestScore.penalties)
        return score.penalties < bestScore.penalties;
      if (score.bytes != bestScore.bytes)
        return score.bytes < bestScore.bytes;
      return score.parallelism > bestScore.parallelism;
    };
    if (better()) {
      best = *trimmed;
      bestScore = score;
    }
  }
  Choice choice{*best, {}};
  auto given = givenPartial.find(op);
  if (given != givenPartial.end())
    choice.partial = given->second; // A dist.strategy is kept as given.
  else
    choosePartial(op, rule, fixed, raw, choice, bestScore.penalties,
                  bestScore.bytes);
  LLVM_DEBUG(llvm::dbgs() << op->getName() << ": " << bestScore.bytes
                          << " bytes, " << bestScore.penalties
                          << " penalties, partial over "
                          << printAxes(choice.partial) << "\n");
  return choice;
}

Operation *LayoutAssigner::getRecomputedOriginal(Operation *op) const {
  auto id = op->getAttrOfType<IntegerAttr>(kFwdAttrName);
  if (!id || !op->hasAttr(kRecomputeAttrName))
    return nullptr;
  Operation *original = forwardOps.lookup(id.getInt());
  if (!original || original == op || original->getName() != op->getName() ||
      original->getNumOperands() != op->getNumOperands() ||
      original->getResultTypes() != op->getResultTypes() ||
      !strategies.count(original))
    return nullptr;
  return original;
}

LogicalResult LayoutAssigner::assignOp(Operation *op) {
  if (auto annotate = dyn_cast<AnnotateOp>(op)) {
    LayoutAttr attr = annotate.getLayout();
    if (attr.getMesh() != meshRef)
      return op->emitOpError() << "layout names mesh " << attr.getMesh()
                               << ", not " << meshRef;
    ValueOrError<Layout> layout = attr.toLayout(*mesh);
    if (!layout)
      return op->emitOpError() << layout.error();
    if (!layout->getPartialAxes().empty())
      return op->emitOpError() << "cannot require a partial layout";
    require(annotate.getInputMutable(), *layout);
    layouts.try_emplace(annotate.getResult(), *layout);
    available[annotate.getResult()].push_back(*layout);
    return success();
  }
  if (op->hasTrait<OpTrait::ConstantLike>() && op->getNumOperands() == 0) {
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type)
        return op->emitOpError() << "produces a non-tensor value";
      Layout replicated = Layout::getReplicated(type.getRank());
      layouts.try_emplace(result, replicated);
      available[result].push_back(replicated);
    }
    return success();
  }
  auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
  if (!ruleOp)
    return op->emitOpError()
           << "has no sharding rule, so layout assignment cannot place it";
  OpShardingRule rule = ruleOp.getShardingRule();
  FixedFactors fixed = fixedFactors.lookup(op);
  fixed.resize(rule.getFactors().size());
  FailureOr<Choice> strategy = failure();
  if (Operation *original = getRecomputedOriginal(op)) {
    strategy = strategies.lookup(original);
    for (auto [clone, value] :
         llvm::zip_equal(op->getResults(), original->getResults()))
      recomputedFrom[clone] = value;
  } else
    strategy = chooseStrategy(op, rule, fixed);
  if (failed(strategy))
    return failure();
  if (options.spec.optimizerShard >= 1 && isOptimizerUpdate(op))
    strategy->factors = shardOptimizer(rule, op, strategy->factors);
  if (auto it = gradientAccumulators.find(op); it != gradientAccumulators.end())
    if (std::optional<FactorAxes> sharded =
            shardAccumulator(rule, it->second)) {
      strategy->factors = *sharded;
      strategy->partial.clear();
    }
  ValueOrError<OpLayouts> derived =
      deriveOpLayouts(rule, *mesh, strategy->factors, strategy->partial);
  if (!derived)
    return op->emitOpError() << "invalid strategy: " << derived.error();
  for (OpOperand &operand : op->getOpOperands()) {
    const Layout &layout = derived->operands[operand.getOperandNumber()];
    if (auto error = layout.verifyShape(*mesh, getShape(operand.get())))
      return op->emitOpError() << "operand " << operand.getOperandNumber()
                               << ": " << *error;
    require(operand, layout);
  }
  for (auto [result, layout] :
       llvm::zip_equal(op->getResults(), derived->results)) {
    layouts.try_emplace(result, layout);
    available[result].push_back(layout);
  }
  strategies.try_emplace(op, *strategy);
  return success();
}

LogicalResult LayoutAssigner::assignResults(func::ReturnOp ret) {
  std::map<std::string, unsigned> argByName;
  for (auto [i, name] : llvm::enumerate(argNames))
    if (!name.empty())
      argByName.try_emplace(name, i);
  Block &body = func.getBody().front();
  for (OpOperand &operand : ret->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    Value value = operand.get();
    std::optional<Layout> layout;
    auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttrName);
    if (auto attr = func.getResultAttrOfType<LayoutAttr>(i, kLayoutAttrName)) {
      ValueOrError<Layout> given = attr.toLayout(*mesh);
      if (!given || attr.getMesh() != meshRef)
        return func.emitOpError() << "result " << i << ": invalid layout";
      layout = *given;
    } else if ((name && name.getValue() == "loss") ||
               (!name && i == 0 &&
                cast<RankedTensorType>(value.getType()).getRank() == 0)) {
      layout = Layout::getReplicated(0);
    } else if (name && argByName.count(name.str())) {
      // Loop-carried state comes back in the layout it came in.
      BlockArgument arg = body.getArgument(argByName[name.str()]);
      if (!getLayout(arg)) {
        layouts.try_emplace(arg, Layout::getReplicated(getShape(arg).size()));
        available[arg].push_back(*getLayout(arg));
      }
      layout = *getLayout(arg);
    } else {
      Layout own = *getLayout(value);
      ValueOrError<Layout> whole = Layout::get(*mesh, own.getDims());
      layout = *whole;
    }
    if (auto error = layout->verifyShape(*mesh, getShape(value)))
      return func.emitOpError() << "result " << i << ": " << *error;
    require(operand, *layout);
    resultLayouts.push_back(*layout);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Materialization
//===----------------------------------------------------------------------===//

void LayoutAssigner::materialize() {
  Block &body = func.getBody().front();
  OpBuilder builder(module.getContext());
  std::map<std::pair<void *, std::string>, Value> reshards;
  Operation *lastArgReshard = nullptr;
  auto valueUnder = [&](Value value, const Layout &layout) -> Value {
    Layout own = *getLayout(value);
    if (own == layout)
      return value;
    auto key = std::make_pair(value.getAsOpaquePointer(), layout.toString());
    auto it = reshards.find(key);
    if (it != reshards.end())
      return it->second;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (lastArgReshard)
        builder.setInsertionPointAfter(lastArgReshard);
      else
        builder.setInsertionPointToStart(&body);
    } else {
      builder.setInsertionPointAfter(value.getDefiningOp());
    }
    auto reshard = ReshardOp::create(builder, value.getLoc(), value.getType(),
                                     value, LayoutAttr::get(meshRef, own),
                                     LayoutAttr::get(meshRef, layout));
    if (isa<BlockArgument>(value))
      lastArgReshard = reshard;
    layouts.try_emplace(reshard.getResult(), layout);
    reshards.emplace(key, reshard.getResult());
    return reshard.getResult();
  };
  for (auto &[use, layout] : uses)
    use->set(valueUnder(use->get(), layout));

  for (auto annotate : llvm::make_early_inc_range(body.getOps<AnnotateOp>())) {
    annotate.getResult().replaceAllUsesWith(annotate.getInput());
    annotate.erase();
  }
  for (auto &[op, strategy] : strategies)
    op->setAttr(kStrategyAttrName,
                StrategyAttr::get(meshRef, strategy.factors, strategy.partial));
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    BlockArgument arg = body.getArgument(i);
    Layout layout = getLayout(arg).value_or(
        Layout::getReplicated(getShape(arg).size()));
    func.setArgAttr(i, kLayoutAttrName, LayoutAttr::get(meshRef, layout));
  }
  for (auto [i, layout] : llvm::enumerate(resultLayouts))
    func.setResultAttr(i, kLayoutAttrName, LayoutAttr::get(meshRef, *layout));
}

LogicalResult LayoutAssigner::run() {
  if (failed(setUpEntryAndMesh()) || failed(setUpArguments()) ||
      failed(applyOpEntries()))
    return failure();
  if (options.spec.optimizerShard >= 2)
    collectGradientAccumulators();
  Block &body = func.getBody().front();
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (failed(assignResults(ret)))
        return failure();
      continue;
    }
    if (failed(assignOp(&op)))
      return failure();
  }
  materialize();
  // ZeRO-3 stores shards; the whole copies are gathered per layer and
  // prefetched, so they are not all live at once.
  if (options.spec.optimizerShard >= 3 && options.gatherPerLayer)
    scheduleParameterGathers(func);
  return success();
}

LogicalResult
mlir::loom::dist::assignLayouts(ModuleOp module,
                                const LayoutAssignmentOptions &options) {
  return LayoutAssigner(module, options).run();
}

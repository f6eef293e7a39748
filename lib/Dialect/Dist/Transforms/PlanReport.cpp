//===- PlanReport.cpp - The searched plan, readable -----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Header: the cluster, the mesh and its placement (devices per node on
//    each axis), the outer choices from `dist.plan`.
// 2. Strategies: each op with a `dist.strategy` and a `loom.fwd` that is
//    the first of its id, grouped by layer (the layer of the parameters it
//    consumes, inherited by parameterless ops); when every layer's list of
//    (op, strategy) is the same, only the first layer is shown.
// 3. Collectives: every dist collective of the lowered step grouped by
//    (kind, axes), with its count, its local input bytes, its time priced
//    by the cluster cost model and how (a measured fit or a link model);
//    then where the prices come from: a calibration's measured curves
//    (which ones, measured where and when) or the cluster's sourced peaks.
// 4. Totals from `dist.plan` and `dist.memory`, and the MFU: model
//    FLOPs / (step time · devices · peak FLOP/s of the step's dtype).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/PlanReport.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Analysis/Cost/ClusterCostModel.h"
#include "loom/Dialect/Dist/IR/CollectiveKinds.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Transforms/MultiCopyChoice.h"
#include "loom/Dialect/Dist/Transforms/StrategyCostGraph.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <map>
#include <set>

using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kMemoryAttrName;
using ::mlir::loom::kMultiCopyAttrName;
using ::mlir::loom::kParamAttrName;
using ::mlir::loom::kPipelineAttrName;
using ::mlir::loom::kHandConfigAttrName;
using ::mlir::loom::kPlanAttrName;
using ::mlir::loom::kStrategyAttrName;

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

static std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:F2} {1}", bytes, units[unit]).str();
}

static std::string formatTime(double seconds) {
  if (seconds >= 1)
    return llvm::formatv("{0:F3} s", seconds).str();
  if (seconds >= 1e-3)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F3} us", seconds * 1e6).str();
}

static double getNumber(DictionaryAttr dict, StringRef name) {
  if (!dict)
    return 0;
  Attribute value = dict.get(name);
  if (auto number = dyn_cast_or_null<FloatAttr>(value))
    return number.getValueAsDouble();
  if (auto number = dyn_cast_or_null<IntegerAttr>(value))
    return double(number.getInt());
  return 0;
}

static std::string printStrategy(StrategyAttr strategy) {
  std::string text = "[";
  for (size_t f = 0; f < strategy.getNumFactors(); ++f) {
    text += f ? ", [" : "[";
    for (auto [i, axis] : llvm::enumerate(strategy.getFactorAxes(f)))
      text += (i ? ", " : "") + axis;
    text += "]";
  }
  return text + "]";
}

/// Where the report's prices come from: the calibration's measured curves
/// that apply to a step computing in `dtype` (and when and where they were
/// measured), and what falls back to the cluster's sourced numbers.
static void printPrices(const ClusterSpec &cluster, const std::string &dtype,
                        bool anyMeasuredCollective, llvm::raw_ostream &os) {
  if (!cluster.calibration) {
    os << "Prices: the cluster's peaks times its achievable fractions, and "
          "its links' latency and bandwidth (no measured curves; "
          "`loom-calibrate` writes a cluster spec with them)\n";
    return;
  }
  const Calibration &calibration = *cluster.calibration;
  SmallVector<std::string> measured, fallback;
  if (calibration.gemm.count(dtype))
    measured.push_back("GEMMs in " + dtype + " by (M, N, K)");
  else
    fallback.push_back("GEMMs in " + dtype);
  if (calibration.attention.count(dtype))
    measured.push_back("attention in " + dtype + " by FLOPs");
  else
    fallback.push_back("attention in " + dtype);
  measured.push_back("elementwise and row kernels by bytes");
  if (anyMeasuredCollective)
    measured.push_back("the collectives marked `measured` above");
  os << "Prices: measured on `" << calibration.machine << "` ("
     << calibration.date << ", " << calibration.ranks
     << " rank(s) at once): " << llvm::join(measured, "; ")
     << "; from the cluster's peaks and links: "
     << (fallback.empty() ? std::string()
                          : llvm::join(fallback, ", ") +
                                " (no measured curve for " + dtype + "), ")
     << (anyMeasuredCollective ? "the other collectives" : "every collective")
     << " (the calibration measured ";
  SmallVector<std::string> kinds;
  for (const auto &[kind, fits] : calibration.collectives) {
    SmallVector<std::string> sizes;
    for (const CollectiveFit &fit : fits)
      sizes.push_back(std::to_string(fit.groupSize));
    kinds.push_back(kind + " of " + llvm::join(sizes, ", "));
  }
  os << (kinds.empty() ? std::string("no collective")
                       : llvm::join(kinds, "; ") + " ranks")
     << ", inside one node)\n";
}

LogicalResult mlir::loom::dist::writePlanReport(ModuleOp module,
                                                const ClusterSpec &cluster,
                                                llvm::raw_ostream &os) {
  SmallVector<MeshOp> meshOps(module.getOps<MeshOp>());
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (meshOps.size() != 1 || !plan)
    return module.emitError()
           << "no searched plan to report (one dist.mesh and a #dist.plan "
              "are needed; run dist-search-strategy first)";
  ValueOrError<Mesh> mesh = meshOps[0].getMesh();
  if (!mesh)
    return meshOps[0].emitOpError() << mesh.error();
  func::FuncOp func = module.lookupSymbol<func::FuncOp>("train_step");
  if (!func)
    func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func || func.isExternal())
    return module.emitError() << "no entry function to report";
  ValueOrError<ClusterCostModel> model = ClusterCostModel::get(cluster, *mesh);
  if (!model)
    return module.emitError() << model.error();
  auto memory = module->getAttrOfType<DictionaryAttr>(kMemoryAttrName);
  auto pipeline = module->getAttrOfType<PipelineAttr>(kPipelineAttrName);
  int64_t stages = pipeline ? pipeline.getStages() : 1;

  // 1. Header.
  os << "Plan: " << mesh->getNumDevices() * stages << " devices of cluster `"
     << cluster.name << "` (" << cluster.devicesPerNode << " x "
     << cluster.device.name << " per node)\n";
  os << "Mesh:";
  for (auto [i, axis] : llvm::enumerate(mesh->getAxes())) {
    int64_t inside = model->getPlacement().devicesPerNodeOnAxis[i];
    os << (i ? ", " : " ") << axis.name << "=" << axis.size << " ("
       << (inside >= axis.size ? "inside a node"
           : inside == 1       ? "across nodes"
                               : llvm::formatv("{0} per node, across nodes",
                                               inside)
                                     .str())
       << ")";
  }
  if (pipeline)
    os << " per stage; pp=" << stages << " (the major axis)";
  os << "; " << model->getPlacement().numNodes * stages << " node(s)\n";
  os << "Choices: ZeRO-" << plan.getZero() << ", recompute "
     << (plan.getRecompute() ? "on (all layers)" : "off") << "\n";
  if (pipeline) {
    // The stages, their layers and what the schedule's simulation predicts.
    PipelinePredictionAttr predicted = pipeline.getPredicted();
    ArrayRef<LayerRange> layers = pipeline.getStageLayers();
    os << "Pipeline: " << stages << " stages, " << pipeline.getMicroBatches()
       << " micro-batches, "
       << ::loom::pipeline::getScheduleKindName(pipeline.getSchedule());
    int64_t chunks = pipeline.getVirtualStages();
    if (chunks > 1)
      os << " with " << chunks << " chunks per stage (chunk c on stage c mod "
         << stages << ")";
    // The search's prediction, when it chose the pipeline (a hand-given
    // split has none).
    if (predicted)
      os << "; bubble " << formatTime(predicted.getBubble());
    os << "\n";
    for (auto [s, range] : llvm::enumerate(layers)) {
      int64_t stage = int64_t(s) % stages;
      if (chunks > 1)
        os << llvm::formatv("  chunk {0} (stage {1})", s, stage);
      else
        os << llvm::formatv("  stage {0}", s);
      os << llvm::formatv(": layers [{0}, {1}){2}{3}", range.first, range.end,
                          s == 0 ? " + embedding" : "",
                          s + 1 == layers.size() ? " + head" : "");
      if (predicted)
        os << llvm::formatv(
            "; F {0}, B {1} per micro-batch; {2} per device",
            formatTime(predicted.getStageForwardS()[s]),
            formatTime(predicted.getStageBackwardS()[s]),
            formatBytes(double(predicted.getStageMemoryBytes()[stage])));
      os << "\n";
    }
  }
  os << "\n";

  // 2. Strategies by layer.
  Block &body = func.getBody().front();
  llvm::DenseSet<int64_t> seen;
  std::map<int64_t, std::vector<std::string>> byLayer;
  std::vector<std::pair<int64_t, std::string>> order;
  int64_t layer = -1;
  for (Operation &op : body) {
    auto id = op.getAttrOfType<IntegerAttr>(kFwdAttrName);
    auto strategy = op.getAttrOfType<StrategyAttr>(kStrategyAttrName);
    if (!id || !strategy || !seen.insert(id.getInt()).second)
      continue;
    for (Value operand : op.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner() == &body)
        if (auto param = func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                                          kParamAttrName))
          layer = getLayerIndex(param.getName());
    std::string line = llvm::formatv("{0,-20} {1}", op.getName().getStringRef(),
                                     printStrategy(strategy))
                           .str();
    byLayer[layer].push_back(line);
    order.emplace_back(layer, line);
  }
  std::optional<std::vector<std::string>> common;
  bool identical = true;
  int64_t numLayers = 0;
  for (auto &[index, lines] : byLayer) {
    if (index < 0)
      continue;
    ++numLayers;
    if (!common)
      common = lines;
    else if (*common != lines)
      identical = false;
  }
  os << "Strategies (mesh axes per sharding-rule factor of each forward op"
     << (identical && numLayers > 1
             ? llvm::formatv("; the {0} layers are identical, the first "
                             "shown",
                             numLayers)
                   .str()
             : std::string())
     << "):\n";
  int64_t shownLayer = byLayer.size() > 1 ? std::next(byLayer.begin(), 1)->first
                                          : -1;
  int64_t previous = -2;
  for (auto &[index, line] : order) {
    if (index >= 0 && identical && numLayers > 1 && index != shownLayer)
      continue;
    if (index != previous)
      os << (index < 0 ? "  outside layers:\n"
                       : llvm::formatv("  layer {0}:\n", index).str());
    previous = index;
    os << "    " << line << "\n";
  }

  // 3. Collectives.
  struct Group {
    int64_t count = 0;
    double bytes = 0, seconds = 0;
    /// How the cost model priced them (`measured`, `ring`, ...).
    std::set<std::string> algorithms;
  };
  std::map<std::string, Group> groups;
  for (Operation &op : body) {
    std::optional<CollectiveKind> kind = getCollectiveKind(&op);
    auto axesAttr = op.getAttrOfType<ArrayAttr>("axes");
    if (!kind || !axesAttr || op.getNumOperands() == 0 ||
        op.getNumResults() == 0)
      continue;
    Layout::AxisList axes;
    for (Attribute axis : axesAttr)
      axes.push_back(cast<StringAttr>(axis).str());
    auto bytesOf = [](Type type) {
      auto tensor = cast<RankedTensorType>(type);
      return double(getNumElements(tensor.getShape())) *
             getElementBytes(tensor);
    };
    double before = bytesOf(op.getOperand(0).getType());
    double after = bytesOf(op.getResult(0).getType());
    std::string key = op.getName().getStringRef().drop_front(5).str() + " [" +
                      llvm::join(axes, ", ") + "]";
    Group &group = groups[key];
    ++group.count;
    group.bytes += before;
    CollectiveTime time = model->getCollectiveTime(*kind, axes, before, after);
    group.seconds += time.seconds;
    group.algorithms.insert(
        std::string(stringifyCollectiveAlgorithm(time.algorithm)));
  }
  os << "\nCollectives per step (local input bytes, time by the cost model, "
        "priced as):\n";
  if (groups.empty())
    os << "  none (or not lowered yet)\n";
  for (auto &[key, group] : groups)
    os << llvm::formatv("  {0,-28} x{1,-5} {2,12}  {3,10}  {4}\n", key,
                        group.count, formatBytes(group.bytes),
                        formatTime(group.seconds),
                        llvm::join(group.algorithms, ", "));
  // The step's precision is the type its GEMMs compute in (they are nearly
  // all of its FLOPs): the first op of the step may be a batch slice of a
  // split step, or an f32 master weight's cast in a mixed-precision one.
  std::string dtype = "f32";
  for (Operation &op : body)
    if (op.getAttr(kFwdAttrName) && isa<MatmulOp>(op)) {
      std::string type = getComputeTypeName(&op);
      if (!type.empty())
        dtype = type;
      break;
    }
  bool anyMeasuredCollective = llvm::any_of(groups, [](const auto &entry) {
    return entry.second.algorithms.count("measured") > 0;
  });
  printPrices(cluster, dtype, anyMeasuredCollective, os);

  // 4. Totals.
  double step = plan.getStepTime();
  if (pipeline)
    os << "\nPredicted step time: " << formatTime(step)
       << " (the simulated schedule; its slowest stage computes "
       << formatTime(plan.getCompute()) << " and communicates "
       << formatTime(plan.getComm()) << "; bubble "
       << formatTime(plan.getBubble()) << ")\n";
  else
    os << "\nPredicted step time: " << formatTime(step) << " = compute "
       << formatTime(plan.getCompute()) << " + communication "
       << formatTime(plan.getComm()) << " + bubble "
       << formatTime(plan.getBubble()) << "\n";
  // What multi-copy interleave's copies could hide (SearchStrategy.cpp):
  // a bound beside the step time, not part of it.
  if (auto copies = module->getAttrOfType<DictionaryAttr>(kMultiCopyAttrName)) {
    auto count = copies.getAs<IntegerAttr>("copies");
    auto hidden = copies.getAs<FloatAttr>("hidden_comm_s");
    auto layerComm = copies.getAs<FloatAttr>("layer_comm_s");
    auto layerCompute = copies.getAs<FloatAttr>("layer_compute_s");
    if (count && hidden && layerComm && layerCompute)
      os << "Multi-copy interleave: " << count.getInt()
         << " copies; their layers compute "
         << formatTime(layerCompute.getValueAsDouble()) << " and communicate "
         << formatTime(layerComm.getValueAsDouble())
         << (pipeline ? " on the slowest stage" : "") << ", of which up to "
         << formatTime(hidden.getValueAsDouble())
         << " could overlap another copy's compute (not subtracted: no "
            "backend overlaps collectives yet)\n";
  }
  // The search's choice of copies for a step without them: what each count
  // would cost in the layers, and the config key that applies it.
  if (auto choice =
          module->getAttrOfType<DictionaryAttr>(kMultiCopyChoiceAttrName)) {
    auto count = choice.getAs<IntegerAttr>("copies");
    auto stepTime = choice.getAs<FloatAttr>("step_time_s");
    auto priced = choice.getAs<ArrayAttr>("priced");
    if (count && stepTime && priced) {
      os << "Multi-copy interleave (searched): "
         << (count.getInt() > 1 ? "" : "no gain; ") << count.getInt()
         << (count.getInt() > 1 ? " copies" : " copy") << " predicted step "
         << formatTime(stepTime.getValueAsDouble());
      if (count.getInt() > 1)
        os << " (apply with \"fine_grain_interleave\": " << count.getInt()
           << ")";
      os << "; layers compute + exposed communication:";
      for (auto price : priced.getAsRange<DictionaryAttr>()) {
        auto copies = price.getAs<IntegerAttr>("copies");
        auto compute = price.getAs<FloatAttr>("compute_s");
        auto exposed = price.getAs<FloatAttr>("exposed_comm_s");
        if (copies && compute && exposed)
          os << " N=" << copies.getInt() << " "
             << formatTime(compute.getValueAsDouble()) << " + "
             << formatTime(exposed.getValueAsDouble());
      }
      os << "\n";
    }
  }
  // How much of it the backward hides (docs/CostModel.md, "Overlapped
  // gradient reduction").
  if (auto overlap =
          module->getAttrOfType<DictionaryAttr>(kCommOverlapAttrName)) {
    double sync = getNumber(overlap, "sync_s");
    double exposed = getNumber(overlap, "exposed_s");
    double hidden = sync - exposed;
    double capMB = getNumber(overlap, "bucket_cap_mb");
    std::string cap = capMB == std::floor(capMB)
                          ? std::to_string(static_cast<int64_t>(capMB))
                          : llvm::formatv("{0:F3}", capMB).str();
    os << "Exposed communication: "
       << formatTime(plan.getComm() - hidden) << " of "
       << formatTime(plan.getComm()) << " (data-parallel gradient reduction "
       << formatTime(sync) << ", " << formatTime(hidden)
       << " of it hidden behind the backward in "
       << static_cast<int64_t>(getNumber(overlap, "buckets"))
       << " buckets of " << cap
       << " MiB); step with overlap: " << formatTime(step - hidden) << "\n";
  }
  // The closest Megatron-style hand config (`hand-configs`), against the
  // searched plan as the same first search priced it.
  if (auto hand = module->getAttrOfType<DictionaryAttr>(kHandConfigAttrName)) {
    auto config = hand.getAs<StringAttr>("config");
    auto time = hand.getAs<FloatAttr>("step_time_s");
    auto searched = hand.getAs<FloatAttr>("searched_step_time_s");
    auto priced = hand.getAs<IntegerAttr>("priced");
    if (config && time && searched && priced && searched.getValueAsDouble() > 0)
      os << llvm::formatv(
          "Closest hand config: {0}, {1} per step, {2:F1}% slower than the "
          "searched plan's {3} (both as the search ranks plans, "
          "before the step is split into micro-batches; best of {4} "
          "Megatron-style configs: t in 1, 2, 4, 8 inside a node, p, d, "
          "one sample per micro-batch)\n",
          config.getValue(), formatTime(time.getValueAsDouble()),
          100 * (time.getValueAsDouble() / searched.getValueAsDouble() - 1),
          formatTime(searched.getValueAsDouble()), priced.getInt());
  }
  os << (pipeline ? "Memory per device (the fullest stage): "
                  : "Memory per device: ")
     << formatBytes(double(plan.getMemoryBytesPerDevice()))
     << " (parameters " << formatBytes(getNumber(memory, "parameters"))
     << ", gradients " << formatBytes(getNumber(memory, "gradients"))
     << ", optimizer states "
     << formatBytes(getNumber(memory, "optimizer_states")) << ", activations "
     << formatBytes(getNumber(memory, "activations")) << ", transients "
     << formatBytes(getNumber(memory, "transients")) << "); capacity "
     << formatBytes(double(cluster.device.memoryBytes)) << "\n";
  double flops = plan.getModelFlops();
  auto peak = cluster.device.peakFlopsPerSecond.find(dtype);
  os << llvm::formatv("Model FLOPs per step: {0:E3}", flops);
  if (peak != cluster.device.peakFlopsPerSecond.end() && step > 0)
    os << llvm::formatv("; MFU {0:F1}% of the {1} peak",
                        100 * flops /
                            (step * mesh->getNumDevices() * stages *
                             peak->second),
                        dtype);
  os << "\n";
  return success();
}

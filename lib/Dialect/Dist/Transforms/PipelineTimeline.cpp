//===- PipelineTimeline.cpp - `loomc --timeline` --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Read `dist.pipeline`: stages, micro-batches, schedule.
// 2. Unit times: the prediction's per-stage times and hop latency when the
//    search wrote them; else price the pipelined IR: each op with
//    `dist.stage` and `loom.micro_batch` at its local shapes (compute by
//    CostOpInterface, collectives by the cluster model over their axes,
//    `dist.send` as one hop), summed per stage and unit kind, divided by M.
// 3. Simulate the schedule and write the trace (Analysis/Pipeline/
//    Timeline.h) for the ranks of the mesh (all ranks of a stage share
//    its events).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/PipelineTimeline.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Analysis/Cost/ClusterCostModel.h"
#include "loom/Analysis/Pipeline/Timeline.h"
#include "loom/Dialect/Dist/IR/CollectiveKinds.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Dist/Transforms/StrategyCostGraph.h"
#include "loom/Interfaces/CostOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

using ::mlir::loom::kBackwardAttrName;
using ::mlir::loom::kMicroBatchAttrName;
using ::mlir::loom::kPipelineAttrName;
using ::mlir::loom::kStageAttrName;

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

static double getLocalBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return double(getNumElements(tensor.getShape())) * getElementBytes(tensor);
}

/// The seconds one op of the pipelined program takes on its rank.
static FailureOr<double> priceOp(Operation *op, const ClusterCostModel &model,
                                 int64_t ranksPerStage) {
  if (isa<SendOp>(op)) {
    // Consecutive stages are ranksPerStage ranks apart.
    double bytes = op->getNumOperands() ? getLocalBytes(op->getOperand(0).getType())
                                        : 0.0;
    return model.getPointToPointSeconds(bytes, ranksPerStage);
  }
  if (std::optional<CollectiveKind> kind = getCollectiveKind(op)) {
    auto axesAttr = op->getAttrOfType<ArrayAttr>("axes");
    if (!axesAttr || op->getNumOperands() == 0 || op->getNumResults() == 0)
      return 0.0;
    Layout::AxisList axes;
    for (Attribute axis : axesAttr)
      if (auto text = dyn_cast<StringAttr>(axis))
        axes.push_back(text.str());
    return model
        .getCollectiveTime(*kind, axes,
                           getLocalBytes(op->getOperand(0).getType()),
                           getLocalBytes(op->getResult(0).getType()))
        .seconds;
  }
  auto costOp = dyn_cast<CostOpInterface>(op);
  if (!costOp)
    return 0.0;
  OpCost cost = costOp.getCost(getGlobalShapes(op));
  ValueOrError<double> seconds =
      model.getComputeSeconds(cost, getComputeTypeName(op));
  if (!seconds) {
    op->emitOpError() << "cannot be priced for the timeline: "
                      << seconds.error();
    return failure();
  }
  return *seconds;
}

FailureOr<PipelineTimelineInput>
mlir::loom::dist::getPipelineTimelineInput(ModuleOp module,
                                           const ClusterSpec &cluster) {
  // 1. The pipeline.
  Attribute raw = module->getAttr(kPipelineAttrName);
  if (!raw)
    return module.emitError()
           << "no `dist.pipeline` attribute: the module has no pipeline plan "
              "to draw (search with pipeline stages or give --pipeline-stages)";
  auto attr = dyn_cast<PipelineAttr>(raw);
  if (!attr)
    return module.emitError() << "`dist.pipeline`: expected a "
                                 "#dist.pipeline, found "
                              << raw;
  PipelineTimelineInput input;
  int64_t stages = attr.getStages();
  input.microBatches = attr.getMicroBatches();
  input.schedule = attr.getSchedule();
  input.virtualStages = attr.getVirtualStages();
  int64_t chunks = stages * input.virtualStages;
  // The ranks of one stage: the mesh without its pipeline axis.
  std::optional<Mesh> mesh;
  for (MeshOp meshOp : module.getOps<MeshOp>())
    if (ValueOrError<Mesh> value = meshOp.getMesh()) {
      mesh = *value;
      break;
    }
  if (mesh) {
    input.ranksPerStage = mesh->getNumDevices();
    if (std::optional<size_t> axis = mesh->findAxis(attr.getAxis().str()))
      input.ranksPerStage /= mesh->getAxis(*axis).size;
  }

  // 2. Unit times: the prediction (one entry per chunk, as the attribute
  // guarantees)...
  if (PipelinePredictionAttr predicted = attr.getPredicted()) {
    for (int64_t s = 0; s < chunks; ++s)
      input.stages.push_back({predicted.getStageForwardS()[s],
                              predicted.getStageBackwardS()[s]});
    input.p2pSeconds = predicted.getP2P();
    input.predicted = true;
    return input;
  }

  // ... or the IR priced op by op.
  if (!mesh)
    return module.emitError() << "no `dist.mesh` to price the pipelined "
                                 "program on, and no predicted stage times";
  ValueOrError<ClusterCostModel> model = ClusterCostModel::get(cluster, *mesh);
  if (!model)
    return module.emitError() << model.error();
  auto func = module.lookupSymbol<func::FuncOp>("train_step");
  if (!func || func.isExternal())
    return module.emitError()
           << "no `train_step` to estimate the pipeline's unit times from";
  input.stages.assign(chunks, {});
  std::vector<double> hops;
  WalkResult walk = func.walk([&](Operation *op) {
    auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName);
    if (!stage || !op->hasAttr(kMicroBatchAttrName))
      return WalkResult::advance();
    if (stage.getInt() < 0 || stage.getInt() >= stages) {
      op->emitOpError() << "dist.stage = " << stage.getInt()
                        << " is outside the " << stages << " stages";
      return WalkResult::interrupt();
    }
    FailureOr<double> seconds = priceOp(op, *model, input.ranksPerStage);
    if (failed(seconds))
      return WalkResult::interrupt();
    if (isa<SendOp>(op)) {
      // A hop is the simulation's latency, not a unit's work.
      hops.push_back(*seconds);
      return WalkResult::advance();
    }
    int64_t chunk = getOpChunk(op);
    if (chunk < 0 || chunk >= input.virtualStages) {
      op->emitOpError() << "dist.chunk = " << chunk << " is outside the "
                        << input.virtualStages << " chunk(s) per stage";
      return WalkResult::interrupt();
    }
    pipeline::StageTimes &times = input.stages[chunk * stages + stage.getInt()];
    (op->hasAttr(kBackwardAttrName) ? times.backward : times.forward) +=
        *seconds / double(input.microBatches);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (double hop : hops)
    input.p2pSeconds = std::max(input.p2pSeconds, hop);
  return input;
}

LogicalResult mlir::loom::dist::writePipelineTimeline(ModuleOp module,
                                                      const ClusterSpec &cluster,
                                                      StringRef path) {
  FailureOr<PipelineTimelineInput> input =
      getPipelineTimelineInput(module, cluster);
  if (failed(input))
    return failure();
  // 3. Simulate and write.
  pipeline::Simulation simulation = pipeline::simulatePipeline(
      input->schedule, input->stages, input->microBatches, input->p2pSeconds,
      input->virtualStages);
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
  if (!file)
    return module.emitError() << "cannot write the timeline `" << path
                              << "`: " << error;
  file->os() << pipeline::getTimelineJSON(simulation, input->schedule,
                                          input->microBatches,
                                          input->ranksPerStage);
  file->keep();
  return success();
}

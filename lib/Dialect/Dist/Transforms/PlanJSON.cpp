//===- PlanJSON.cpp - The partition plan as JSON --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Values are named by position, since the IR has no stable SSA names:
// `arg N` for arguments and `op N#R` for result R of the op at position N of
// the entry block. Layouts are written as {"dims": [[axes]...], "partial":
// [axes]}. Bytes of a reshard are estimateReshardBytes' figure (layout
// assignment compares the redistribution planner's prices); bytes of a
// lowered collective are the local bytes of its input on each rank.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/PlanJSON.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Analysis/Strategy/FollowProducers.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Transforms/MultiCopyChoice.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <nlohmann/json.hpp>

using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kLayoutAttrName;
using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;
using ::mlir::loom::kPipelineAttrName;
using ::mlir::loom::kPlanAttrName;
using ::mlir::loom::kStrategyAttrName;

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;
using ojson = nlohmann::ordered_json;

static ojson layoutToJSON(LayoutAttr layout) {
  ojson dims = ojson::array();
  for (size_t dim = 0; dim < layout.getRank(); ++dim) {
    ojson axes = ojson::array();
    for (StringRef axis : layout.getDimAxes(dim))
      axes.push_back(axis.str());
    dims.push_back(axes);
  }
  ojson partial = ojson::array();
  for (StringRef axis : layout.getPartialAxes())
    partial.push_back(axis.str());
  return {{"dims", dims}, {"partial", partial}};
}

static ojson shapeToJSON(Type type) {
  ojson shape = ojson::array();
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    for (int64_t size : tensor.getShape())
      shape.push_back(size);
  return shape;
}

static int64_t getBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  return tensor.getNumElements() *
         std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

LogicalResult mlir::loom::dist::writePlanJSON(ModuleOp module,
                                              llvm::raw_ostream &os) {
  SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  if (meshes.size() != 1 || funcs.size() != 1)
    return module.emitError()
           << "plan JSON needs a module with one dist.mesh and one function "
              "(run dist-insert-reshards first)";
  ValueOrError<Mesh> mesh = meshes[0].getMesh();
  if (!mesh)
    return meshes[0].emitOpError() << mesh.error();
  func::FuncOp func = funcs[0];
  Block &body = func.getBody().front();

  ojson plan;
  ojson axes = ojson::array();
  for (const Mesh::Axis &axis : mesh->getAxes())
    axes.push_back({{"name", axis.name}, {"size", axis.size}});
  plan["mesh"] = {{"name", meshes[0].getSymName().str()},
                  {"axes", axes},
                  {"devices", mesh->getNumDevices()}};
  plan["entry"] = func.getSymName().str();

  llvm::DenseMap<Value, std::string> names;
  ojson arguments = ojson::array();
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    names[arg] = "arg " + std::to_string(i);
    ojson entry = {{"index", i}};
    if (auto param = func.getArgAttrOfType<ParamAttr>(i, kParamAttrName))
      entry["name"] = param.getName().str();
    else if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName))
      entry["name"] = name.str();
    else if (auto role = func.getArgAttrOfType<InputRoleAttr>(i, kInputAttrName))
      entry["name"] = stringifyInputRole(role.getValue()).str();
    entry["shape"] = shapeToJSON(arg.getType());
    if (auto layout = func.getArgAttrOfType<LayoutAttr>(i, kLayoutAttrName))
      entry["layout"] = layoutToJSON(layout);
    arguments.push_back(entry);
  }
  plan["arguments"] = arguments;

  ojson ops = ojson::array(), reshards = ojson::array(),
        collectives = ojson::array();
  double reshardBytes = 0;
  int64_t collectiveBytes = 0;
  size_t position = 0;
  for (Operation &op : body) {
    ++position;
    for (OpResult result : op.getResults())
      names[result] =
          "op " + std::to_string(position - 1) + "#" +
          std::to_string(result.getResultNumber());
    auto operandNames = [&]() {
      ojson list = ojson::array();
      for (Value operand : op.getOperands())
        list.push_back(names.lookup(operand));
      return list;
    };
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      double bytes = 0;
      ValueOrError<Layout> from = reshard.getFrom().toLayout(*mesh);
      ValueOrError<Layout> to = reshard.getTo().toLayout(*mesh);
      auto type = cast<RankedTensorType>(reshard.getType());
      if (from && to)
        bytes = estimateReshardBytes(
            *mesh, *from, *to, type.getShape().vec(),
            std::max<int64_t>(1, type.getElementTypeBitWidth() / 8));
      reshardBytes += bytes;
      reshards.push_back({{"index", position - 1},
                          {"value", names.lookup(reshard.getInput())},
                          {"shape", shapeToJSON(type)},
                          {"from", layoutToJSON(reshard.getFrom())},
                          {"to", layoutToJSON(reshard.getTo())},
                          {"bytes", bytes}});
      continue;
    }
    if (op.getDialect() && op.getDialect()->getNamespace() == "dist" &&
        !isa<AnnotateOp, AxisIndexOp>(op) && op.getNumOperands() > 0) {
      ojson entry = {{"index", position - 1},
                     {"op", op.getName().getStringRef().str()}};
      for (NamedAttribute attr : op.getAttrs()) {
        if (auto list = dyn_cast<ArrayAttr>(attr.getValue())) {
          ojson values = ojson::array();
          for (Attribute item : list)
            if (auto text = dyn_cast<StringAttr>(item))
              values.push_back(text.str());
          entry[attr.getName().str()] = values;
        } else if (auto integer = dyn_cast<IntegerAttr>(attr.getValue())) {
          entry[attr.getName().str()] = integer.getInt();
        }
      }
      int64_t bytes = getBytes(op.getOperand(0).getType());
      collectiveBytes += bytes;
      entry["shape"] = shapeToJSON(op.getOperand(0).getType());
      entry["bytes"] = bytes;
      collectives.push_back(entry);
      continue;
    }
    auto strategy = op.getAttrOfType<StrategyAttr>(kStrategyAttrName);
    if (!strategy)
      continue;
    ojson entry = {{"index", position - 1},
                   {"op", op.getName().getStringRef().str()}};
    if (auto fwd = op.getAttrOfType<IntegerAttr>(kFwdAttrName))
      entry["fwd"] = fwd.getInt();
    ojson params = ojson::array();
    for (Value operand : op.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand))
        if (auto param =
                func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                                 kParamAttrName))
          params.push_back(param.getName().str());
    if (!params.empty())
      entry["params"] = params;
    ojson factors = ojson::array();
    for (const std::vector<std::string> &list : strategy.getAllFactorAxes())
      factors.push_back(list);
    entry["strategy"] = factors;
    // Pending sums the op keeps (a linear op on partial operands).
    if (!strategy.getPartial().empty())
      entry["partial"] = strategy.getPartialAxes();
    entry["operands"] = operandNames();
    ops.push_back(entry);
  }
  plan["ops"] = ops;

  ojson results = ojson::array();
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    ojson entry = {{"index", i}};
    if (auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttrName))
      entry["name"] = name.str();
    if (auto layout = func.getResultAttrOfType<LayoutAttr>(i, kLayoutAttrName))
      entry["layout"] = layoutToJSON(layout);
    results.push_back(entry);
  }
  plan["results"] = results;
  plan["reshards"] = reshards;
  plan["collectives"] = collectives;
  plan["totals"] = {{"reshards", reshards.size()},
                    {"reshard_bytes", reshardBytes},
                    {"collectives", collectives.size()},
                    {"collective_bytes", collectiveBytes}};
  // What dist-search-strategy predicted and chose, when it ran.
  if (auto choice = module->getAttrOfType<PlanAttr>(kPlanAttrName)) {
    // Keys in alphabetical order, as the plan JSON has always listed them.
    plan["predicted"] = {
        {"bubble_s", choice.getBubble()},
        {"comm_s", choice.getComm()},
        {"compute_s", choice.getCompute()},
        {"memory_bytes_per_device", choice.getMemoryBytesPerDevice()},
        {"model_flops_per_step", choice.getModelFlops()},
        {"step_time_s", choice.getStepTime()}};
    // The search's memory per device by category (its pipelines: the
    // fullest stage's), in bytes; they add up to memory_bytes_per_device.
    if (auto memory = module->getAttrOfType<DictionaryAttr>(kMemoryAttrName)) {
      ojson breakdown = ojson::object();
      for (StringRef key : {"activations", "gradients", "optimizer_states",
                            "parameters", "transients"})
        if (auto value = memory.getAs<IntegerAttr>(key))
          breakdown[key.str()] = value.getInt();
      plan["predicted"]["memory_breakdown"] = breakdown;
    }
    // What multi-copy interleave's copies could hide (a bound, not in
    // step_time_s: docs/Partitioning.md, "Multi-copy interleave").
    if (auto copies =
            module->getAttrOfType<DictionaryAttr>(kMultiCopyAttrName)) {
      ojson entry = ojson::object();
      if (auto count = copies.getAs<IntegerAttr>("copies"))
        entry["copies"] = count.getInt();
      for (StringRef key : {"hidden_comm_s", "layer_comm_s", "layer_compute_s"})
        if (auto value = copies.getAs<FloatAttr>(key))
          entry[key.str()] = value.getValueAsDouble();
      plan["predicted"]["multi_copy"] = entry;
    }
    // The search's choice of copies for a step without them (docs/Search.md,
    // "Multi-copy interleave in the search"), with each count it priced.
    if (auto choice =
            module->getAttrOfType<DictionaryAttr>(kMultiCopyChoiceAttrName)) {
      ojson entry = ojson::object();
      if (auto count = choice.getAs<IntegerAttr>("copies"))
        entry["copies"] = count.getInt();
      if (auto step = choice.getAs<FloatAttr>("step_time_s"))
        entry["step_time_s"] = step.getValueAsDouble();
      ojson priced = ojson::array();
      if (auto list = choice.getAs<ArrayAttr>("priced"))
        for (auto price : list.getAsRange<DictionaryAttr>()) {
          ojson item = ojson::object();
          if (auto count = price.getAs<IntegerAttr>("copies"))
            item["copies"] = count.getInt();
          for (StringRef key : {"compute_s", "exposed_comm_s"})
            if (auto value = price.getAs<FloatAttr>(key))
              item[key.str()] = value.getValueAsDouble();
          priced.push_back(item);
        }
      entry["priced"] = priced;
      plan["predicted"]["multi_copy_choice"] = entry;
    }
    plan["plan"] = {{"recompute", choice.getRecompute()},
                    {"zero", choice.getZero()}};
  }
  // The pipeline the search chose (docs/Pipeline.md): stages with their
  // layers and predicted times and memory.
  if (auto pipeline = module->getAttrOfType<PipelineAttr>(kPipelineAttrName)) {
    ojson object = {
        {"micro_batches", pipeline.getMicroBatches()},
        {"stages", pipeline.getStages()},
        {"schedule", ::loom::pipeline::getScheduleKindName(
                         pipeline.getSchedule())},
        {"axis", pipeline.getAxis().str()}};
    // Interleaved 1F1B: stage_list then holds one entry per chunk, on stage
    // chunk mod stages.
    if (pipeline.getVirtualStages() > 1)
      object["virtual_stages"] = pipeline.getVirtualStages();
    PipelinePredictionAttr predicted = pipeline.getPredicted();
    if (predicted) {
      object["predicted_step_time_s"] = predicted.getStepTime();
      object["predicted_bubble_s"] = predicted.getBubble();
    }
    // A hand-given split has no prediction: its numbers are null.
    auto element = [](auto list, size_t index) -> ojson {
      if (index >= list.size())
        return nullptr;
      return list[index];
    };
    ojson stageList = ojson::array();
    for (auto [index, range] : llvm::enumerate(pipeline.getStageLayers())) {
      ArrayRef<double> forward, backward;
      ArrayRef<int64_t> memory;
      if (predicted) {
        forward = predicted.getStageForwardS().asArrayRef();
        backward = predicted.getStageBackwardS().asArrayRef();
        memory = predicted.getStageMemoryBytes().asArrayRef();
      }
      size_t stage = index % size_t(pipeline.getStages());
      ojson entry = {{"stage", stage},
                     {"layers", {range.first, range.end}},
                     {"forward_s", element(forward, index)},
                     {"backward_s", element(backward, index)},
                     {"memory_bytes", element(memory, stage)}};
      if (pipeline.getVirtualStages() > 1)
        entry["chunk"] = index;
      stageList.push_back(entry);
    }
    object["stage_list"] = stageList;
    plan["pipeline"] = object;
  }
  os << plan.dump(2) << "\n";
  return success();
}

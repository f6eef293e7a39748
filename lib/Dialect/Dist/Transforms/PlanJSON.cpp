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

namespace {
/// Writes JSON text exactly as nlohmann's `dump(2)` prints it (two-space
/// indents, one member or item per line, `[]` and `{}` when empty), piece
/// by piece instead of from a document. The plan lists every op of the
/// step: 337,489 entries for GPT-3 175B on 1024 GPUs with 48 micro-batches,
/// where building that document, printing and destroying it took most of
/// the pass (docs/Performance.md). The small parts (mesh, arguments,
/// totals, pipeline...) are still nlohmann documents, printed re-indented.
class PlanTextWriter {
public:
  explicit PlanTextWriter(llvm::raw_ostream &os) : os(os) {}

  /// A JSON string. Plain text (printable ASCII without quotes or
  /// backslashes: op, axis and value names) is written as is; anything
  /// else goes through nlohmann for the same escapes.
  void string(StringRef text) {
    bool plain = llvm::all_of(text, [](char c) {
      auto byte = static_cast<unsigned char>(c);
      return byte >= 0x20 && byte < 0x80 && c != '"' && c != '\\';
    });
    if (plain)
      os << '"' << text << '"';
    else
      os << ojson(text.str()).dump();
  }

  void integer(int64_t value) { os << value; }

  /// `value` as dump(2) prints it, every line after the first indented by
  /// `indent` more (its place in the enclosing document).
  void document(const ojson &value, unsigned indent) {
    std::string text = value.dump(2);
    StringRef rest = text;
    while (true) {
      auto [line, tail] = rest.split('\n');
      os << line;
      if (line.size() == rest.size())
        break;
      os << '\n';
      os.indent(indent);
      rest = tail;
    }
  }

  /// An array at `indent` (the indent of the line it starts on): each of
  /// `items` written by `writeItem` on its own line at `indent + 2`.
  template <typename Range, typename WriteItem>
  void array(Range &&items, unsigned indent, WriteItem writeItem) {
    bool empty = true;
    for (auto &&item : items) {
      os << (empty ? "[\n" : ",\n");
      empty = false;
      os.indent(indent + 2);
      writeItem(item);
    }
    if (empty) {
      os << "[]";
      return;
    }
    os << '\n';
    os.indent(indent);
    os << ']';
  }

  /// An array of strings at `indent`.
  void stringArray(ArrayAttr names, unsigned indent) {
    array(names, indent,
          [&](Attribute name) { string(cast<StringAttr>(name).getValue()); });
  }

  /// Starts the next member of the object at `indent` that `object`
  /// tracks (true until its first member), and writes its key.
  void key(bool &firstMember, unsigned indent, StringRef name) {
    os << (firstMember ? "{\n" : ",\n");
    firstMember = false;
    os.indent(indent + 2);
    string(name);
    os << ": ";
  }

  /// Closes the object at `indent` whose members `key` started.
  void endObject(bool firstMember, unsigned indent) {
    if (firstMember) {
      os << "{}";
      return;
    }
    os << '\n';
    os.indent(indent);
    os << '}';
  }

  llvm::raw_ostream &stream() { return os; }

private:
  llvm::raw_ostream &os;
};
} // namespace

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

  ojson arguments = ojson::array();
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
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

  // The members before the op list, then the op list streamed as the walk
  // finds the ops (no document of it is ever built).
  PlanTextWriter writer(os);
  bool firstMember = true;
  for (auto &member : plan.items()) {
    writer.key(firstMember, 0, member.key());
    writer.document(member.value(), 2);
  }
  writer.key(firstMember, 0, "ops");

  // Each op's position in the entry block, as the walk reaches it: values
  // are named `op POSITION#RESULT` (an operand the walk has not reached,
  // which SSA rules out, would be named "").
  llvm::DenseMap<Operation *, size_t> positions;
  auto valueName = [&](Value value) -> std::string {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg.getOwner() == &body
                 ? "arg " + std::to_string(arg.getArgNumber())
                 : std::string();
    auto found = positions.find(value.getDefiningOp());
    if (found == positions.end())
      return std::string();
    return "op " + std::to_string(found->second) + "#" +
           std::to_string(cast<OpResult>(value).getResultNumber());
  };

  // The reshards and collectives, fewer than the ops, follow the results:
  // each entry is printed as soon as it is complete, at its indent.
  std::string reshardText, collectiveText;
  llvm::raw_string_ostream reshardStream(reshardText),
      collectiveStream(collectiveText);
  PlanTextWriter reshardWriter(reshardStream),
      collectiveWriter(collectiveStream);
  size_t numReshards = 0, numCollectives = 0, numOps = 0;
  auto appendEntry = [](PlanTextWriter &list, size_t &count,
                        const ojson &entry) {
    list.stream() << (count++ ? ",\n" : "[\n");
    list.stream().indent(4);
    list.document(entry, 4);
  };

  double reshardBytes = 0;
  int64_t collectiveBytes = 0;
  size_t position = 0;
  for (Operation &op : body) {
    positions[&op] = position++;
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
      appendEntry(reshardWriter, numReshards,
                  {{"index", position - 1},
                   {"value", valueName(reshard.getInput())},
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
      appendEntry(collectiveWriter, numCollectives, entry);
      continue;
    }
    auto strategy = op.getAttrOfType<StrategyAttr>(kStrategyAttrName);
    if (!strategy)
      continue;
    // The op's entry, at indent 4 in the op list; its members at 6.
    llvm::raw_ostream &out = writer.stream();
    out << (numOps++ ? ",\n" : "[\n");
    out.indent(4);
    bool firstKey = true;
    writer.key(firstKey, 4, "index");
    writer.integer(position - 1);
    writer.key(firstKey, 4, "op");
    writer.string(op.getName().getStringRef());
    if (auto fwd = op.getAttrOfType<IntegerAttr>(kFwdAttrName)) {
      writer.key(firstKey, 4, "fwd");
      writer.integer(fwd.getInt());
    }
    SmallVector<StringRef> params;
    for (Value operand : op.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand))
        if (auto param = func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(),
                                                          kParamAttrName))
          params.push_back(param.getName());
    if (!params.empty()) {
      writer.key(firstKey, 4, "params");
      writer.array(params, 6, [&](StringRef name) { writer.string(name); });
    }
    writer.key(firstKey, 4, "strategy");
    writer.array(strategy.getFactors(), 6, [&](Attribute axes) {
      writer.stringArray(cast<ArrayAttr>(axes), 8);
    });
    // Pending sums the op keeps (a linear op on partial operands).
    if (!strategy.getPartial().empty()) {
      writer.key(firstKey, 4, "partial");
      writer.stringArray(strategy.getPartial(), 6);
    }
    writer.key(firstKey, 4, "operands");
    writer.array(op.getOperands(), 6,
                 [&](Value operand) { writer.string(valueName(operand)); });
    writer.endObject(firstKey, 4);
  }
  auto closeList = [](llvm::raw_ostream &list, size_t count) {
    if (count == 0)
      list << "[]";
    else
      list << "\n  ]";
  };
  closeList(os, numOps);

  ojson rest;
  ojson results = ojson::array();
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    ojson entry = {{"index", i}};
    if (auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttrName))
      entry["name"] = name.str();
    if (auto layout = func.getResultAttrOfType<LayoutAttr>(i, kLayoutAttrName))
      entry["layout"] = layoutToJSON(layout);
    results.push_back(entry);
  }
  writer.key(firstMember, 0, "results");
  writer.document(results, 2);
  closeList(reshardStream, numReshards);
  writer.key(firstMember, 0, "reshards");
  os << reshardText;
  closeList(collectiveStream, numCollectives);
  writer.key(firstMember, 0, "collectives");
  os << collectiveText;
  rest["totals"] = {{"reshards", numReshards},
                    {"reshard_bytes", reshardBytes},
                    {"collectives", numCollectives},
                    {"collective_bytes", collectiveBytes}};
  // What dist-search-strategy predicted and chose, when it ran.
  if (auto choice = module->getAttrOfType<PlanAttr>(kPlanAttrName)) {
    // Keys in alphabetical order, as the plan JSON has always listed them.
    rest["predicted"] = {
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
      rest["predicted"]["memory_breakdown"] = breakdown;
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
      rest["predicted"]["multi_copy"] = entry;
    }
    // The search's choice of copies for a step without them (docs/Search.md,
    // "Multi-copy interleave in the search"), with each count it priced.
    if (auto copyChoice =
            module->getAttrOfType<DictionaryAttr>(kMultiCopyChoiceAttrName)) {
      ojson entry = ojson::object();
      if (auto count = copyChoice.getAs<IntegerAttr>("copies"))
        entry["copies"] = count.getInt();
      if (auto step = copyChoice.getAs<FloatAttr>("step_time_s"))
        entry["step_time_s"] = step.getValueAsDouble();
      ojson priced = ojson::array();
      if (auto list = copyChoice.getAs<ArrayAttr>("priced"))
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
      rest["predicted"]["multi_copy_choice"] = entry;
    }
    rest["plan"] = {{"recompute", choice.getRecompute()},
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
    rest["pipeline"] = object;
  }
  for (auto &member : rest.items()) {
    writer.key(firstMember, 0, member.key());
    writer.document(member.value(), 2);
  }
  writer.endObject(firstMember, 0);
  os << "\n";
  return success();
}

//===- EmitterSupport.cpp - What the per-rank emitters share --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Reading the entry is the part of the interpreter's `prepare` that does not
// depend on the rank: every layout becomes a global shape, which
// emitProgramSpec prints for the harness with the layout itself; block
// offsets, partial holders and canonical replicas are the harness's, per
// rank at run time (loom/Runtime/Harness/Placements.h). The step walks the
// ops once for every rank: the rank's scalars, peers and stage are C++
// expressions of its mesh coordinates.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Common/EmitterSupport.h"
#include "loom/Analysis/Cost/ClusterSpec.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/EntrySignature.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdio>
#include <map>
#include <set>

using ::mlir::loom::kClusterAttrName;
using ::mlir::loom::kInitialValueAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kLrScaleArgName;
using ::mlir::loom::kMicroBatchAttrName;
using ::mlir::loom::kParamAttrName;
using ::mlir::loom::kPlanAttrName;

namespace mlir::loom::emit {

using dist::Layout;
using dist::Mesh;

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

std::string shapeLiteral(ArrayRef<int64_t> shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

std::string doubleLiteral(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  std::string s = buffer;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

std::string boolLiteral(bool value) { return value ? "true" : "false"; }

std::string stringLiteral(StringRef text) {
  std::string s = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      s += '\\';
    if (c == '\n') {
      s += "\\n";
      continue;
    }
    s += c;
  }
  return s + "\"";
}

std::string axesLiteral(ArrayRef<std::string> axes) {
  std::string s = "{";
  for (size_t i = 0; i < axes.size(); ++i)
    s += (i ? ", " : "") + stringLiteral(axes[i]);
  return s + "}";
}

std::vector<std::string> axisNames(ArrayAttr axes) {
  std::vector<std::string> names;
  for (Attribute a : axes)
    names.push_back(cast<StringAttr>(a).getValue().str());
  return names;
}

//===----------------------------------------------------------------------===//
// The entry
//===----------------------------------------------------------------------===//

bool isIntegerStorage(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  return isa<IndexType>(type) || (isa<IntegerType>(type) && !type.isInteger(1));
}

LogicalResult checkTensorType(Operation *op, Type type, const Twine &what,
                              const EmitterName &emitter) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return op->emitError() << what << " has type " << type << "; the "
                           << emitter.target
                           << " emitter needs statically shaped tensors";
  Type element = tensor.getElementType();
  if (!isa<FloatType>(element) && !isIntegerStorage(element))
    return op->emitError() << what << " has element type " << element << "; "
                           << emitter.target
                           << " programs hold floats and integers (not i1)";
  return success();
}

namespace {

LogicalResult readTensorInfo(func::FuncOp func, Attribute layoutAttr, Type type,
                             const EntryInfo &entry, const Twine &what,
                             const EmitterName &emitter, TensorInfo &info) {
  if (failed(checkTensorType(func, type, what, emitter)))
    return failure();
  info.type = type;
  info.isInteger = isIntegerStorage(type);
  auto tensor = cast<RankedTensorType>(type);
  info.localShape.assign(tensor.getShape().begin(), tensor.getShape().end());
  info.globalShape = info.localShape;
  info.layout = Layout::getReplicated(info.localShape.size());
  if (!layoutAttr)
    return success();
  auto attr = dyn_cast<dist::LayoutAttr>(layoutAttr);
  if (!attr || !entry.mesh)
    return func.emitError() << what
                            << ": `dist.layout` expects a "
                               "#dist.layout attribute on the entry's mesh";
  auto layout = attr.toLayout(*entry.mesh);
  if (!layout)
    return func.emitError() << what << ": " << layout.error();
  if (layout->getRank() != info.localShape.size())
    return func.emitError() << what << ": layout of rank " << layout->getRank()
                            << " does not fit " << type;
  info.layout = *layout;
  info.globalShape = layout->getGlobalShape(*entry.mesh, info.localShape);
  return success();
}

} // namespace

LogicalResult readEntry(ModuleOp module, StringRef entryName,
                        const EmitterName &emitter, EntryInfo &entry) {
  std::string name = entryName.str();
  if (name.empty())
    name = module.lookupSymbol<func::FuncOp>("train_step") ? "train_step"
                                                           : "forward";
  entry.func = module.lookupSymbol<func::FuncOp>(name);
  if (!entry.func)
    return module.emitError()
           << "no function @" << name << " to emit (name it with "
           << emitter.entryFlag << ")";
  func::FuncOp func = entry.func;
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError() << "the " << emitter.target
                            << " emitter needs a function with one "
                               "block (straight-line code)";

  // The mesh: the one every layout and collective names.
  std::set<std::string> meshNames;
  auto note = [&](Attribute attr) {
    if (auto layout = dyn_cast_or_null<dist::LayoutAttr>(attr))
      meshNames.insert(layout.getMesh().getValue().str());
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    note(func.getArgAttr(i, interp::kLayoutAttrName));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    note(func.getResultAttr(i, interp::kLayoutAttrName));
  func.walk([&](Operation *op) {
    note(op->getAttr(interp::kLayoutAttrName));
    if (op->getName().getDialectNamespace() == "dist")
      if (auto mesh = op->getAttrOfType<FlatSymbolRefAttr>("mesh"))
        meshNames.insert(mesh.getValue().str());
  });
  if (meshNames.size() > 1)
    return func.emitError() << "uses several meshes (@" << *meshNames.begin()
                            << ", @" << *std::next(meshNames.begin()) << "); a "
                            << emitter.target << " program runs on one";
  if (!meshNames.empty()) {
    entry.meshName = *meshNames.begin();
    auto meshOp = SymbolTable::lookupNearestSymbolFrom<dist::MeshOp>(
        func, StringAttr::get(func.getContext(), entry.meshName));
    if (!meshOp)
      return func.emitError() << "names mesh @" << entry.meshName
                              << ", which is not a `dist.mesh` of the module";
    auto mesh = meshOp.getMesh();
    if (!mesh)
      return meshOp.emitError() << mesh.error();
    entry.mesh = *mesh;
    entry.numRanks = mesh->getNumDevices();
  }

  // The pipeline axis of a pipelined program.
  FailureOr<std::optional<dist::PipelineInfo>> pipeline =
      dist::getPipelineInfo(module);
  if (failed(pipeline))
    return failure();
  if (*pipeline) {
    const dist::PipelineInfo &info = **pipeline;
    std::optional<size_t> index =
        entry.mesh ? entry.mesh->findAxis(info.axis) : std::nullopt;
    if (!index)
      return module.emitError()
             << "`" << kPipelineAttrName << "`: the pipeline axis `"
             << info.axis << "` is not an axis of the entry's mesh";
    entry.pipelineAxis = info.axis;
    entry.pipelineAxisIndex = *index;
    entry.numStages = entry.mesh->getAxis(*index).size;
    if (info.stages != entry.numStages)
      return module.emitError()
             << "`" << kPipelineAttrName << "` has " << info.stages
             << " stages, but the pipeline axis `" << entry.pipelineAxis
             << "` has size " << entry.numStages;
  }
  // The stage of a tagged result or argument, checked against the axis.
  auto readStage = [&](IntegerAttr attr, const Twine &what,
                       int64_t &stage) -> LogicalResult {
    if (!attr || !entry.numStages)
      return success();
    if (attr.getInt() < 0 || attr.getInt() >= entry.numStages)
      return func.emitError()
             << what << ": `" << kStageAttrName << "` " << attr.getInt()
             << " is not a stage of the pipeline axis `" << entry.pipelineAxis
             << "` (size " << entry.numStages << ")";
    stage = attr.getInt();
    return success();
  };

  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    TensorInfo info;
    info.name = interp::getArgumentName(func, i);
    if (failed(readTensorInfo(func, func.getArgAttr(i, interp::kLayoutAttrName),
                              func.getArgumentTypes()[i], entry,
                              "argument #" + Twine(i), emitter, info)))
      return failure();
    info.fileShape = interp::getArgumentFileShape(func, i).value_or(Shape());
    entry.args.push_back(std::move(info));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    TensorInfo info;
    info.name = interp::getResultName(func, i);
    if (failed(readTensorInfo(func,
                              func.getResultAttr(i, interp::kLayoutAttrName),
                              func.getResultTypes()[i], entry,
                              "result #" + Twine(i), emitter, info)))
      return failure();
    info.fileShape = interp::getResultFileShape(func, i).value_or(Shape());
    if (failed(
            readStage(func.getResultAttrOfType<IntegerAttr>(i, kStageAttrName),
                      "result #" + Twine(i), info.stage)))
      return failure();
    entry.results.push_back(std::move(info));
  }
  if (!entry.numStages)
    return success();
  if (failed(verifyPipelineOps(entry, emitter)))
    return failure();

  // An argument is owned by the stage of the result carried into it (the
  // stage that updates it), else by the one stage that reads it.
  for (auto [i, arg] : llvm::enumerate(entry.args)) {
    for (const TensorInfo &result : entry.results)
      if (result.name == arg.name && result.stage >= 0)
        arg.stage = result.stage;
    if (arg.stage >= 0)
      continue;
    std::optional<int64_t> readers;
    bool everywhere = false;
    for (Operation *user : func.getArgument(i).getUsers()) {
      if (isa<func::ReturnOp>(user))
        continue;
      auto stage = user->getAttrOfType<IntegerAttr>(kStageAttrName);
      if (!stage || (readers && *readers != stage.getInt())) {
        everywhere = true;
        break;
      }
      readers = stage.getInt();
    }
    if (readers && !everywhere)
      arg.stage = *readers;
  }
  return success();
}

LogicalResult verifyPipelineOps(const EntryInfo &entry,
                                const EmitterName &emitter) {
  for (Operation &op : func::FuncOp(entry.func).getBody().front()) {
    Attribute attr = op.getAttr(kStageAttrName);
    if (!attr)
      continue;
    auto stage = dyn_cast<IntegerAttr>(attr);
    if (!stage)
      return op.emitOpError() << "`" << kStageAttrName
                              << "` must be an integer stage, found " << attr;
    if (stage.getInt() < 0 || stage.getInt() >= entry.numStages)
      return op.emitOpError()
             << "`" << kStageAttrName << "` " << stage.getInt()
             << " is not a stage of the pipeline axis `" << entry.pipelineAxis
             << "` (size " << entry.numStages << ")";
  }
  (void)emitter;
  return success();
}

int64_t EntryInfo::stageOf(int64_t rank) const {
  if (!numStages || !mesh)
    return -1;
  return mesh->getCoordinates(rank)[pipelineAxisIndex];
}

//===----------------------------------------------------------------------===//
// One rank
//===----------------------------------------------------------------------===//

int64_t EntryInfo::stageOfOp(Operation *op) const {
  if (!numStages)
    return -1;
  auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName);
  return stage ? stage.getInt() : -1;
}

std::vector<std::pair<size_t, size_t>> carriedPairs(const EntryInfo &entry) {
  // Loop-carried: a result named like an argument of its kind and shape.
  std::vector<std::pair<size_t, size_t>> pairs;
  for (auto [ri, result] : llvm::enumerate(entry.results))
    for (auto [ai, arg] : llvm::enumerate(entry.args))
      if (result.name == arg.name && result.isInteger == arg.isInteger &&
          result.globalShape == arg.globalShape)
        pairs.push_back({ri, ai});
  return pairs;
}

std::string StepEmitterBase::name(Value value) {
  auto it = names.find(value);
  if (it != names.end())
    return it->second;
  std::string printed;
  llvm::raw_string_ostream ps(printed);
  value.printAsOperand(ps, asmState);
  std::string result;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    result = "arg" + std::to_string(arg.getArgNumber());
  } else {
    StringRef text = StringRef(printed).drop_front(); // the `%`
    result = llvm::isDigit(text.front()) ? "v" : "v_";
    for (char c : text)
      result += llvm::isAlnum(c) ? c : '_';
  }
  names[value] = result;
  return result;
}

void StepEmitterBase::emitStepComment() {
  os << "/// The step of every rank";
  if (entry.mesh)
    os << " of mesh @" << entry.meshName << " " << entry.mesh->toString();
  os << ".\n";
}

void StepEmitterBase::emitRankVariables() {
  os << "  // Every rank runs this function: what differs between ranks is\n"
     << "  // computed from the rank's mesh coordinates.\n"
     << "  const int64_t loomRank = comm.getRank();\n"
     << "  const std::vector<int64_t> &loomCoords = comm.getCoordinates();\n"
     << "  (void)loomRank;\n"
     << "  (void)loomCoords;\n";
  if (entry.numStages)
    os << "  // This rank's pipeline stage: its coordinate on "
       << stringLiteral(entry.pipelineAxis) << ".\n"
       << "  const int64_t loomStage = loomCoords[" << entry.pipelineAxisIndex
       << "];\n";
}

FailureOr<std::string> StepEmitterBase::globalBlock(Operation *op,
                                                    Shape &globalShape) {
  Shape block = shapeOf(op->getOperand(0));
  globalShape = block;
  if (entry.numRanks == 1)
    return shapeLiteral(Shape(block.size(), 0));
  // The mask is drawn by global index, so the kernel needs the block's place
  // in the global tensor: computed from the layout on the rank's mesh.
  auto attr = op->getAttrOfType<dist::LayoutAttr>(interp::kLayoutAttrName);
  if (!attr)
    return op->emitError() << "dropout in an SPMD program needs the layout of "
                              "its input (a `dist.layout` attribute on the op)";
  auto layout = attr.toLayout(*entry.mesh);
  if (!layout)
    return op->emitError() << "`dist.layout`: " << layout.error();
  if (layout->getRank() != block.size())
    return op->emitError() << "`dist.layout` of rank " << layout->getRank()
                           << " does not fit the input of rank "
                           << block.size();
  globalShape = layout->getGlobalShape(*entry.mesh, block);
  // Rank 0's block checks the layout against the shape once, here.
  auto at = layout->getBlockOffset(*entry.mesh, globalShape, 0);
  if (!at)
    return op->emitError() << "`dist.layout`: " << at.error();
  std::string offset = name(op->getResult(0)) + "_offset";
  os << "  Shape " << offset << ";\n"
     << "  LOOM_CHECK(blockOffset(comm.getMesh(), loomRank, "
     << stringLiteral(layout->toString()) << ", " << shapeLiteral(globalShape)
     << ", " << offset << "), " << stringLiteral(describe(op)) << ");\n";
  return offset;
}

Shape StepEmitterBase::shapeOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return Shape(type.getShape().begin(), type.getShape().end());
}

int64_t StepEmitterBase::numElements(Value value) {
  int64_t n = 1;
  for (int64_t d : shapeOf(value))
    n *= d;
  return n;
}

FailureOr<std::string> StepEmitterBase::scalar(Operation *user, Value value) {
  if (!scalars.contains(value))
    return user->emitError() << "the " << emitter.target
                             << " emitter computes index scalars from "
                                "`dist.axis_index`, `arith.constant`, "
                                "`arith.addi` and `arith.muli` only";
  return name(value);
}

std::string StepEmitterBase::axes(Operation *op) {
  return axesLiteral(axisList(op));
}

std::vector<std::string> StepEmitterBase::axisList(Operation *op) {
  return axisNames(op->getAttrOfType<ArrayAttr>("axes"));
}

FailureOr<std::string> StepEmitterBase::peer(Operation *op, StringRef axis,
                                             int64_t coordinate) {
  std::optional<size_t> index =
      entry.mesh ? entry.mesh->findAxis(axis.str()) : std::nullopt;
  if (!index)
    return op->emitError() << "axis `" << axis << "` is not an axis of mesh @"
                           << entry.meshName;
  int64_t size = entry.mesh->getAxis(*index).size;
  if (coordinate < 0 || coordinate >= size)
    return op->emitError() << "coordinate " << coordinate << " is not on axis `"
                           << axis << "` (size " << size << ")";
  return "comm.getMesh().getPeer(loomRank, " + std::to_string(*index) + ", " +
         std::to_string(coordinate) + ")";
}

std::string StepEmitterBase::describe(Operation *op) {
  return interp::describeOp(op);
}

void StepEmitterBase::groupComment(Operation *collective) {
  os << "  // group over " << axes(collective)
     << ": the ranks that differ from this one only on those axes\n";
}

void StepEmitterBase::defineScalar(Value value, const std::string &expression) {
  scalars.insert(value);
  declare("const int64_t " + name(value) + " = " + expression + ";");
}

void StepEmitterBase::declare(const Twine &text) {
  if (inStageRegion())
    declarations += "  " + text.str() + "\n";
  else
    os << "  " << text << "\n";
}

std::string StepEmitterBase::resultCondition(unsigned index) const {
  int64_t stage = entry.results[index].stage;
  if (stage < 0)
    return "";
  return "loomStage == " + std::to_string(stage);
}

void StepEmitterBase::flush() {
  if (inStageRegion())
    return;
  out << text;
  text.clear();
}

void StepEmitterBase::closeRegion() {
  if (!inStageRegion())
    return;
  // The region's values are declared before it, so that later regions of
  // the same stage and the return see them; its statements run on the
  // stage's ranks only.
  out << declarations << "  if (loomStage == " << regionStage << ") {\n";
  for (StringRef line : llvm::split(StringRef(text).rtrim('\n'), '\n'))
    out << (line.empty() ? "" : "  ") << line << "\n";
  out << "  }\n";
  text.clear();
  declarations.clear();
  regionStage = -1;
}

void StepEmitterBase::findMicroBatchBounds() {
  boundsFound = true;
  if (!entry.numStages)
    return;
  // Per stage and micro-batch: the first forward op, the last backward op,
  // and the last forward op (the end when the stage has no backward op of
  // it). A micro-batch enters with its first forward op that computes
  // activations (dist::getActivationOps, the interpreter's rule). An op
  // without a stage runs on every stage.
  // (stage, micro-batch), or (stage, chunk and micro-batch) under
  // interleaved 1F1B (dist::getInFlightKey).
  using Key = std::pair<int64_t, int64_t>;
  std::map<Key, Operation *> first, lastFwd, lastBwd;
  auto func = func::FuncOp(entry.func);
  llvm::DenseSet<Operation *> activationOps =
      dist::getActivationOps(func.getBody().front(), [&](unsigned i) {
        return static_cast<bool>(func.getArgAttr(i, kInputAttrName));
      });
  for (Operation &op : func.getBody().front()) {
    std::optional<int64_t> inFlightKey = dist::getInFlightKey(&op);
    if (!inFlightKey)
      continue;
    int64_t m = *inFlightKey;
    int64_t tagged = entry.stageOfOp(&op);
    for (int64_t stage = tagged < 0 ? 0 : tagged;
         stage < (tagged < 0 ? entry.numStages : tagged + 1); ++stage) {
      Key key{stage, m};
      if (op.hasAttr(kBackwardAttrName)) {
        lastBwd[key] = &op;
        continue;
      }
      if (activationOps.contains(&op))
        first.emplace(key, &op);
      lastFwd[key] = &op;
    }
  }
  for (auto [key, op] : first) {
    firstForward[op].push_back(key);
    auto bwd = lastBwd.find(key);
    lastBackward[bwd != lastBwd.end() ? bwd->second : lastFwd[key]].push_back(
        key);
  }
}

LogicalResult StepEmitterBase::checkStageOperands(Operation *op,
                                                  int64_t stage) {
  if (!entry.numStages)
    return success();
  // A value of stage t exists on stage t's ranks only: every other rank
  // skips its region. The return writes a result on the stage it names
  // (`dist.stage` of the result), which must be the one computing it.
  if (isa<func::ReturnOp>(op)) {
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      Operation *def = operand.getDefiningOp();
      int64_t defined = def ? entry.stageOfOp(def) : -1;
      if (defined >= 0 && entry.results[i].stage != defined)
        return op->emitOpError()
               << "returns as result #" << i << " a value of stage " << defined
               << ", but the result's `" << kStageAttrName << "` is "
               << (entry.results[i].stage < 0
                       ? std::string("missing")
                       : std::to_string(entry.results[i].stage));
    }
    return success();
  }
  for (Value operand : op->getOperands()) {
    Operation *def = operand.getDefiningOp();
    int64_t defined = def ? entry.stageOfOp(def) : -1;
    if (defined < 0 || defined == stage)
      continue;
    if (stage < 0)
      return op->emitOpError()
             << "has no `" << kStageAttrName << "` but uses a value of stage "
             << defined << "; it would run on every stage";
    return op->emitOpError()
           << "on stage " << stage << " uses a value of stage " << defined
           << "; stages exchange values through dist.send/dist.recv";
  }
  return success();
}

void StepEmitterBase::inFlightCall(Operation *op, StringRef call, int64_t stage,
                                   int64_t m) {
  os << "  ";
  if (entry.stageOfOp(op) != stage)
    os << "if (loomStage == " << stage << ") ";
  os << "loom::runtime::harness::pipelineInFlight()." << call << "(" << m
     << ");\n";
}

LogicalResult StepEmitterBase::emitBody() {
  for (Operation &op : func::FuncOp(entry.func).getBody().front()) {
    if (failed(emitOp(&op)))
      return failure();
  }
  closeRegion();
  flush();
  return success();
}

LogicalResult StepEmitterBase::emitOp(Operation *op) {
  if (!boundsFound)
    findMicroBatchBounds();
  int64_t stage = entry.stageOfOp(op);
  if (failed(checkStageOperands(op, stage)))
    return failure();
  if (stage != regionStage) {
    closeRegion();
    flush();
    regionStage = stage;
  }
  os << "\n";
  if (failed(emitOpStatements(op)))
    return failure();
  // After the op's statements: its micro-batch's activations are freed
  // once its last backward op ran.
  if (auto it = lastBackward.find(op); it != lastBackward.end())
    for (auto [s, m] : it->second)
      inFlightCall(op, "end", s, m);
  flush();
  return success();
}

LogicalResult StepEmitterBase::emitOpStatements(Operation *op) {
  // The op it came from, with its location.
  std::string printed;
  llvm::raw_string_ostream ts(printed);
  op->print(ts, asmState);
  for (StringRef line : llvm::split(StringRef(printed), '\n'))
    os << "  // " << line << "\n";
  // A micro-batch is in flight from its first forward op on a stage.
  if (auto it = firstForward.find(op); it != firstForward.end())
    for (auto [s, m] : it->second)
      inFlightCall(op, "begin", s, m);

  if (auto constant = dyn_cast<arith::ConstantOp>(op);
      constant && constant.getType().isIntOrIndex()) {
    auto attr = dyn_cast<IntegerAttr>(constant.getValue());
    if (!attr || constant.getType().isInteger(1))
      return op->emitError()
             << "no " << emitter.target << " emission for this scalar constant";
    defineScalar(constant.getResult(),
                 std::to_string(attr.getValue().getSExtValue()));
    return success();
  }
  if (isa<arith::AddIOp, arith::MulIOp>(op)) {
    FailureOr<std::string> lhs = scalar(op, op->getOperand(0));
    FailureOr<std::string> rhs = scalar(op, op->getOperand(1));
    if (failed(lhs) || failed(rhs))
      return failure();
    defineScalar(op->getResult(0),
                 *lhs + (isa<arith::AddIOp>(op) ? " + " : " * ") + *rhs);
    return success();
  }
  if (auto index = dyn_cast<dist::AxisIndexOp>(op)) {
    std::optional<size_t> axis =
        entry.mesh ? entry.mesh->findAxis(index.getAxis().str()) : std::nullopt;
    if (!axis)
      return index.emitError()
             << "axis `" << index.getAxis() << "` is not an axis of the mesh";
    defineScalar(index.getResult(),
                 "loomCoords[" + std::to_string(*axis) + "]");
    return success();
  }
  return emitTargetOp(op);
}

//===----------------------------------------------------------------------===//
// The program around the step functions
//===----------------------------------------------------------------------===//

namespace {

std::string dtypeLiteral(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  std::optional<::loom::runtime::io::DType> dtype = interp::fileDTypeOf(type);
  return "io::DType::" +
         std::string(dtype ? ::loom::runtime::io::dtypeName(*dtype) : "F64");
}

/// How argument `index` starts without data (the harness's Init).
std::string initLiteral(func::FuncOp func, unsigned index, std::string &args) {
  args = "{0.0, 0.0}";
  if (auto param = func.getArgAttrOfType<ParamAttr>(index, kParamAttrName)) {
    InitializerAttr init = param.getInit();
    ArrayRef<double> values = init.getArgs();
    std::string a = values.size() > 0 ? doubleLiteral(values[0]) : "0.0";
    std::string b = values.size() > 1 ? doubleLiteral(values[1]) : "0.0";
    args = "{" + a + ", " + b + "}";
    switch (init.getKind()) {
    case InitKind::Zeros:
      return "Init::Zeros";
    case InitKind::Ones:
      return "Init::Ones";
    case InitKind::Normal:
      return "Init::Normal";
    case InitKind::Uniform:
      return "Init::Uniform";
    case InitKind::ScaledNormal:
      return "Init::ScaledNormal";
    }
  }
  if (auto named =
          func.getArgAttrOfType<StringAttr>(index, interp::kNameAttrName)) {
    // The learning-rate factor starts at 1 (the compiled rate), as in
    // loom-run; other named states at their `loom.initial_value` (the loss
    // scale), else zeros.
    if (auto initial =
            func.getArgAttrOfType<FloatAttr>(index, kInitialValueAttrName))
      args = "{" + doubleLiteral(initial.getValueAsDouble()) + ", 0.0}";
    return named.getValue() == kLrScaleArgName ? "Init::Ones" : "Init::State";
  }
  return "Init::None";
}

} // namespace

LogicalResult emitProgramSpec(const EntryInfo &entry, raw_ostream &os,
                              ArrayRef<std::string> hostArenaTables) {
  func::FuncOp func = entry.func;
  os << "/// The mesh and the arguments and results with their layouts, from "
        "which\n/// the harness computes each rank's blocks.\n"
     << "const ProgramSpec &loomProgramSpec() {\n"
     << "  static const ProgramSpec spec = [] {\n"
     << "    ProgramSpec s;\n"
     << "    s.entry = " << stringLiteral(func.getSymName()) << ";\n"
     << "    s.mesh = {";
  if (entry.mesh)
    for (auto [a, axis] : llvm::enumerate(entry.mesh->getAxes()))
      os << (a ? ", " : "") << "{" << stringLiteral(axis.name) << ", "
         << axis.size << "}";
  os << "};\n";
  if (entry.numStages)
    os << "    s.pipelineAxis = " << stringLiteral(entry.pipelineAxis)
       << ";\n    s.numStages = " << entry.numStages << ";\n";
  // The compiled learning rate, which the trainer's schedule scales through
  // `lr_scale`: recorded when every update has the same one.
  std::optional<double> learningRate;
  bool oneRate = true;
  func.walk([&](Operation *op) {
    FloatAttr lr;
    if (auto sgd = dyn_cast<SgdUpdateOp>(op))
      lr = sgd.getLrAttr();
    else if (auto adamw = dyn_cast<AdamwUpdateOp>(op))
      lr = adamw.getLrAttr();
    if (!lr)
      return;
    if (learningRate && *learningRate != lr.getValueAsDouble())
      oneRate = false;
    learningRate = lr.getValueAsDouble();
  });
  if (learningRate && oneRate)
    os << "    s.learningRate = " << doubleLiteral(*learningRate) << ";\n";
  // What the trainer's MFU divides by: the plan's FLOPs and the peak of the
  // cluster the search planned for (both absent before a search).
  if (auto module = func->getParentOfType<ModuleOp>()) {
    if (auto plan = module->getAttrOfType<dist::PlanAttr>(kPlanAttrName))
      os << "    s.modelFlopsPerStep = "
         << doubleLiteral(plan.getModelFlopsPerStep().convertToDouble())
         << ";\n";
    if (auto cluster = module->getAttrOfType<StringAttr>(kClusterAttrName))
      if (auto spec = dist::getParsedClusterSpec(cluster.getValue(),
                                                 kClusterAttrName)) {
        os << "    s.peakFlopsPerSecond = {";
        bool first = true;
        for (const auto &[dtype, peak] : spec->device.peakFlopsPerSecond) {
          os << (first ? "" : ", ") << "{" << stringLiteral(dtype) << ", "
             << doubleLiteral(peak) << "}";
          first = false;
        }
        os << "};\n";
      }
  }
  // The trainer's --grad-accum must name the micro-batches compiled in.
  int64_t microBatches = 1;
  func.walk([&](Operation *op) {
    if (auto m = op->getAttrOfType<IntegerAttr>(kMicroBatchAttrName))
      microBatches = std::max(microBatches, m.getInt() + 1);
  });
  if (microBatches > 1)
    os << "    s.microBatches = " << microBatches << ";\n";
  for (const std::string &table : hostArenaTables)
    os << "    s.addHostArena(" << table << ", std::size(" << table << "));\n";
  MatmulOp matmul;
  func.walk([&](MatmulOp op) {
    if (!matmul)
      matmul = op;
  });
  if (matmul) {
    Type element =
        cast<ShapedType>(matmul.getResult().getType()).getElementType();
    std::string name;
    llvm::raw_string_ostream(name) << element;
    os << "    s.matmulDType = " << stringLiteral(name) << ";\n";
  }
  // The vocabulary the token files' ids must stay below: the rows of the
  // first embedding's table, an argument (through the collectives that
  // gather it, under ZeRO or a vocabulary-parallel layout, whose global
  // shape is the argument's).
  int64_t vocabSize = 0;
  func.walk([&](EmbeddingOp op) {
    if (vocabSize)
      return;
    Value table = op.getTable();
    while (Operation *def = table.getDefiningOp()) {
      if (def->getName().getDialectNamespace() != "dist" ||
          def->getNumOperands() != 1)
        break;
      table = def->getOperand(0);
    }
    auto arg = dyn_cast<BlockArgument>(table);
    if (arg && arg.getOwner()->getParentOp() == func.getOperation() &&
        !entry.args[arg.getArgNumber()].globalShape.empty())
      vocabSize = entry.args[arg.getArgNumber()].globalShape[0];
  });
  if (vocabSize)
    os << "    s.vocabSize = " << vocabSize << ";\n";
  auto tensorSpec = [&](const TensorInfo &t, const std::string &init,
                        const std::string &initArgs) {
    os << "        {" << stringLiteral(t.name) << ", "
       << boolLiteral(t.isInteger) << ", " << dtypeLiteral(t.type) << ", "
       << shapeLiteral(t.globalShape) << ", " << shapeLiteral(t.localShape)
       << ", " << init << ", " << initArgs << ", "
       << stringLiteral(t.layout.toString());
    // Only pipelined programs name stages (TensorSpec::stage), and only
    // views name a file shape (TensorSpec::fileShape, after the stage).
    if (entry.numStages || !t.fileShape.empty())
      os << ", " << t.stage;
    if (!t.fileShape.empty())
      os << ", " << shapeLiteral(t.fileShape);
    os << "},\n";
  };
  os << "    s.arguments = {\n";
  for (auto [i, t] : llvm::enumerate(entry.args)) {
    std::string initArgs;
    std::string init = initLiteral(func, i, initArgs);
    tensorSpec(t, init, initArgs);
  }
  os << "    };\n    s.results = {\n";
  for (const TensorInfo &t : entry.results)
    tensorSpec(t, "Init::None", "{0.0, 0.0}");
  os << "    };\n";

  os << "    s.carried = {";
  bool first = true;
  for (auto [ri, ai] : carriedPairs(entry)) {
    os << (first ? "" : ", ") << "{" << ri << ", " << ai << "}";
    first = false;
  }
  os << "};\n"
     << "    return s;\n"
     << "  }();\n"
     << "  return spec;\n"
     << "}\n\n";

  for (StringRef type : {"float", "double"}) {
    StringRef suffix = type == "float" ? "F32" : "F64";
    // A build may leave one precision out (LOOM_STEP_DTYPES in the emitted
    // CMakeLists.txt): its step is then null and the harness says so.
    os << "/// The step every rank runs, computing in " << type
       << " (null when built with LOOM_STEP_NO_" << suffix << ").\n"
       << "StepFn<" << type << "> loomStep" << suffix << "() {\n"
       << "#ifndef LOOM_STEP_NO_" << suffix << "\n"
       << "  return &loom_" << func.getSymName() << "<" << type << ">;\n"
       << "#else\n"
       << "  return nullptr;\n"
       << "#endif\n"
       << "}\n\n";
  }
  return success();
}

FailureOr<func::FuncOp> findEvalEntry(func::FuncOp train,
                                      const EmitterName &emitter) {
  if (train.getSymName() != "train_step")
    return func::FuncOp();
  auto module = train->getParentOfType<ModuleOp>();
  auto eval =
      module ? module.lookupSymbol<func::FuncOp>("eval_step") : func::FuncOp();
  if (!eval)
    return func::FuncOp();
  if (eval.getArgumentTypes() != train.getArgumentTypes() ||
      eval.getNumResults() != 1 || interp::getResultName(eval, 0) != "loss")
    return eval.emitError()
           << "@eval_step must take @train_step's arguments and return its "
              "`loss` alone (dist-derive-eval-step builds it so); the "
           << emitter.target << " emitter passes it the training state";
  return eval;
}

void emitEvalAccessors(func::FuncOp eval, raw_ostream &os) {
  for (StringRef type : {"float", "double"}) {
    StringRef suffix = type == "float" ? "F32" : "F64";
    os << "/// The forward-only evaluation step, computing in " << type
       << " (null without one, or when built with LOOM_STEP_NO_" << suffix
       << ").\n"
       << "StepFn<" << type << "> loomEvalStep" << suffix << "() {\n";
    if (eval)
      os << "#ifndef LOOM_STEP_NO_" << suffix << "\n"
         << "  return &loom_" << eval.getSymName() << "<" << type << ">;\n"
         << "#else\n"
         << "  return nullptr;\n"
         << "#endif\n";
    else
      os << "  return nullptr;\n";
    os << "}\n\n";
  }
}

LogicalResult
writeProgramFiles(ModuleOp module,
                  ArrayRef<std::pair<std::string, std::string>> files,
                  StringRef dir, raw_ostream &os) {
  if (dir.empty()) {
    os << files.front().second;
    return success();
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return module.emitError()
           << "cannot create directory `" << dir << "`: " << ec.message();
  for (const auto &[name, contents] : files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream file(path, ec);
    if (ec)
      return module.emitError()
             << "cannot write `" << path << "`: " << ec.message();
    file << contents;
    os << path << "\n";
  }
  return success();
}

} // namespace mlir::loom::emit

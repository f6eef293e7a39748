//===- Export.cpp - The loom dialect to graph JSON ------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Writes `func.func @forward` as graph JSON (docs/GraphFormat.md), the
// inverse of Import.cpp:
//
//   1. name every value: the names the importer recorded in locations
//      (`NameLoc`, a `FusedLoc` of them for several results), else `arg<N>`
//      and `t<N>`, never twice;
//   2. declare the arguments' tensors, then each op's results in program
//      order, and list the parameters and inputs from the argument
//      attributes;
//   3. write each op generically from its operands, results and inherent
//      attributes (`arith.constant` as the `constant` pseudo-op);
//   4. write the loss.
//
// The document is built in memory and written only when all of it could be
// expressed, so a failure leaves `os` untouched.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/GraphJSON/GraphJSON.h"

#include "Vocabulary.h"

#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/StringSet.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::graph_json;
using ojson = nlohmann::ordered_json;

/// A float as JSON: a number, or a string for the values JSON lacks.
static ojson floatToJson(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  return value;
}

static double toDouble(const APFloat &value) {
  APFloat wide = value;
  bool losesInfo = false;
  // Every Loom float type widens to f64 exactly.
  wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  return wide.convertToDouble();
}

namespace {
class Exporter {
public:
  explicit Exporter(func::FuncOp func) : func(func) {}

  FailureOr<ojson> run();

private:
  void nameValues();
  FailureOr<ojson> tensorJson(Value value);
  FailureOr<ojson> attrJson(Operation *op, NamedAttribute attr);
  FailureOr<ojson> constantJson(arith::ConstantOp op);
  FailureOr<ojson> opJson(Operation *op);

  /// The inherent attributes an op of `name` gets when created without
  /// any: its ODS defaults.
  const NamedAttrList &getDefaults(OperationName name);

  func::FuncOp func;
  llvm::DenseMap<Value, std::string> names;
  llvm::DenseMap<OperationName, NamedAttrList> defaults;
};
} // namespace

void Exporter::nameValues() {
  llvm::StringSet<> taken;
  // 1. The recorded names, each used once.
  auto tryName = [&](Value value, Location loc) {
    if (auto name = dyn_cast<NameLoc>(loc))
      if (!name.getName().getValue().empty() &&
          taken.insert(name.getName().getValue()).second)
        names[value] = name.getName().getValue().str();
  };
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    tryName(arg, arg.getLoc());
  for (Operation &op : body.without_terminator()) {
    Location loc = op.getLoc();
    if (op.getNumResults() == 1) {
      tryName(op.getResult(0), loc);
    } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
      if (fused.getLocations().size() == op.getNumResults())
        for (auto [result, part] :
             llvm::zip(op.getResults(), fused.getLocations()))
          tryName(result, part);
    }
  }
  // 2. Generated names for the rest, skipping any already taken.
  unsigned counter = 0;
  auto fresh = [&](StringRef prefix, unsigned number) {
    std::string name = (prefix + Twine(number)).str();
    while (!taken.insert(name).second)
      name = (prefix + Twine(number) + "_" + Twine(counter++)).str();
    return name;
  };
  for (BlockArgument arg : body.getArguments())
    if (!names.count(arg))
      names[arg] = fresh("arg", arg.getArgNumber());
  unsigned resultNumber = 0;
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults()) {
      if (!names.count(result))
        names[result] = fresh("t", resultNumber);
      ++resultNumber;
    }
}

const NamedAttrList &Exporter::getDefaults(OperationName name) {
  auto it = defaults.find(name);
  if (it != defaults.end())
    return it->second;
  // A detached op with no operands is never verified; it only shows which
  // defaults creation fills in.
  OperationState state(UnknownLoc::get(name.getContext()), name);
  Operation *probe = Operation::create(state);
  NamedAttrList attrs;
  name.populateInherentAttrs(probe, attrs);
  probe->destroy();
  return defaults[name] = attrs;
}

FailureOr<ojson> Exporter::tensorJson(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  std::optional<StringRef> dtype;
  if (type && type.hasStaticShape() && !type.getEncoding())
    dtype = getDTypeName(type.getElementType());
  if (!dtype) {
    InFlightDiagnostic diag = emitError(value.getLoc());
    diag << "cannot express a value of type " << value.getType()
         << " in graph JSON; expected a statically shaped tensor of "
         << kDTypeList;
    return failure();
  }
  ojson tensor;
  tensor["name"] = names[value];
  tensor["shape"] = type.getShape().vec();
  tensor["dtype"] = dtype->str();
  return tensor;
}

FailureOr<ojson> Exporter::attrJson(Operation *op, NamedAttribute attr) {
  Attribute value = attr.getValue();
  if (isa<UnitAttr>(value))
    return ojson(true);
  if (auto boolean = dyn_cast<BoolAttr>(value))
    return ojson(boolean.getValue());
  if (auto integer = dyn_cast<IntegerAttr>(value))
    if (integer.getType().isSignlessInteger(64) ||
        integer.getType().isSignlessInteger(32))
      return ojson(integer.getInt());
  if (auto number = dyn_cast<FloatAttr>(value))
    if (number.getType().isF64() || number.getType().isF32())
      return floatToJson(number.getValueAsDouble());
  if (auto array = dyn_cast<DenseI64ArrayAttr>(value))
    return ojson(array.asArrayRef().vec());
  if (auto array = dyn_cast<DenseI32ArrayAttr>(value))
    return ojson(array.asArrayRef().vec());
  if (auto array = dyn_cast<DenseF64ArrayAttr>(value)) {
    ojson list = ojson::array();
    for (double element : array.asArrayRef())
      list.push_back(floatToJson(element));
    return list;
  }
  if (auto text = dyn_cast<StringAttr>(value))
    return ojson(text.getValue().str());
  for (const EnumCodec &codec : getEnumCodecs())
    if (std::optional<StringRef> name = codec.toString(value))
      return ojson(name->str());
  return op->emitError() << "cannot express attribute `"
                         << attr.getName().getValue() << "` (" << value
                         << ") in graph JSON";
}

FailureOr<ojson> Exporter::constantJson(arith::ConstantOp op) {
  auto dense = dyn_cast<DenseIntOrFPElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "cannot express constant " << op.getValue()
                          << " in graph JSON; expected dense elements";
  Type elementType = dense.getElementType();
  auto valueJson = [&](bool splatOnly) -> ojson {
    ojson list = ojson::array();
    if (isa<FloatType>(elementType)) {
      for (const APFloat &value : dense.getValues<APFloat>()) {
        list.push_back(floatToJson(toDouble(value)));
        if (splatOnly)
          break;
      }
    } else {
      bool isBool = elementType.isSignlessInteger(1);
      for (const APInt &value : dense.getValues<APInt>()) {
        if (isBool)
          list.push_back(value.getBoolValue());
        else
          list.push_back(value.getSExtValue());
        if (splatOnly)
          break;
      }
    }
    return list;
  };
  ojson entry;
  entry["op"] = kConstantOpName.str();
  entry["results"] = ojson::array({names[op.getResult()]});
  ojson value = valueJson(dense.isSplat());
  // A splat is written as its one value, whatever the shape.
  if (dense.isSplat() && !value.empty())
    entry["attributes"]["value"] = value[0];
  else
    entry["attributes"]["value"] = std::move(value);
  return entry;
}

FailureOr<ojson> Exporter::opJson(Operation *op) {
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return constantJson(constant);
  if (!isa_and_nonnull<LoomDialect>(op->getDialect()))
    return op->emitError() << "cannot express op `" << op->getName()
                           << "` in graph JSON; expected a `loom` op or "
                              "`arith.constant`";
  if (op->getNumRegions() != 0 ||
      op->hasTrait<OpTrait::AttrSizedResultSegments>())
    return op->emitError() << "cannot express op `" << op->getName()
                           << "` in graph JSON";
  ojson entry;
  entry["op"] = op->getName().stripDialect().str();

  // Operands: flat, or one entry per ODS operand when the op records
  // segment sizes (several optional operands).
  ojson operands = ojson::array();
  std::optional<Attribute> segmentAttr;
  if (op->hasTrait<OpTrait::AttrSizedOperandSegments>())
    segmentAttr = op->getInherentAttr("operandSegmentSizes");
  if (auto segments = dyn_cast_or_null<DenseI32ArrayAttr>(
          segmentAttr.value_or(Attribute()))) {
    unsigned start = 0;
    for (int32_t size : segments.asArrayRef()) {
      if (size == 0) {
        operands.push_back(nullptr);
      } else if (size == 1) {
        operands.push_back(names[op->getOperand(start)]);
      } else {
        ojson group = ojson::array();
        for (int32_t i = 0; i < size; ++i)
          group.push_back(names[op->getOperand(start + i)]);
        operands.push_back(std::move(group));
      }
      start += size;
    }
  } else {
    for (Value operand : op->getOperands())
      operands.push_back(names[operand]);
  }
  entry["operands"] = std::move(operands);

  ojson results = ojson::array();
  for (Value result : op->getResults())
    results.push_back(names[result]);
  entry["results"] = std::move(results);

  // Inherent attributes by their ODS names, in name order; a discardable
  // attribute would be lost on import, so it is an error.
  NamedAttrList inherent;
  op->getName().populateInherentAttrs(op, inherent);
  // Ops fill in absent default-valued attributes when created; writing
  // only those that differ from the ODS default keeps the JSON as written.
  const NamedAttrList &defaults = getDefaults(op->getName());
  ojson attributes = ojson::object();
  for (NamedAttribute attr : inherent.getAttrs()) {
    if (attr.getName() == "operandSegmentSizes" ||
        defaults.get(attr.getName()) == attr.getValue())
      continue;
    FailureOr<ojson> value = attrJson(op, attr);
    if (failed(value))
      return failure();
    attributes[attr.getName().getValue().str()] = std::move(*value);
  }
  DictionaryAttr discardable = op->getDiscardableAttrDictionary();
  if (!discardable.empty())
    return op->emitError() << "cannot express discardable attribute `"
                           << discardable.begin()->getName().getValue()
                           << "` in graph JSON";
  if (!attributes.empty())
    entry["attributes"] = std::move(attributes);
  return entry;
}

FailureOr<ojson> Exporter::run() {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError()
           << "expected `@" << kEntryName << "` to have a body of one block";
  nameValues();
  Block &body = func.getBody().front();

  ojson tensors = ojson::array();
  ojson parameters = ojson::array();
  ojson inputs = ojson::array();
  for (BlockArgument arg : body.getArguments()) {
    FailureOr<ojson> tensor = tensorJson(arg);
    if (failed(tensor))
      return failure();
    tensors.push_back(std::move(*tensor));
    unsigned index = arg.getArgNumber();
    for (NamedAttribute attr : func.getArgAttrDict(index)
                                   ? func.getArgAttrDict(index).getValue()
                                   : ArrayRef<NamedAttribute>())
      if (attr.getName() != kParamAttrName &&
          attr.getName() != kInputAttrName &&
          attr.getName() != kFileShapeAttrName)
        return func.emitError()
               << "cannot express argument attribute `"
               << attr.getName().getValue() << "` of argument #" << index
               << " in graph JSON";
    if (auto param = func.getArgAttrOfType<ParamAttr>(index, kParamAttrName)) {
      InitializerAttr init = param.getInit();
      ojson initJson;
      initJson["kind"] = stringifyInitKind(init.getKind()).str();
      ArrayRef<double> args = init.getArgs().asArrayRef();
      auto setArg = [&](StringRef key, unsigned i) {
        if (i < args.size())
          initJson[key.str()] = floatToJson(args[i]);
      };
      switch (init.getKind()) {
      case InitKind::Normal:
        setArg("std", 0);
        break;
      case InitKind::Zeros:
      case InitKind::Ones:
        break;
      case InitKind::Uniform:
        setArg("low", 0);
        setArg("high", 1);
        break;
      case InitKind::ScaledNormal:
        setArg("std", 0);
        setArg("factor", 1);
        break;
      }
      ojson entry;
      entry["tensor"] = names[arg];
      entry["name"] = param.getName().str();
      entry["init"] = std::move(initJson);
      entry["decay"] = param.getDecay();
      if (auto fileShape = func.getArgAttrOfType<DenseI64ArrayAttr>(
              index, kFileShapeAttrName))
        entry["file_shape"] = fileShape.asArrayRef().vec();
      parameters.push_back(std::move(entry));
    } else if (auto input = func.getArgAttrOfType<InputRoleAttr>(
                   index, kInputAttrName)) {
      ojson entry;
      entry["tensor"] = names[arg];
      entry["role"] = stringifyInputRole(input.getValue()).str();
      inputs.push_back(std::move(entry));
    } else {
      return func.emitError()
             << "cannot express argument #" << index
             << " in graph JSON: it is neither a parameter (`loom.param`) nor "
                "a data input (`loom.input`)";
    }
  }

  ojson ops = ojson::array();
  for (Operation &op : body.without_terminator()) {
    for (Value result : op.getResults()) {
      FailureOr<ojson> tensor = tensorJson(result);
      if (failed(tensor))
        return failure();
      tensors.push_back(std::move(*tensor));
    }
    FailureOr<ojson> entry = opJson(&op);
    if (failed(entry))
      return failure();
    ops.push_back(std::move(*entry));
  }

  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret || ret.getNumOperands() != 1)
    return func.emitError()
           << "expected `@" << kEntryName << "` to return one value, the loss";
  ojson outputs = ojson::array({names[ret.getOperand(0)]});

  ojson graph;
  graph["format"] = kFormatName.str();
  graph["version"] = kFormatVersion;
  graph["tensors"] = std::move(tensors);
  graph["parameters"] = std::move(parameters);
  graph["inputs"] = std::move(inputs);
  graph["ops"] = std::move(ops);
  graph["outputs"] = std::move(outputs);
  return graph;
}

LogicalResult mlir::loom::exportGraphJson(ModuleOp module, raw_ostream &os) {
  func::FuncOp entry;
  for (Operation &op : module.getBody()->getOperations()) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (func && func.getSymName() == kEntryName) {
      entry = func;
      continue;
    }
    return op.emitError() << "cannot express this op in graph JSON, which "
                             "holds one function, `@"
                          << kEntryName << "`";
  }
  if (!entry)
    return module.emitError() << "expected a `func.func @" << kEntryName
                              << "` to export, found none";
  FailureOr<ojson> graph = Exporter(entry).run();
  if (failed(graph))
    return failure();
  // Names may hold any bytes; replace invalid UTF-8 instead of failing.
  os << graph->dump(2, ' ', /*ensure_ascii=*/false,
                    ojson::error_handler_t::replace)
     << "\n";
  return success();
}

//===- Import.cpp - Graph JSON to the loom dialect ------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Builds `func.func @forward` from graph JSON (docs/GraphFormat.md). The input
// is untrusted, so every step checks before it builds:
//
//   1. parse the text strictly (loom/Support/JSON.h: no duplicate keys, a
//      bounded depth); an error is reported at its line and column;
//   2. check the header (`format`, `version`) and the top-level keys;
//   3. declare the tensors (name, shape, dtype) and mark which are
//      parameters and data inputs; their order in `tensors` is the order of
//      the function's arguments;
//   4. note which op produces each tensor, so a use before the definition
//      (a cycle) is told apart from a name nothing defines;
//   5. build each op generically: look its mnemonic up among the registered
//      `loom` ops, convert each JSON attribute to the kind the op declares
//      (found by asking the op's own attribute verifier), create it with the
//      declared result types and run the op's verifier, which checks operand
//      counts, types and that inference agrees with the declared shapes;
//   6. return the loss and check that every declared tensor got defined.
//
// Diagnostics read `<file>: <json path>: <what was expected>, found <what>`.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/GraphJSON/GraphJSON.h"

#include "Vocabulary.h"

#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Support/JSON.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::graph_json;
using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// JSON helpers
//===----------------------------------------------------------------------===//

/// A short rendering of a JSON value for "found ..." in messages. Containers
/// are named, not dumped: dumping is recursive and the value untrusted.
static std::string describe(const json &value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
  case json::value_t::number_float: {
    std::string text = value.dump();
    if (value.is_number_float() &&
        text.find_first_of(".eE") == std::string::npos && text != "null")
      text += ".0";
    return text;
  }
  case json::value_t::string: {
    std::string text =
        value.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 48)
      text = text.substr(0, 44) + "...\"";
    return text;
  }
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "a binary value";
  }
}

static std::string join(const std::string &path, StringRef key) {
  return path.empty() ? key.str() : path + "." + key.str();
}

static std::string join(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

namespace {

/// The kinds of op attribute graph JSON can write, and how.
enum class AttrKind {
  Unit,     // true (present) or false (absent)
  Bool,     // true or false
  I64,      // integer
  I32,      // integer in 32 bits
  F64,      // number, or "inf", "-inf", "nan"
  F32,      // number, or "inf", "-inf", "nan"
  I64Array, // array of integers
  I32Array, // array of integers in 32 bits
  F64Array, // array of numbers
  String,   // string
  Enum,     // case name of EnumCodec `enumIndex`
  Unsupported,
};

struct AttrKindInfo {
  AttrKind kind = AttrKind::Unsupported;
  unsigned enumIndex = 0;
};

/// Where a tensor gets its value.
struct TensorInfo {
  RankedTensorType type;
  /// Set once the tensor is defined (a function argument or an op result).
  Value value;
  /// The JSON path that defines it, for "defined twice" messages.
  std::string definedAt;
  /// The index of the op that produces it (step 4), if any.
  std::optional<size_t> producer;
  bool isArgument = false;
};

class Importer {
public:
  Importer(StringRef fileName, MLIRContext *context)
      : fileName(fileName), context(context), builder(context) {}

  OwningOpRef<ModuleOp> run(StringRef text);

private:
  /// Starts an error at `path` (empty: the document).
  InFlightDiagnostic error(const std::string &path) {
    InFlightDiagnostic diag = emitError(UnknownLoc::get(context));
    diag << fileName << ": ";
    if (!path.empty())
      diag << path << ": ";
    return diag;
  }

  // Typed accessors: each reports "expected ..., found ..." on a mismatch.
  const json *getKey(const json &object, StringRef key,
                     const std::string &path);
  LogicalResult checkKeys(const json &object, const std::string &path,
                          ArrayRef<StringRef> allowed);
  LogicalResult expectObject(const json &value, const std::string &path);
  LogicalResult expectArray(const json &value, const std::string &path);
  FailureOr<StringRef> getString(const json &value, const std::string &path);
  FailureOr<int64_t> getInt(const json &value, const std::string &path);
  FailureOr<double> getNumber(const json &value, const std::string &path);
  FailureOr<bool> getBool(const json &value, const std::string &path);

  LogicalResult reportParseError(const ::loom::support::JSONError &parseError);
  LogicalResult checkHeader(const json &root);
  LogicalResult declareTensors(const json &tensors);
  FailureOr<TensorInfo *> lookupTensor(const json &value,
                                       const std::string &path);
  LogicalResult markArguments(const json &parameters, const json &inputs);
  FailureOr<InitializerAttr> parseInitializer(const json &value,
                                              const std::string &path);
  LogicalResult noteProducers(const json &ops);
  FailureOr<Value> useTensor(const json &value, const std::string &path,
                             size_t opIndex);
  LogicalResult defineResults(const json &results, const std::string &path,
                              SmallVectorImpl<TensorInfo *> &infos);
  LogicalResult importOp(const json &op, size_t index);
  LogicalResult importConstant(const json &op, const std::string &path,
                               TensorInfo *result, Location loc);
  AttrKindInfo classifyAttr(RegisteredOperationName name, StringAttr attr);
  FailureOr<Attribute> convertAttr(AttrKindInfo kind, const json &value,
                                   const std::string &path);
  FailureOr<Attribute> convertElement(Type elementType, const json &value,
                                      const std::string &path);

  StringRef fileName;
  MLIRContext *context;
  OpBuilder builder;
  std::vector<TensorInfo> tensors;
  std::vector<std::string> tensorNames;
  llvm::StringMap<size_t> tensorIndex;
  /// The argument attributes, by tensor index.
  llvm::DenseMap<size_t, Attribute> paramAttrs, inputAttrs, fileShapeAttrs;
  llvm::DenseMap<std::pair<OperationName, StringAttr>, AttrKindInfo> kinds;
};
} // namespace

const json *Importer::getKey(const json &object, StringRef key,
                             const std::string &path) {
  auto it = object.find(key.str());
  if (it == object.end()) {
    error(path) << "missing key \"" << key << "\"";
    return nullptr;
  }
  return &*it;
}

LogicalResult Importer::checkKeys(const json &object, const std::string &path,
                                  ArrayRef<StringRef> allowed) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (llvm::is_contained(allowed, StringRef(it.key())))
      continue;
    InFlightDiagnostic diag = error(path);
    diag << "unknown key " << describe(json(it.key())) << ", expected ";
    llvm::interleave(
        allowed, diag, [&](StringRef key) { diag << "\"" << key << "\""; },
        ", ");
    return failure();
  }
  return success();
}

LogicalResult Importer::expectObject(const json &value,
                                     const std::string &path) {
  if (value.is_object())
    return success();
  return error(path) << "expected an object, found " << describe(value);
}

LogicalResult Importer::expectArray(const json &value,
                                    const std::string &path) {
  if (value.is_array())
    return success();
  return error(path) << "expected an array, found " << describe(value);
}

FailureOr<StringRef> Importer::getString(const json &value,
                                         const std::string &path) {
  if (!value.is_string())
    return error(path) << "expected a string, found " << describe(value);
  return StringRef(value.get_ref<const std::string &>());
}

FailureOr<int64_t> Importer::getInt(const json &value,
                                    const std::string &path) {
  if (value.is_number_unsigned()) {
    uint64_t unsignedValue = value.get<uint64_t>();
    if (unsignedValue >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return error(path) << "expected a 64-bit integer, found "
                         << describe(value);
    return static_cast<int64_t>(unsignedValue);
  }
  if (value.is_number_integer())
    return value.get<int64_t>();
  return error(path) << "expected an integer, found " << describe(value);
}

FailureOr<double> Importer::getNumber(const json &value,
                                      const std::string &path) {
  if (value.is_number())
    return value.get<double>();
  // JSON has no literals for the non-finite values masks and bounds use.
  if (value.is_string()) {
    StringRef text = value.get_ref<const std::string &>();
    if (text == "inf")
      return std::numeric_limits<double>::infinity();
    if (text == "-inf")
      return -std::numeric_limits<double>::infinity();
    if (text == "nan")
      return std::numeric_limits<double>::quiet_NaN();
  }
  return error(path) << "expected a number (or \"inf\", \"-inf\", \"nan\"), "
                        "found "
                     << describe(value);
}

FailureOr<bool> Importer::getBool(const json &value, const std::string &path) {
  if (!value.is_boolean())
    return error(path) << "expected true or false, found " << describe(value);
  return value.get<bool>();
}

//===----------------------------------------------------------------------===//
// Steps 1-3: text, header, tensors, arguments
//===----------------------------------------------------------------------===//

LogicalResult Importer::reportParseError(const ::loom::support::JSONError &parseError) {
  return emitError(FileLineColLoc::get(context, fileName, parseError.line,
                                       parseError.column))
         << fileName << ": " << parseError.format();
}

LogicalResult Importer::checkHeader(const json &root) {
  if (failed(expectObject(root, "")))
    return failure();
  if (failed(checkKeys(root, "",
                       {"format", "version", "tensors", "parameters", "inputs",
                        "ops", "outputs"})))
    return failure();
  const json *format = getKey(root, "format", "");
  if (!format)
    return failure();
  FailureOr<StringRef> formatName = getString(*format, "format");
  if (failed(formatName))
    return failure();
  if (*formatName != kFormatName)
    return error("format") << "expected \"" << kFormatName << "\", found "
                           << describe(*format);
  const json *version = getKey(root, "version", "");
  if (!version)
    return failure();
  FailureOr<int64_t> versionNumber = getInt(*version, "version");
  if (failed(versionNumber))
    return failure();
  if (*versionNumber != kFormatVersion)
    return error("version")
           << "expected version " << kFormatVersion
           << " (the only one this build reads), found " << *versionNumber;
  return success();
}

LogicalResult Importer::declareTensors(const json &list) {
  if (failed(expectArray(list, "tensors")))
    return failure();
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = join("tensors", i);
    const json &entry = list[i];
    if (failed(expectObject(entry, path)) ||
        failed(checkKeys(entry, path, {"name", "shape", "dtype"})))
      return failure();
    const json *name = getKey(entry, "name", path);
    const json *shape = name ? getKey(entry, "shape", path) : nullptr;
    const json *dtype = shape ? getKey(entry, "dtype", path) : nullptr;
    if (!dtype)
      return failure();
    FailureOr<StringRef> nameText = getString(*name, join(path, "name"));
    if (failed(nameText))
      return failure();
    if (nameText->empty())
      return error(join(path, "name")) << "expected a non-empty tensor name";
    auto [it, inserted] = tensorIndex.try_emplace(*nameText, tensors.size());
    if (!inserted)
      return error(join(path, "name"))
             << "duplicate tensor name " << describe(*name)
             << ", first declared at " << join("tensors", it->second);

    std::string shapePath = join(path, "shape");
    if (failed(expectArray(*shape, shapePath)))
      return failure();
    SmallVector<int64_t> dims;
    int64_t numElements = 1;
    for (size_t d = 0; d < shape->size(); ++d) {
      FailureOr<int64_t> dim = getInt((*shape)[d], join(shapePath, d));
      if (failed(dim))
        return failure();
      if (*dim < 0)
        return error(join(shapePath, d))
               << "expected a dim size >= 0, found " << *dim;
      // Element counts must fit in 64 bits: constants and costs compute
      // them.
      if (llvm::MulOverflow(numElements, *dim, numElements))
        return error(shapePath)
               << "expected at most 2^63 - 1 elements, the shape has more";
      dims.push_back(*dim);
    }
    FailureOr<StringRef> dtypeName = getString(*dtype, join(path, "dtype"));
    if (failed(dtypeName))
      return failure();
    Type elementType = parseDType(*dtypeName, context);
    if (!elementType)
      return error(join(path, "dtype")) << "expected a dtype (" << kDTypeList
                                        << "), found " << describe(*dtype);
    TensorInfo info;
    info.type = RankedTensorType::get(dims, elementType);
    tensors.push_back(info);
    tensorNames.push_back(nameText->str());
  }
  return success();
}

FailureOr<TensorInfo *> Importer::lookupTensor(const json &value,
                                               const std::string &path) {
  FailureOr<StringRef> name = getString(value, path);
  if (failed(name))
    return failure();
  auto it = tensorIndex.find(*name);
  if (it == tensorIndex.end())
    return error(path) << "tensor " << describe(value)
                       << " is not declared in \"tensors\"";
  return &tensors[it->second];
}

FailureOr<InitializerAttr> Importer::parseInitializer(const json &value,
                                                      const std::string &path) {
  if (failed(expectObject(value, path)))
    return failure();
  const json *kindJson = getKey(value, "kind", path);
  if (!kindJson)
    return failure();
  FailureOr<StringRef> kindName = getString(*kindJson, join(path, "kind"));
  if (failed(kindName))
    return failure();
  std::optional<InitKind> kind = symbolizeInitKind(*kindName);
  if (!kind)
    return error(join(path, "kind"))
           << "expected an initializer (normal, zeros, ones, uniform or "
              "scaled_normal), found "
           << describe(*kindJson);
  // The arguments by name, in the order #loom.init takes them.
  SmallVector<StringRef, 2> argNames;
  switch (*kind) {
  case InitKind::Normal:
    argNames = {"std"};
    break;
  case InitKind::Zeros:
  case InitKind::Ones:
    break;
  case InitKind::Uniform:
    argNames = {"low", "high"};
    break;
  case InitKind::ScaledNormal:
    argNames = {"std", "factor"};
    break;
  }
  SmallVector<StringRef, 3> allowed = {"kind"};
  allowed.append(argNames.begin(), argNames.end());
  if (failed(checkKeys(value, path, allowed)))
    return failure();
  SmallVector<double, 2> args;
  for (StringRef argName : argNames) {
    const json *arg = getKey(value, argName, path);
    if (!arg)
      return failure();
    FailureOr<double> number = getNumber(*arg, join(path, argName));
    if (failed(number))
      return failure();
    args.push_back(*number);
  }
  // The attribute's own verifier states the ranges (std > 0, low < high).
  InitializerAttr init =
      InitializerAttr::getChecked([&] { return error(path); }, context, *kind,
                                  DenseF64ArrayAttr::get(context, args));
  if (!init)
    return failure();
  return init;
}

LogicalResult Importer::markArguments(const json &parameters,
                                      const json &inputs) {
  if (failed(expectArray(parameters, "parameters")) ||
      failed(expectArray(inputs, "inputs")))
    return failure();
  llvm::StringMap<std::string> paramNames;
  for (size_t i = 0; i < parameters.size(); ++i) {
    std::string path = join("parameters", i);
    const json &entry = parameters[i];
    if (failed(expectObject(entry, path)) ||
        failed(checkKeys(entry, path,
                         {"tensor", "name", "init", "decay", "file_shape"})))
      return failure();
    const json *tensorJson = getKey(entry, "tensor", path);
    const json *name = tensorJson ? getKey(entry, "name", path) : nullptr;
    const json *init = name ? getKey(entry, "init", path) : nullptr;
    const json *decay = init ? getKey(entry, "decay", path) : nullptr;
    if (!decay)
      return failure();
    FailureOr<TensorInfo *> tensor =
        lookupTensor(*tensorJson, join(path, "tensor"));
    if (failed(tensor))
      return failure();
    if ((*tensor)->isArgument)
      return error(join(path, "tensor"))
             << "tensor " << describe(*tensorJson) << " is already marked by "
             << (*tensor)->definedAt;
    if (!isa<FloatType>((*tensor)->type.getElementType()))
      return error(join(path, "tensor"))
             << "expected a floating-point tensor (parameters are trained), "
                "found "
             << describe(*tensorJson) << " of type " << (*tensor)->type;
    FailureOr<StringRef> paramName = getString(*name, join(path, "name"));
    if (failed(paramName))
      return failure();
    if (paramName->empty())
      return error(join(path, "name")) << "expected a non-empty parameter name";
    auto [it, inserted] = paramNames.try_emplace(*paramName, path);
    if (!inserted)
      return error(join(path, "name"))
             << "duplicate parameter name " << describe(*name)
             << ", first used at " << it->second;
    FailureOr<InitializerAttr> initAttr =
        parseInitializer(*init, join(path, "init"));
    if (failed(initAttr))
      return failure();
    FailureOr<bool> decayFlag = getBool(*decay, join(path, "decay"));
    if (failed(decayFlag))
      return failure();
    (*tensor)->isArgument = true;
    (*tensor)->definedAt = path;
    // The attribute's verifier checks the name (UTF-8, not empty).
    ParamAttr param = ParamAttr::getChecked(
        [&] { return error(join(path, "name")); }, context, *paramName,
        *initAttr, *decayFlag);
    if (!param)
      return failure();
    paramAttrs[*tensor - tensors.data()] = param;
    // Optional: the parameter's shape in its ecosystem's files when the
    // graph holds it as a row-major view (`loom.file_shape`).
    if (entry.contains("file_shape")) {
      const json *fileShape = &entry["file_shape"];
      std::string shapePath = join(path, "file_shape");
      if (failed(expectArray(*fileShape, shapePath)))
        return failure();
      SmallVector<int64_t> dims;
      int64_t count = 1;
      for (size_t d = 0; d < fileShape->size(); ++d) {
        FailureOr<int64_t> dim = getInt((*fileShape)[d], join(shapePath, d));
        if (failed(dim))
          return failure();
        if (*dim < 0 || llvm::MulOverflow(count, *dim, count))
          return error(join(shapePath, d))
                 << "expected a dim size >= 0 (at most 2^63 - 1 elements in "
                    "all), found "
                 << *dim;
        dims.push_back(*dim);
      }
      if (count != (*tensor)->type.getNumElements())
        return error(shapePath)
               << "expected a shape of " << (*tensor)->type.getNumElements()
               << " elements (a view of " << (*tensor)->type << "), found "
               << count;
      fileShapeAttrs[*tensor - tensors.data()] =
          DenseI64ArrayAttr::get(context, dims);
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string path = join("inputs", i);
    const json &entry = inputs[i];
    if (failed(expectObject(entry, path)) ||
        failed(checkKeys(entry, path, {"tensor", "role"})))
      return failure();
    const json *tensorJson = getKey(entry, "tensor", path);
    const json *role = tensorJson ? getKey(entry, "role", path) : nullptr;
    if (!role)
      return failure();
    FailureOr<TensorInfo *> tensor =
        lookupTensor(*tensorJson, join(path, "tensor"));
    if (failed(tensor))
      return failure();
    if ((*tensor)->isArgument)
      return error(join(path, "tensor"))
             << "tensor " << describe(*tensorJson) << " is already marked by "
             << (*tensor)->definedAt;
    FailureOr<StringRef> roleName = getString(*role, join(path, "role"));
    if (failed(roleName))
      return failure();
    std::optional<InputRole> roleValue = symbolizeInputRole(*roleName);
    if (!roleValue)
      return error(join(path, "role"))
             << "expected a role (input_ids, labels, positions, mask or "
                "decoder_input_ids), found "
             << describe(*role);
    // Ids index embeddings and losses; only a mask may be floating point.
    if (*roleValue != InputRole::Mask &&
        !isa<IntegerType>((*tensor)->type.getElementType()))
      return error(join(path, "role"))
             << "role \"" << *roleName << "\" expects an integer tensor, found "
             << describe(*tensorJson) << " of type " << (*tensor)->type;
    (*tensor)->isArgument = true;
    (*tensor)->definedAt = path;
    inputAttrs[*tensor - tensors.data()] =
        InputRoleAttr::get(context, *roleValue);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Steps 4-5: ops
//===----------------------------------------------------------------------===//

LogicalResult Importer::noteProducers(const json &ops) {
  if (failed(expectArray(ops, "ops")))
    return failure();
  // Only well-formed entries are noted; importOp reports the others.
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].is_object())
      continue;
    auto results = ops[i].find("results");
    if (results == ops[i].end() || !results->is_array())
      continue;
    for (const json &result : *results) {
      if (!result.is_string())
        continue;
      auto it = tensorIndex.find(result.get_ref<const std::string &>());
      if (it != tensorIndex.end() && !tensors[it->second].producer)
        tensors[it->second].producer = i;
    }
  }
  return success();
}

FailureOr<Value> Importer::useTensor(const json &value, const std::string &path,
                                     size_t opIndex) {
  FailureOr<TensorInfo *> tensor = lookupTensor(value, path);
  if (failed(tensor))
    return failure();
  if ((*tensor)->value)
    return (*tensor)->value;
  // Ops are in program order, so a later producer means a cycle.
  if ((*tensor)->producer) {
    InFlightDiagnostic diag = error(path);
    diag << "tensor " << describe(value) << " is used before it is defined: ";
    if (*(*tensor)->producer == opIndex)
      diag << "this op produces it (a cycle)";
    else
      diag << join("ops", *(*tensor)->producer)
           << " produces it; ops must be listed in program order";
    return failure();
  }
  return error(path) << "tensor " << describe(value)
                     << " is never defined: not a parameter, an input or an "
                        "op result";
}

LogicalResult Importer::defineResults(const json &results,
                                      const std::string &path,
                                      SmallVectorImpl<TensorInfo *> &infos) {
  if (failed(expectArray(results, path)))
    return failure();
  for (size_t i = 0; i < results.size(); ++i) {
    std::string resultPath = join(path, i);
    FailureOr<TensorInfo *> tensor = lookupTensor(results[i], resultPath);
    if (failed(tensor))
      return failure();
    if (!(*tensor)->definedAt.empty())
      return error(resultPath)
             << "tensor " << describe(results[i]) << " is defined twice, "
             << "first by " << (*tensor)->definedAt;
    (*tensor)->definedAt = resultPath;
    infos.push_back(*tensor);
  }
  return success();
}

/// A location that records the tensor names of an op's results, so that the
/// exporter writes the same names back.
static Location getResultsLoc(MLIRContext *context, ArrayRef<std::string> names,
                              Location fallback) {
  SmallVector<Location> locs;
  for (const std::string &name : names)
    locs.push_back(
        NameLoc::get(StringAttr::get(context, name), UnknownLoc::get(context)));
  if (locs.empty())
    return fallback;
  if (locs.size() == 1)
    return locs.front();
  // FusedLoc::get folds equal locations, but result names are unique.
  return FusedLoc::get(context, locs);
}

AttrKindInfo Importer::classifyAttr(RegisteredOperationName name,
                                    StringAttr attr) {
  auto key = std::make_pair(OperationName(name), attr);
  auto cached = kinds.find(key);
  if (cached != kinds.end())
    return cached->second;

  // Ask the op's generated attribute verifier which sample it accepts: the
  // kind comes from the ODS declaration, with no table per op here.
  Builder b(context);
  SmallVector<std::pair<AttrKindInfo, Attribute>> samples = {
      {{AttrKind::Unit}, b.getUnitAttr()},
      {{AttrKind::Bool}, b.getBoolAttr(false)},
      {{AttrKind::I64}, b.getI64IntegerAttr(0)},
      {{AttrKind::I32}, b.getI32IntegerAttr(0)},
      {{AttrKind::F64}, b.getF64FloatAttr(0)},
      {{AttrKind::F32}, b.getF32FloatAttr(0)},
      {{AttrKind::I64Array}, b.getDenseI64ArrayAttr({})},
      {{AttrKind::I32Array}, b.getDenseI32ArrayAttr({})},
      {{AttrKind::F64Array}, b.getDenseF64ArrayAttr({})},
      {{AttrKind::String}, b.getStringAttr("")},
  };
  ArrayRef<EnumCodec> codecs = getEnumCodecs();
  for (unsigned i = 0; i < codecs.size(); ++i)
    samples.push_back({{AttrKind::Enum, i}, codecs[i].sample(context)});

  AttrKindInfo result;
  // The rejections are expected; keep them out of the user's diagnostics.
  ScopedDiagnosticHandler silence(context,
                                  [](Diagnostic &) { return success(); });
  for (auto &[kind, sample] : samples) {
    NamedAttrList list;
    list.append(attr, sample);
    if (succeeded(name.verifyInherentAttrs(
            list, [&] { return emitError(UnknownLoc::get(context)); }))) {
      result = kind;
      break;
    }
  }
  kinds[key] = result;
  return result;
}

FailureOr<Attribute> Importer::convertAttr(AttrKindInfo kind, const json &value,
                                           const std::string &path) {
  Builder b(context);
  auto getIntArray = [&](bool is32) -> FailureOr<SmallVector<int64_t>> {
    if (failed(expectArray(value, path)))
      return failure();
    SmallVector<int64_t> values;
    for (size_t i = 0; i < value.size(); ++i) {
      FailureOr<int64_t> element = getInt(value[i], join(path, i));
      if (failed(element))
        return failure();
      if (is32 && (*element < std::numeric_limits<int32_t>::min() ||
                   *element > std::numeric_limits<int32_t>::max()))
        return error(join(path, i))
               << "expected a 32-bit integer, found " << *element;
      values.push_back(*element);
    }
    return values;
  };
  switch (kind.kind) {
  case AttrKind::Unit: {
    FailureOr<bool> flag = getBool(value, path);
    if (failed(flag))
      return failure();
    // A unit attribute is a flag: false means absent.
    return *flag ? Attribute(b.getUnitAttr()) : Attribute();
  }
  case AttrKind::Bool: {
    FailureOr<bool> flag = getBool(value, path);
    if (failed(flag))
      return failure();
    return Attribute(b.getBoolAttr(*flag));
  }
  case AttrKind::I64:
  case AttrKind::I32: {
    FailureOr<int64_t> number = getInt(value, path);
    if (failed(number))
      return failure();
    if (kind.kind == AttrKind::I64)
      return Attribute(b.getI64IntegerAttr(*number));
    if (*number < std::numeric_limits<int32_t>::min() ||
        *number > std::numeric_limits<int32_t>::max())
      return error(path) << "expected a 32-bit integer, found " << *number;
    return Attribute(b.getI32IntegerAttr(*number));
  }
  case AttrKind::F64:
  case AttrKind::F32: {
    FailureOr<double> number = getNumber(value, path);
    if (failed(number))
      return failure();
    if (kind.kind == AttrKind::F64)
      return Attribute(b.getF64FloatAttr(*number));
    return Attribute(b.getF32FloatAttr(static_cast<float>(*number)));
  }
  case AttrKind::I64Array:
  case AttrKind::I32Array: {
    bool is32 = kind.kind == AttrKind::I32Array;
    FailureOr<SmallVector<int64_t>> values = getIntArray(is32);
    if (failed(values))
      return failure();
    if (!is32)
      return Attribute(b.getDenseI64ArrayAttr(*values));
    SmallVector<int32_t> narrow(values->begin(), values->end());
    return Attribute(b.getDenseI32ArrayAttr(narrow));
  }
  case AttrKind::F64Array: {
    if (failed(expectArray(value, path)))
      return failure();
    SmallVector<double> values;
    for (size_t i = 0; i < value.size(); ++i) {
      FailureOr<double> element = getNumber(value[i], join(path, i));
      if (failed(element))
        return failure();
      values.push_back(*element);
    }
    return Attribute(b.getDenseF64ArrayAttr(values));
  }
  case AttrKind::String: {
    FailureOr<StringRef> text = getString(value, path);
    if (failed(text))
      return failure();
    return Attribute(b.getStringAttr(*text));
  }
  case AttrKind::Enum: {
    const EnumCodec &codec = getEnumCodecs()[kind.enumIndex];
    Attribute attr;
    if (value.is_string())
      attr = codec.fromString(context, value.get_ref<const std::string &>());
    if (!attr)
      return error(path) << "expected " << codec.cases << ", found "
                         << describe(value);
    return attr;
  }
  case AttrKind::Unsupported:
    break;
  }
  return error(path) << "this attribute has a kind graph JSON cannot express";
}

FailureOr<Attribute> Importer::convertElement(Type elementType,
                                              const json &value,
                                              const std::string &path) {
  Builder b(context);
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    FailureOr<double> number = getNumber(value, path);
    if (failed(number))
      return failure();
    // Round to the element type as a cast would (f16 and bf16 included).
    APFloat converted(*number);
    bool losesInfo = false;
    converted.convert(floatType.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &losesInfo);
    return Attribute(FloatAttr::get(floatType, converted));
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  if (width == 1) {
    if (value.is_boolean())
      return Attribute(b.getIntegerAttr(elementType, value.get<bool>()));
    return error(path) << "expected true or false, found " << describe(value);
  }
  FailureOr<int64_t> number = getInt(value, path);
  if (failed(number))
    return failure();
  if (width == 32 && (*number < std::numeric_limits<int32_t>::min() ||
                      *number > std::numeric_limits<int32_t>::max()))
    return error(path) << "expected a 32-bit integer, found " << *number;
  return Attribute(b.getIntegerAttr(elementType, *number));
}

LogicalResult Importer::importConstant(const json &op, const std::string &path,
                                       TensorInfo *result, Location loc) {
  auto operands = op.find("operands");
  if (operands != op.end() && !(operands->is_array() && operands->empty()))
    return error(join(path, "operands"))
           << "expected no operands for a constant, found "
           << describe(*operands);
  const json *attributes = getKey(op, "attributes", path);
  if (!attributes)
    return failure();
  std::string attrsPath = join(path, "attributes");
  if (failed(expectObject(*attributes, attrsPath)) ||
      failed(checkKeys(*attributes, attrsPath, {"value"})))
    return failure();
  const json *value = getKey(*attributes, "value", attrsPath);
  if (!value)
    return failure();
  std::string valuePath = join(attrsPath, "value");
  RankedTensorType type = result->type;
  Type elementType = type.getElementType();
  DenseElementsAttr dense;
  if (!value->is_array()) {
    FailureOr<Attribute> splat = convertElement(elementType, *value, valuePath);
    if (failed(splat))
      return failure();
    dense = DenseElementsAttr::get(type, *splat);
  } else {
    int64_t numElements = type.getNumElements();
    if (static_cast<uint64_t>(numElements) != value->size())
      return error(valuePath)
             << "expected " << numElements << " values (the elements of "
             << type << " in row-major order) or one value for a splat, "
             << "found " << value->size();
    SmallVector<Attribute> elements;
    elements.reserve(value->size());
    for (size_t i = 0; i < value->size(); ++i) {
      FailureOr<Attribute> element =
          convertElement(elementType, (*value)[i], join(valuePath, i));
      if (failed(element))
        return failure();
      elements.push_back(*element);
    }
    dense = DenseElementsAttr::get(type, elements);
  }
  result->value =
      arith::ConstantOp::create(builder, loc, cast<TypedAttr>(dense))
          .getResult();
  return success();
}

LogicalResult Importer::importOp(const json &op, size_t index) {
  std::string path = join("ops", index);
  if (failed(expectObject(op, path)) ||
      failed(checkKeys(op, path, {"op", "operands", "results", "attributes"})))
    return failure();
  const json *opName = getKey(op, "op", path);
  const json *results = opName ? getKey(op, "results", path) : nullptr;
  if (!results)
    return failure();
  FailureOr<StringRef> mnemonic = getString(*opName, join(path, "op"));
  if (failed(mnemonic))
    return failure();
  std::optional<RegisteredOperationName> info;
  if (*mnemonic != kConstantOpName) {
    info =
        RegisteredOperationName::lookup(("loom." + *mnemonic).str(), context);
    if (!info)
      return error(join(path, "op"))
             << "unknown op " << describe(*opName)
             << ", expected the mnemonic of a `loom` op (matmul, add, ...) or "
                "\"constant\"";
  }

  SmallVector<TensorInfo *> resultInfos;
  if (failed(defineResults(*results, join(path, "results"), resultInfos)))
    return failure();
  SmallVector<std::string> resultNames;
  for (TensorInfo *tensor : resultInfos)
    resultNames.push_back(tensorNames[tensor - tensors.data()]);
  Location loc =
      getResultsLoc(context, resultNames,
                    FileLineColLoc::get(context, fileName, /*line=*/1, 1));

  if (!info) {
    if (resultInfos.size() != 1)
      return error(join(path, "results"))
             << "expected one result for a constant, found "
             << resultInfos.size();
    return importConstant(op, path, resultInfos.front(), loc);
  }

  // Operands. With several optional operands (AttrSizedOperandSegments) each
  // ODS operand gets one entry: a name, null when absent, or a list.
  bool segmented = info->hasTrait<OpTrait::AttrSizedOperandSegments>();
  if (info->hasTrait<OpTrait::AttrSizedResultSegments>())
    return error(join(path, "op")) << "ops with several variadic results "
                                      "have no graph JSON form yet";
  OperationState state(loc, *info);
  SmallVector<int32_t> segments;
  auto operands = op.find("operands");
  if (operands != op.end()) {
    std::string operandsPath = join(path, "operands");
    if (failed(expectArray(*operands, operandsPath)))
      return failure();
    for (size_t i = 0; i < operands->size(); ++i) {
      const json &entry = (*operands)[i];
      std::string entryPath = join(operandsPath, i);
      if (segmented && entry.is_null()) {
        segments.push_back(0);
        continue;
      }
      if (segmented && entry.is_array()) {
        for (size_t j = 0; j < entry.size(); ++j) {
          FailureOr<Value> value =
              useTensor(entry[j], join(entryPath, j), index);
          if (failed(value))
            return failure();
          state.addOperands(*value);
        }
        segments.push_back(entry.size());
        continue;
      }
      if (!entry.is_string())
        return error(entryPath)
               << "expected a tensor name"
               << (segmented ? ", null (an absent optional operand) or a list "
                               "of tensor names"
                             : "")
               << ", found " << describe(entry);
      FailureOr<Value> value = useTensor(entry, entryPath, index);
      if (failed(value))
        return failure();
      state.addOperands(*value);
      segments.push_back(1);
    }
  }
  if (segmented)
    state.addAttribute("operandSegmentSizes",
                       builder.getDenseI32ArrayAttr(segments));

  // Attributes, converted to the kind the op declares.
  auto attributes = op.find("attributes");
  if (attributes != op.end()) {
    std::string attrsPath = join(path, "attributes");
    if (failed(expectObject(*attributes, attrsPath)))
      return failure();
    for (auto it = attributes->begin(); it != attributes->end(); ++it) {
      std::string attrPath = join(attrsPath, it.key());
      StringAttr attrName = builder.getStringAttr(it.key());
      bool known = llvm::is_contained(info->getAttributeNames(), attrName) &&
                   attrName != "operandSegmentSizes";
      if (!known) {
        InFlightDiagnostic diag = error(attrsPath);
        diag << "unknown attribute " << describe(json(it.key())) << " of "
             << describe(*opName) << ", expected ";
        SmallVector<StringRef> names;
        for (StringAttr name : info->getAttributeNames())
          if (name != "operandSegmentSizes")
            names.push_back(name.getValue());
        if (names.empty())
          diag << "none";
        llvm::interleaveComma(names, diag);
        return failure();
      }
      FailureOr<Attribute> attr =
          convertAttr(classifyAttr(*info, attrName), it.value(), attrPath);
      if (failed(attr))
        return failure();
      if (*attr)
        state.addAttribute(attrName, *attr);
    }
  }

  // Results take their declared types; the verifier checks them against
  // inference (and reshape/cast, which infer nothing, against their input).
  for (TensorInfo *tensor : resultInfos)
    state.addTypes(tensor->type);
  Operation *created = builder.create(state);

  if (segmented) {
    auto sizes = dyn_cast_or_null<DenseI32ArrayAttr>(
        created->getInherentAttr("operandSegmentSizes").value_or(Attribute()));
    if (sizes && static_cast<size_t>(sizes.size()) != segments.size()) {
      created->erase();
      return error(join(path, "operands"))
             << "expected " << sizes.size() << " entries for "
             << describe(*opName)
             << " (one per operand, null when an optional one is absent), "
                "found "
             << segments.size();
    }
  }

  // Run the op's verifier, re-reporting its messages under the JSON path.
  SmallVector<std::string> messages;
  LogicalResult verified = success();
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        messages.push_back(diag.str());
      return success();
    });
    verified = verify(created);
  }
  if (failed(verified)) {
    created->erase();
    InFlightDiagnostic diag = error(path);
    if (messages.empty())
      diag << "the op does not verify";
    llvm::interleave(messages, diag, "; ");
    return failure();
  }
  for (auto [tensor, result] : llvm::zip(resultInfos, created->getResults()))
    tensor->value = result;
  return success();
}

//===----------------------------------------------------------------------===//
// The whole document
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Importer::run(StringRef text) {
  context->loadDialect<LoomDialect, func::FuncDialect, arith::ArithDialect>();
  json root;
  if (std::optional<::loom::support::JSONError> parseError =
          ::loom::support::parseJSON(std::string_view(text.data(), text.size()), root)) {
    (void)reportParseError(*parseError);
    return {};
  }
  if (failed(checkHeader(root)))
    return {};
  const json *tensorList = getKey(root, "tensors", "");
  const json *parameters =
      tensorList ? getKey(root, "parameters", "") : nullptr;
  const json *inputs = parameters ? getKey(root, "inputs", "") : nullptr;
  const json *ops = inputs ? getKey(root, "ops", "") : nullptr;
  const json *outputs = ops ? getKey(root, "outputs", "") : nullptr;
  if (!outputs)
    return {};
  if (failed(declareTensors(*tensorList)) ||
      failed(markArguments(*parameters, *inputs)) ||
      failed(noteProducers(*ops)) || failed(expectArray(*outputs, "outputs")))
    return {};

  // The loss: one rank-0 floating-point tensor (the import contract).
  if (outputs->size() != 1) {
    error("outputs") << "expected exactly one output (the loss), found "
                     << outputs->size();
    return {};
  }
  FailureOr<TensorInfo *> loss = lookupTensor((*outputs)[0], "outputs[0]");
  if (failed(loss))
    return {};
  if ((*loss)->type.getRank() != 0 ||
      !isa<FloatType>((*loss)->type.getElementType())) {
    error("outputs[0]")
        << "expected the loss, a rank-0 floating-point tensor, found "
        << describe((*outputs)[0]) << " of type " << (*loss)->type;
    return {};
  }

  // The function: arguments in the order their tensors are declared.
  Location fileLoc = FileLineColLoc::get(context, fileName, 1, 1);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());
  SmallVector<size_t> argTensors;
  SmallVector<Type> argTypes;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].isArgument)
      continue;
    argTensors.push_back(i);
    argTypes.push_back(tensors[i].type);
  }
  auto func =
      func::FuncOp::create(builder, fileLoc, kEntryName,
                           builder.getFunctionType(argTypes, {(*loss)->type}));
  Block *body = new Block();
  func.getBody().push_back(body);
  for (auto [argIndex, tensorIdx] : llvm::enumerate(argTensors)) {
    TensorInfo &tensor = tensors[tensorIdx];
    tensor.value = body->addArgument(
        tensor.type, NameLoc::get(builder.getStringAttr(tensorNames[tensorIdx]),
                                  UnknownLoc::get(context)));
    if (Attribute param = paramAttrs.lookup(tensorIdx))
      func.setArgAttr(argIndex, kParamAttrName, param);
    if (Attribute fileShape = fileShapeAttrs.lookup(tensorIdx))
      func.setArgAttr(argIndex, kFileShapeAttrName, fileShape);
    if (Attribute input = inputAttrs.lookup(tensorIdx))
      func.setArgAttr(argIndex, kInputAttrName, input);
  }

  builder.setInsertionPointToEnd(body);
  for (size_t i = 0; i < ops->size(); ++i)
    if (failed(importOp((*ops)[i], i)))
      return {};

  for (size_t i = 0; i < tensors.size(); ++i)
    if (!tensors[i].value) {
      error(join("tensors", i))
          << "tensor \"" << tensorNames[i]
          << "\" is never defined: not a parameter, an input or an op result";
      return {};
    }
  func::ReturnOp::create(builder, fileLoc, (*loss)->value);

  // Each op was verified as it was built; this checks the argument
  // attributes and the function.
  if (failed(verify(*module)))
    return {};
  return module;
}

OwningOpRef<ModuleOp> mlir::loom::importGraphJson(StringRef text,
                                                  StringRef fileName,
                                                  MLIRContext *context) {
  return Importer(fileName, context).run(text);
}

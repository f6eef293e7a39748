//===- Interpret.cpp - The reference interpreter on caller buffers --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loomSessionInterpret is `loom-run FILE --entry NAME` without files: the
// same interpreter and the same entry-signature rules (names, checks,
// initial values; include/loom/Interpreter/EntrySignature.h):
//
//   1. find the entry in the session's current module and prepare the
//      interpreter (it checks the mesh, the layouts and the ranks);
//   2. match each caller tensor to its argument by name or index, check its
//      global shape, and convert it as loom-run converts file data (the same
//      dtype rules: a float argument takes its declared dtype or the run's);
//   3. initialize the arguments given no data as loom-run does, run, and
//      copy the global results into a tensor list the caller frees.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "loom/Interpreter/EntrySignature.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

using namespace mlir;
using namespace mlir::loom::interp;
using mlir::loom::capi::makeStatus;
namespace io = ::loom::runtime::io;

namespace {

std::optional<io::DType> toFileDType(LoomDType dtype) {
  switch (dtype) {
  case LOOM_DTYPE_F64:
    return io::DType::F64;
  case LOOM_DTYPE_F32:
    return io::DType::F32;
  case LOOM_DTYPE_I64:
    return io::DType::I64;
  case LOOM_DTYPE_I32:
    return io::DType::I32;
  case LOOM_DTYPE_BOOL:
    return io::DType::Bool;
  case LOOM_DTYPE_MAX_ENUM:
    break;
  }
  return std::nullopt;
}

/// The C dtype of interpreter file data; results are F64, F32, I64, I32 or
/// BOOL (tensorToFile writes floats in the run's precision).
std::optional<LoomDType> fromFileDType(io::DType dtype) {
  switch (dtype) {
  case io::DType::F64:
    return LOOM_DTYPE_F64;
  case io::DType::F32:
    return LOOM_DTYPE_F32;
  case io::DType::I64:
    return LOOM_DTYPE_I64;
  case io::DType::I32:
    return LOOM_DTYPE_I32;
  case io::DType::Bool:
    return LOOM_DTYPE_BOOL;
  case io::DType::BF16:
  case io::DType::F16:
    break;
  }
  return std::nullopt;
}

/// The function `name` of the session's current module, or a status.
LoomStatus *findEntry(LoomSession *session, const char *name,
                      func::FuncOp &entry) {
  ModuleOp module = session->getCurrentModule();
  if (!module)
    return makeStatus(LOOM_STATUS_FAILED_PRECONDITION,
                      "no module: load a graph (and run it to a phase) "
                      "before interpreting it");
  std::string entryName = name ? name : "train_step";
  entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (entry && !entry.isExternal())
    return nullptr;
  std::string functions;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      functions += (functions.empty() ? "@" : ", @") + func.getSymName().str();
  return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                    "the module has no function @" + entryName + " (it has: " +
                        (functions.empty() ? std::string("none") : functions) +
                        ")" +
                        (entryName == "train_step"
                             ? "; @train_step appears after the autodiff phase"
                             : ""));
}

std::optional<StorageKind> toFloatKind(LoomDType dtype) {
  if (dtype == LOOM_DTYPE_F64)
    return StorageKind::F64;
  if (dtype == LOOM_DTYPE_F32)
    return StorageKind::F32;
  return std::nullopt;
}

LoomStatus *badFloatType(LoomDType dtype) {
  return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                    "the interpreter computes floats in LOOM_DTYPE_F64 or "
                    "LOOM_DTYPE_F32, not dtype " +
                        llvm::Twine(int(dtype)));
}

/// The dtype an argument declared as `type` takes in a run whose floats
/// are `floatType`.
LoomDType argumentDType(Type type, LoomDType floatType) {
  Type element = getElementTypeOrSelf(type);
  if (isa<FloatType>(element))
    return floatType;
  if (element.isInteger(1))
    return LOOM_DTYPE_BOOL;
  if (element.isInteger(32))
    return LOOM_DTYPE_I32;
  return LOOM_DTYPE_I64;
}

} // namespace

void loomInterpretOptionsInit(LoomInterpretOptions *options) {
  if (!options)
    return;
  options->entry = nullptr;
  options->floatType = LOOM_DTYPE_F64;
  options->ranks = 0;
  options->seed = 0;
}

size_t loomTensorListGetSize(const LoomTensorList *list) {
  return list ? list->entries.size() : 0;
}

LoomTensorView loomTensorListGet(const LoomTensorList *list, size_t index) {
  LoomTensorView view = {nullptr, LOOM_DTYPE_F64, 0, nullptr, nullptr, 0};
  if (!list || index >= list->entries.size())
    return view;
  const LoomTensorList::Entry &entry = list->entries[index];
  view.name = entry.name.c_str();
  view.dtype = entry.dtype;
  view.rank = static_cast<int64_t>(entry.shape.size());
  view.shape = entry.shape.data();
  view.data = entry.hasData ? entry.bytes.data() : nullptr;
  view.byteSize = entry.hasData ? entry.bytes.size() : 0;
  return view;
}

void loomTensorListDestroy(LoomTensorList *list) { delete list; }

LoomStatus *loomSessionGetEntryArguments(LoomSession *session,
                                         const char *entryName,
                                         LoomDType floatType,
                                         LoomTensorList **outList) {
  if (!session || !outList)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionGetEntryArguments: session and outList "
                      "must not be NULL");
  std::optional<StorageKind> floatKind = toFloatKind(floatType);
  if (!floatKind)
    return badFloatType(floatType);
  func::FuncOp entry;
  if (LoomStatus *status = findEntry(session, entryName, entry))
    return status;
  RunOptions options;
  options.floatKind = *floatKind;
  Interpreter interpreter(entry, KernelRegistry::getDefault(), options);
  if (std::optional<std::string> error = interpreter.prepare())
    return makeStatus(LOOM_STATUS_RUNTIME_ERROR, *error);
  auto list = std::make_unique<LoomTensorList>();
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    const Shape &shape = interpreter.getArgumentShape(i);
    list->entries.push_back(
        {getArgumentName(entry, i),
         argumentDType(entry.getArgumentTypes()[i], floatType),
         std::vector<int64_t>(shape.begin(), shape.end()),
         {},
         false});
  }
  *outList = list.release();
  return nullptr;
}

LoomStatus *loomSessionInterpret(LoomSession *session,
                                 const LoomInterpretOptions *runOptions,
                                 const LoomTensor *inputs, size_t numInputs,
                                 LoomTensorList **outResults) {
  if (!session || !outResults || (numInputs && !inputs))
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "loomSessionInterpret: session, outResults (and inputs "
                      "when numInputs > 0) must not be NULL");
  LoomInterpretOptions defaults;
  loomInterpretOptionsInit(&defaults);
  const LoomInterpretOptions &given = runOptions ? *runOptions : defaults;
  RunOptions options;
  std::optional<StorageKind> floatKind = toFloatKind(given.floatType);
  if (!floatKind)
    return badFloatType(given.floatType);
  options.floatKind = *floatKind;
  if (given.ranks < 0)
    return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                      "ranks: expected a positive count (or 0 for the "
                      "mesh's), found " +
                          llvm::Twine(given.ranks));
  if (given.ranks > 0)
    options.ranks = given.ranks;
  options.seed = given.seed;

  func::FuncOp entry;
  if (LoomStatus *status = findEntry(session, given.entry, entry))
    return status;
  std::string entryName = entry.getSymName().str();
  Interpreter interpreter(entry, KernelRegistry::getDefault(), options);
  if (std::optional<std::string> error = interpreter.prepare())
    return makeStatus(LOOM_STATUS_RUNTIME_ERROR, *error);

  // Argument names must be unique: they are how inputs find arguments.
  unsigned numArgs = entry.getNumArguments();
  std::map<std::string, unsigned> argIndex;
  for (unsigned i = 0; i < numArgs; ++i) {
    std::string name = getArgumentName(entry, i);
    if (!argIndex.emplace(name, i).second)
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                        "arguments #" + llvm::Twine(argIndex[name]) + " and #" +
                            llvm::Twine(i) + " of @" + entryName +
                            " have the same name `" + name + "`");
  }

  std::vector<std::optional<HostTensor>> args(numArgs);
  for (size_t k = 0; k < numInputs; ++k) {
    const LoomTensor &input = inputs[k];
    unsigned index;
    std::string what;
    if (input.name) {
      auto it = argIndex.find(input.name);
      if (it == argIndex.end()) {
        std::string known;
        for (const auto &[name, i] : argIndex)
          known += (known.empty() ? "" : ", ") + name;
        return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                          llvm::Twine("input `") + input.name +
                              "` matches no argument of @" + entryName +
                              " (arguments: " + known + ")");
      }
      index = it->second;
      what = std::string("input `") + input.name + "`";
    } else {
      if (input.argIndex < 0 || input.argIndex >= int64_t(numArgs))
        return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                          "input #" + llvm::Twine(k) + ": argument index " +
                              llvm::Twine(input.argIndex) + " is out of " +
                              "range (@" + entryName + " has " +
                              llvm::Twine(numArgs) + " arguments)");
      index = unsigned(input.argIndex);
      what = "input #" + std::to_string(k) + " (argument #" +
             std::to_string(index) + ")";
    }
    if (args[index])
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                        what + " is given twice (argument `" +
                            getArgumentName(entry, index) + "`)");
    std::optional<io::DType> dtype = toFileDType(input.dtype);
    if (!dtype)
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                        what + ": unknown dtype " + llvm::Twine(input.dtype));
    if (input.rank < 0 || (input.rank > 0 && !input.shape))
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                        what + ": rank " + llvm::Twine(input.rank) +
                            " needs a shape array");
    io::TensorData data;
    data.dtype = *dtype;
    data.shape.assign(input.shape, input.shape + input.rank);
    // A view of its file shape reads the file's row-major data as is.
    std::optional<Shape> fileShape = getArgumentFileShape(entry, index);
    if (fileShape && data.shape == *fileShape)
      data.shape = interpreter.getArgumentShape(index);
    if (data.shape != interpreter.getArgumentShape(index))
      return makeStatus(
          LOOM_STATUS_INVALID_ARGUMENT,
          what + " has shape " + HostTensor::formatShape(data.shape) +
              ", but argument #" + llvm::Twine(index) +
              " expects the global shape " +
              HostTensor::formatShape(
                  fileShape ? *fileShape : interpreter.getArgumentShape(index)));
    size_t bytes = size_t(data.numElements()) * loomDTypeGetSize(input.dtype);
    if (bytes && !input.data)
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT,
                        what + ": data must not be NULL");
    const uint8_t *begin = static_cast<const uint8_t *>(input.data);
    data.bytes.assign(begin, begin + bytes);
    HostTensor tensor;
    if (std::optional<std::string> error =
            tensorFromFile(data, entry.getArgumentTypes()[index],
                           options.floatKind, what, tensor))
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT, *error);
    args[index] = tensor;
  }

  std::vector<HostTensor> arguments;
  for (unsigned i = 0; i < numArgs; ++i) {
    if (args[i]) {
      arguments.push_back(*args[i]);
      continue;
    }
    HostTensor init;
    if (std::optional<std::string> error =
            initializeArgument(entry, i, interpreter.getArgumentShape(i),
                               options.floatKind, options.seed, init))
      return makeStatus(LOOM_STATUS_INVALID_ARGUMENT, *error);
    arguments.push_back(init);
  }

  std::vector<HostTensor> results;
  if (std::optional<std::string> error = interpreter.run(arguments, results))
    return makeStatus(LOOM_STATUS_RUNTIME_ERROR, *error);

  auto list = std::make_unique<LoomTensorList>();
  for (unsigned i = 0; i < results.size(); ++i) {
    io::TensorData data = tensorToFile(results[i], entry.getResultTypes()[i]);
    if (std::optional<Shape> fileShape = getResultFileShape(entry, i))
      data.shape = *fileShape;
    std::optional<LoomDType> dtype = fromFileDType(data.dtype);
    if (!dtype)
      return makeStatus(LOOM_STATUS_INTERNAL,
                        "result #" + llvm::Twine(i) + " of @" + entryName +
                            " has a dtype the C API cannot represent");
    list->entries.push_back({getResultName(entry, i), *dtype,
                             std::move(data.shape), std::move(data.bytes),
                             true});
  }
  *outResults = list.release();
  return nullptr;
}

//===- LoomAttrs.cpp - loom dialect attributes ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Registers the attributes of the `loom` dialect, implements the call-like
// syntax of `#loom.init` and the attribute verifiers, and checks where the
// function-argument attributes `loom.param` and `loom.input` may appear: on
// `func.func` arguments, of the element types their meaning requires, and
// never both on one argument.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/BoolParameter.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Support/InputLimits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using ::mlir::loom::kInitialValueAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;

using namespace mlir;
using namespace mlir::loom;

#include "loom/Dialect/Loom/IR/LoomEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Loom/IR/LoomAttrs.cpp.inc"

void LoomDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "loom/Dialect/Loom/IR/LoomAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// GeluApproximationAttr
//===----------------------------------------------------------------------===//

ParseResult mlir::loom::parseGeluApproximation(OpAsmParser &parser,
                                               GeluApproximationAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (failed(parser.parseKeyword(&keyword)))
    return failure();
  std::optional<GeluApproximation> value = symbolizeGeluApproximation(keyword);
  if (!value)
    return parser.emitError(loc, "expected `none` or `tanh`, got `")
           << keyword << "`";
  attr = GeluApproximationAttr::get(parser.getContext(), *value);
  return success();
}

void mlir::loom::printGeluApproximation(OpAsmPrinter &printer, Operation *,
                                        GeluApproximationAttr attr) {
  printer << stringifyGeluApproximation(attr.getValue());
}

//===----------------------------------------------------------------------===//
// InitializerAttr
//===----------------------------------------------------------------------===//

unsigned InitializerAttr::getNumArgs(InitKind kind) {
  switch (kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
    return 0;
  case InitKind::Normal:
    return 1;
  case InitKind::Uniform:
  case InitKind::ScaledNormal:
    return 2;
  }
  llvm_unreachable("unknown initializer kind");
}

/// Parses `kind` or `kind(arg, ...)`; the verifier checks the arity so that
/// builders and the parser report it alike.
Attribute InitializerAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (failed(parser.parseKeyword(&keyword)))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(keyword);
  if (!kind) {
    parser.emitError(loc, "unknown initializer `")
        << keyword
        << "`, expected normal, zeros, ones, uniform or scaled_normal";
    return {};
  }
  SmallVector<double> args;
  if (succeeded(parser.parseOptionalLParen())) {
    // Integers are accepted too (`scaled_normal(0.02, 24)`): parseFloat
    // rejects them, so the sign and an integer are tried first.
    auto parseArg = [&]() -> ParseResult {
      bool negative = succeeded(parser.parseOptionalMinus());
      int64_t integer;
      double value;
      OptionalParseResult isInteger = parser.parseOptionalInteger(integer);
      if (isInteger.has_value()) {
        if (failed(*isInteger))
          return failure();
        value = static_cast<double>(integer);
      } else if (failed(parser.parseFloat(value))) {
        return failure();
      }
      args.push_back(negative ? -value : value);
      return success();
    };
    if (failed(parser.parseCommaSeparatedList(parseArg)) ||
        failed(parser.parseRParen()))
      return {};
  }
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    *kind, DenseF64ArrayAttr::get(parser.getContext(), args));
}

void InitializerAttr::print(AsmPrinter &printer) const {
  printer << stringifyInitKind(getKind());
  ArrayRef<double> args = getArgs().asArrayRef();
  if (args.empty())
    return;
  printer << "(";
  llvm::interleaveComma(
      args, printer, [&](double value) { printer.printFloat(APFloat(value)); });
  printer << ")";
}

LogicalResult
InitializerAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        InitKind kind, DenseF64ArrayAttr argsAttr) {
  if (!argsAttr)
    return emitError() << "expects initializer arguments";
  ArrayRef<double> args = argsAttr.asArrayRef();
  StringRef name = stringifyInitKind(kind);
  unsigned numArgs = getNumArgs(kind);
  if (args.size() != numArgs)
    return emitError() << "initializer `" << name << "` takes " << numArgs
                       << " argument(s), got " << args.size();
  // Written as !(x > 0) so that NaN is rejected too.
  switch (kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
    return success();
  case InitKind::Normal:
  case InitKind::ScaledNormal:
    if (!(args[0] > 0) || !std::isfinite(args[0]))
      return emitError() << "initializer `" << name
                         << "` expects a finite std > 0, got " << args[0];
    if (kind == InitKind::ScaledNormal &&
        (!(args[1] > 0) || !std::isfinite(args[1])))
      return emitError() << "initializer `scaled_normal` expects a finite "
                            "factor > 0, got "
                         << args[1];
    return success();
  case InitKind::Uniform:
    if (!(args[0] < args[1]) || !std::isfinite(args[0]) ||
        !std::isfinite(args[1]))
      return emitError() << "initializer `uniform` expects finite bounds "
                            "with low < high, got "
                         << args[0] << " and " << args[1];
    return success();
  }
  llvm_unreachable("unknown initializer kind");
}

//===----------------------------------------------------------------------===//
// ParamAttr
//===----------------------------------------------------------------------===//

LogicalResult ParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringRef name, InitializerAttr init,
                                bool decay) {
  // Checkpoints load and save parameters by this name.
  if (name.empty())
    return emitError() << "expects a non-empty parameter name";
  // Names are written to JSON (plans, checkpoint manifests, safetensors
  // headers), which must be UTF-8 (docs/Testing.md, "Bad input").
  if (std::optional<size_t> bad = ::loom::support::findInvalidUTF8(
          std::string_view(name.data(), name.size())))
    return emitError() << "expects a parameter name in UTF-8, found byte 0x"
                       << llvm::utohexstr(static_cast<unsigned char>(name[*bad]))
                       << " at byte " << *bad << " of the name";
  if (!init)
    return emitError() << "expects an initializer";
  return success();
}

//===----------------------------------------------------------------------===//
// Function-argument attributes
//===----------------------------------------------------------------------===//

/// Returns whether `role` holds integer ids (token ids, labels, positions).
static bool isIdRole(InputRole role) {
  return role == InputRole::InputIds || role == InputRole::Labels ||
         role == InputRole::Positions || role == InputRole::DecoderInputIds;
}

/// Checks `loom.file_shape` on a value of `type` (argument or result
/// `what`): a shape of as many elements as the tensor, so that the file's
/// row-major data is the tensor's. With a `dist.layout` (`laidOut`) the
/// value may be a partitioned program's local block, which the count of
/// the global file shape does not describe: only the sizes are checked.
static LogicalResult verifyFileShape(Operation *op, Attribute value,
                                     Type type, const llvm::Twine &what,
                                     bool laidOut) {
  auto shape = dyn_cast<DenseI64ArrayAttr>(value);
  if (!shape)
    return op->emitError("`")
           << kFileShapeAttrName << "` expects an array<i64: ...>, got "
           << value;
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || !tensorType.hasStaticShape())
    return op->emitError("`") << kFileShapeAttrName << "` expects " << what
                              << " to be a statically shaped tensor, got "
                              << type;
  std::optional<int64_t> count = 1;
  for (int64_t size : shape.asArrayRef())
    count = size < 0 || !count ? std::nullopt : llvm::checkedMul(*count, size);
  if (!count || (!laidOut && *count != tensorType.getNumElements()))
    return op->emitError("`")
           << kFileShapeAttrName << "` of " << what << " holds "
           << (count ? std::to_string(*count) : std::string("an invalid count of"))
           << " elements, the tensor " << tensorType.getNumElements() << " ("
           << type << ")";
  return success();
}

LogicalResult LoomDialect::verifyRegionResultAttribute(
    Operation *op, unsigned regionIndex, unsigned resultIndex,
    NamedAttribute attribute) {
  StringRef attrName = attribute.getName().strref();
  auto func = dyn_cast<func::FuncOp>(op);
  if (attrName == kFileShapeAttrName) {
    if (!func)
      return op->emitError("`")
             << attrName << "` is only valid on func.func results";
    return verifyFileShape(op, attribute.getValue(),
                           func.getResultTypes()[resultIndex],
                           "result #" + llvm::Twine(resultIndex),
                           func.getResultAttr(resultIndex, kLayoutAttrName) !=
                               nullptr);
  }
  if (attrName == kNameAttrName) {
    auto name = dyn_cast<StringAttr>(attribute.getValue());
    if (!name || name.getValue().empty())
      return op->emitError("`loom.name` expects a non-empty string, got ")
             << attribute.getValue();
    return success();
  }
  return op->emitError("unknown loom result attribute `")
         << attrName << "`, expected `" << kNameAttrName << "` or `"
         << kFileShapeAttrName << "`";
}

LogicalResult LoomDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  StringRef attrName = attribute.getName().strref();
  if (attrName != kParamAttrName && attrName != kInputAttrName &&
      attrName != kNameAttrName && attrName != kFileShapeAttrName &&
      attrName != kInitialValueAttrName)
    return op->emitError("unknown loom argument attribute `")
           << attrName << "`, expected `" << kParamAttrName << "`, `"
           << kInputAttrName << "`, `" << kNameAttrName << "`, `"
           << kFileShapeAttrName << "` or `" << kInitialValueAttrName << "`";

  // The value a named state starts at (the loss scale): a finite f64 on a
  // named float argument, which the runtimes fill it with.
  if (attrName == kInitialValueAttrName) {
    auto value = dyn_cast<FloatAttr>(attribute.getValue());
    auto func = dyn_cast<func::FuncOp>(op);
    if (!value || !value.getType().isF64() ||
        !std::isfinite(value.getValueAsDouble()))
      return op->emitError("`") << attrName << "` expects a finite f64, got "
                                << attribute.getValue();
    if (!func || regionIndex != 0 ||
        !func.getArgAttr(argIndex, kNameAttrName) ||
        !isa<FloatType>(
            getElementTypeOrSelf(func.getArgumentTypes()[argIndex])))
      return op->emitError("`")
             << attrName << "` expects a float func.func argument with a `"
             << kNameAttrName << "` (a named state)";
    return success();
  }

  if (attrName == kFileShapeAttrName) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func || regionIndex != 0)
      return op->emitError("`")
             << attrName << "` is only valid on func.func arguments";
    return verifyFileShape(op, attribute.getValue(),
                           func.getArgumentTypes()[argIndex],
                           "argument #" + llvm::Twine(argIndex),
                           func.getArgAttr(argIndex, kLayoutAttrName) !=
                               nullptr);
  }

  // `loom.name` names an argument that is neither a parameter nor a data
  // input (an optimizer state such as `h.0.attn.weight.exp_avg`), so that
  // tools find it by name in tensor files.
  if (attrName == kNameAttrName) {
    auto name = dyn_cast<StringAttr>(attribute.getValue());
    if (!name || name.getValue().empty())
      return op->emitError("`loom.name` expects a non-empty string, got ")
             << attribute.getValue();
    return success();
  }

  // Parameters and inputs are what a training step is called with, so they
  // are arguments of a function, not of arbitrary regions.
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func || regionIndex != 0)
    return op->emitError("`")
           << attrName << "` is only valid on func.func arguments";
  Type argType = func.getArgumentTypes()[argIndex];
  auto tensorType = dyn_cast<RankedTensorType>(argType);
  if (!tensorType || !tensorType.hasStaticShape())
    return op->emitError("`")
           << attrName << "` expects argument #" << argIndex
           << " to be a statically shaped tensor, got " << argType;
  Type elementType = tensorType.getElementType();

  // An argument is either trained or fed, never both (reported once, from
  // the `loom.input` side).
  if (attrName == kInputAttrName && func.getArgAttr(argIndex, kParamAttrName))
    return op->emitError("argument #")
           << argIndex << " cannot be both `" << kParamAttrName << "` and `"
           << kInputAttrName << "`";

  if (attrName == kParamAttrName) {
    if (!isa<ParamAttr>(attribute.getValue()))
      return op->emitError("`loom.param` expects a #loom.param attribute, got ")
             << attribute.getValue();
    // Gradients and optimizer updates need a floating-point parameter.
    if (!isa<FloatType>(elementType))
      return op->emitError("`loom.param` expects argument #")
             << argIndex << " to be a floating-point tensor, got " << argType;
    return success();
  }

  auto input = dyn_cast<InputRoleAttr>(attribute.getValue());
  if (!input)
    return op->emitError("`loom.input` expects a #loom.input attribute, got ")
           << attribute.getValue();
  // Ids index embeddings and losses; a float id is a front-end bug.
  if (isIdRole(input.getValue()) && !isa<IntegerType>(elementType))
    return op->emitError("`loom.input` role `")
           << stringifyInputRole(input.getValue()) << "` expects argument #"
           << argIndex << " to be an integer tensor, got " << argType;
  return success();
}

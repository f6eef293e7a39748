//===- DistAttrs.cpp - dist dialect attributes ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The `#dist.layout` attribute: its syntax, the checks that need no mesh, and
// the conversion to and from the layout library's `Layout`; the checks of
// `#dist.strategy` and `#dist.plan`. Checks that need
// the mesh's axes are made by the ops that carry a layout (Ops/Layouts.cpp).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/BoolParameter.h"
#include "Ops/MeshChecks.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h" // used by the generated attribute printer

#include <cmath>

using namespace mlir;
using namespace mlir::loom::dist;

#include "loom/Dialect/Dist/IR/DistEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Dist/IR/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "loom/Dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
}

std::vector<std::string> mlir::loom::dist::getAxisNames(ArrayAttr names) {
  std::vector<std::string> result;
  for (Attribute name : names)
    result.push_back(cast<StringAttr>(name).str());
  return result;
}

static ArrayAttr toArrayAttr(MLIRContext *context,
                             const std::vector<std::string> &names) {
  SmallVector<Attribute> attrs;
  for (const std::string &name : names)
    attrs.push_back(StringAttr::get(context, name));
  return ArrayAttr::get(context, attrs);
}

//===----------------------------------------------------------------------===//
// Syntax: #dist.layout<@m, [["dp"], [], ["tp"]], partial = ["x"]>
//===----------------------------------------------------------------------===//

/// Parses `["a", "b"]` into `names`.
static ParseResult parseAxisList(AsmParser &parser,
                                 SmallVectorImpl<Attribute> &names) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        std::string name;
        if (parser.parseString(&name))
          return failure();
        names.push_back(parser.getBuilder().getStringAttr(name));
        return success();
      });
}

/// Parses `[["a"], [], ["b", "c"]]` into one array attribute per list.
static ParseResult parseAxisLists(AsmParser &parser,
                                  SmallVectorImpl<Attribute> &lists) {
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        SmallVector<Attribute> axes;
        if (parseAxisList(parser, axes))
          return failure();
        lists.push_back(ArrayAttr::get(parser.getContext(), axes));
        return success();
      });
}

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  FlatSymbolRefAttr mesh;
  if (parser.parseLess() || parser.parseAttribute(mesh) || parser.parseComma())
    return {};
  SmallVector<Attribute> dims;
  if (parseAxisLists(parser, dims))
    return {};
  SmallVector<Attribute> partial;
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("partial") || parser.parseEqual() ||
       parseAxisList(parser, partial)))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<LayoutAttr>(context, mesh,
                                       ArrayAttr::get(context, dims),
                                       ArrayAttr::get(context, partial));
}

static void printAxisList(AsmPrinter &printer, ArrayAttr names) {
  printer << '[';
  llvm::interleaveComma(names, printer, [&](Attribute name) {
    printer.printString(cast<StringAttr>(name).getValue());
  });
  printer << ']';
}

static void printAxisLists(AsmPrinter &printer, ArrayAttr lists) {
  printer << '[';
  llvm::interleaveComma(lists, printer, [&](Attribute axes) {
    printAxisList(printer, cast<ArrayAttr>(axes));
  });
  printer << ']';
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << '<' << getMesh() << ", ";
  printAxisLists(printer, getDims());
  // One spelling per layout: an empty partial list is never printed.
  if (!getPartial().empty()) {
    printer << ", partial = ";
    printAxisList(printer, getPartial());
  }
  printer << '>';
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// Checks that `list` is an array of non-empty axis names (C1), none already
/// in `seen` (C2), and records them there. `what` names the attribute.
static LogicalResult checkAxisNames(function_ref<InFlightDiagnostic()> emitError,
                                    Attribute list, const Twine &where,
                                    llvm::StringSet<> &seen, StringRef what) {
  auto names = dyn_cast<ArrayAttr>(list);
  if (!names)
    return emitError() << "expects " << where << " to be an array of axis "
                       << "names, got " << list;
  for (Attribute name : names) {
    // C1.
    auto str = dyn_cast<StringAttr>(name);
    if (!str || str.getValue().empty())
      return emitError() << "expects non-empty axis names in " << where
                         << ", got " << name;
    // C2: an axis splits one dim once, or is partial, never both.
    if (!seen.insert(str.getValue()).second)
      return emitError() << "mesh axis `" << str.getValue()
                         << "` is used twice in the " << what;
  }
  return success();
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 FlatSymbolRefAttr mesh, ArrayAttr dims,
                                 ArrayAttr partial) {
  if (!mesh)
    return emitError() << "expects a mesh symbol";
  llvm::StringSet<> seen;
  for (auto [dim, axes] : llvm::enumerate(dims))
    if (failed(checkAxisNames(emitError, axes, "dim " + Twine(dim), seen,
                              "layout")))
      return failure();
  return checkAxisNames(emitError, partial, "partial", seen, "layout");
}

LogicalResult
StrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     FlatSymbolRefAttr mesh, ArrayAttr factors,
                     ArrayAttr partial) {
  if (!mesh)
    return emitError() << "expects a mesh symbol";
  llvm::StringSet<> seen;
  for (auto [factor, axes] : llvm::enumerate(factors))
    if (failed(checkAxisNames(emitError, axes, "factor " + Twine(factor), seen,
                              "strategy")))
      return failure();
  // C2 again: an axis that splits a factor cannot also be a pending sum.
  return checkAxisNames(emitError, partial, "partial", seen, "strategy");
}

//===----------------------------------------------------------------------===//
// Accessors and conversion to the layout library
//===----------------------------------------------------------------------===//

SmallVector<StringRef> LayoutAttr::getDimAxes(size_t dim) const {
  return llvm::to_vector(
      cast<ArrayAttr>(getDims()[dim]).getAsValueRange<StringAttr>());
}

SmallVector<StringRef> LayoutAttr::getPartialAxes() const {
  return llvm::to_vector(getPartial().getAsValueRange<StringAttr>());
}

ValueOrError<Layout> LayoutAttr::toLayout(const Mesh &mesh) const {
  std::vector<Layout::AxisList> dims;
  for (Attribute axes : getDims())
    dims.push_back(getAxisNames(cast<ArrayAttr>(axes)));
  return Layout::get(mesh, std::move(dims), getAxisNames(getPartial()));
}

LayoutAttr LayoutAttr::get(FlatSymbolRefAttr mesh, const Layout &layout) {
  MLIRContext *context = mesh.getContext();
  SmallVector<Attribute> dims;
  for (const Layout::AxisList &axes : layout.getDims())
    dims.push_back(toArrayAttr(context, axes));
  return get(context, mesh, ArrayAttr::get(context, dims),
             toArrayAttr(context, layout.getPartialAxes()));
}

//===----------------------------------------------------------------------===//
// Strategy: #dist.strategy<@m, [["dp"], [], ["tp"]], partial = ["x"]>
//===----------------------------------------------------------------------===//

Attribute StrategyAttr::parse(AsmParser &parser, Type) {
  MLIRContext *context = parser.getContext();
  FlatSymbolRefAttr mesh;
  SmallVector<Attribute> factors;
  if (parser.parseLess() || parser.parseAttribute(mesh) ||
      parser.parseComma() || parseAxisLists(parser, factors))
    return {};
  SmallVector<Attribute> partial;
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("partial") || parser.parseEqual() ||
       parseAxisList(parser, partial)))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<StrategyAttr>(context, mesh,
                                         ArrayAttr::get(context, factors),
                                         ArrayAttr::get(context, partial));
}

void StrategyAttr::print(AsmPrinter &printer) const {
  printer << '<' << getMesh() << ", ";
  printAxisLists(printer, getFactors());
  // As for layouts, an empty partial list is never printed.
  if (!getPartial().empty()) {
    printer << ", partial = ";
    printAxisList(printer, getPartial());
  }
  printer << '>';
}

std::vector<std::string> StrategyAttr::getFactorAxes(size_t factor) const {
  return getAxisNames(cast<ArrayAttr>(getFactors()[factor]));
}

std::vector<std::vector<std::string>> StrategyAttr::getAllFactorAxes() const {
  std::vector<std::vector<std::string>> result;
  for (size_t factor = 0, e = getNumFactors(); factor < e; ++factor)
    result.push_back(getFactorAxes(factor));
  return result;
}

std::vector<std::string> StrategyAttr::getPartialAxes() const {
  return getAxisNames(getPartial());
}

StrategyAttr
StrategyAttr::get(FlatSymbolRefAttr mesh,
                  const std::vector<std::vector<std::string>> &factorAxes,
                  const std::vector<std::string> &partial) {
  MLIRContext *context = mesh.getContext();
  SmallVector<Attribute> factors;
  for (const std::vector<std::string> &axes : factorAxes)
    factors.push_back(toArrayAttr(context, axes));
  return get(context, mesh, ArrayAttr::get(context, factors),
             toArrayAttr(context, partial));
}

//===----------------------------------------------------------------------===//
// PlanAttr
//===----------------------------------------------------------------------===//

FailureOr<llvm::APFloat> mlir::loom::dist::parseExactF64(AsmParser &parser) {
  llvm::APFloat value(0.0);
  if (failed(parser.parseFloat(llvm::APFloat::IEEEdouble(), value)))
    return failure();
  return value;
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t zero, bool recompute,
                               llvm::APFloat stepTime, llvm::APFloat compute,
                               llvm::APFloat comm, llvm::APFloat bubble,
                               int64_t memoryBytesPerDevice,
                               llvm::APFloat modelFlops) {
  // C1.
  if (zero < 0)
    return emitError() << "expects `zero` >= 0, got " << zero;
  if (memoryBytesPerDevice < 0)
    return emitError() << "expects `memory_bytes_per_device` >= 0, got "
                       << memoryBytesPerDevice;
  // C2.
  for (auto [name, value] :
       {std::pair<StringRef, const llvm::APFloat &>{"step_time_s", stepTime},
        {"compute_s", compute},
        {"comm_s", comm},
        {"bubble_s", bubble},
        {"model_flops_per_step", modelFlops}})
    if (!value.isFinite() || value.isNegative())
      return emitError() << "expects `" << name
                         << "` finite and >= 0, got " << value.convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// PipelineAttr, PipelinePredictionAttr
//===----------------------------------------------------------------------===//

/// Parses `[elem, elem, ...]` (possibly empty) with `parseElement`.
static ParseResult parseBracketedList(AsmParser &parser,
                                      function_ref<ParseResult()> element) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                        element);
}

FailureOr<DenseF64ArrayAttr>
mlir::loom::dist::parseExactF64List(AsmParser &parser) {
  SmallVector<double> values;
  if (failed(parseBracketedList(parser, [&] {
        FailureOr<llvm::APFloat> value = parseExactF64(parser);
        if (failed(value))
          return failure();
        values.push_back(value->convertToDouble());
        return success();
      })))
    return failure();
  return DenseF64ArrayAttr::get(parser.getContext(), values);
}

void mlir::loom::dist::printExactF64List(AsmPrinter &printer,
                                         DenseF64ArrayAttr values) {
  printer << '[';
  llvm::interleaveComma(values.asArrayRef(), printer, [&](double value) {
    printer.printFloat(llvm::APFloat(value));
  });
  printer << ']';
}

FailureOr<SmallVector<LayerRange>>
mlir::loom::dist::parseStageLayers(AsmParser &parser) {
  SmallVector<LayerRange> ranges;
  if (failed(parseBracketedList(parser, [&] {
        LayerRange &range = ranges.emplace_back();
        return failure(parser.parseLSquare() ||
                       parser.parseInteger(range.first) ||
                       parser.parseComma() ||
                       parser.parseInteger(range.end) ||
                       parser.parseRSquare());
      })))
    return failure();
  return ranges;
}

void mlir::loom::dist::printStageLayers(AsmPrinter &printer,
                                        ArrayRef<LayerRange> ranges) {
  printer << '[';
  llvm::interleaveComma(ranges, printer, [&](const LayerRange &range) {
    printer << '[' << range.first << ", " << range.end << ']';
  });
  printer << ']';
}

FailureOr<::loom::pipeline::ScheduleKind>
mlir::loom::dist::parseSchedule(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string text;
  if (failed(parser.parseString(&text)))
    return failure();
  std::optional<::loom::pipeline::ScheduleKind> kind =
      ::loom::pipeline::parseScheduleKind(text);
  if (!kind)
    return parser.emitError(loc) << "expected schedule \"1f1b\", "
                                    "\"gpipe\" or \"interleaved-1f1b\", "
                                    "found \""
                                 << text << "\"";
  return *kind;
}

void mlir::loom::dist::printSchedule(AsmPrinter &printer,
                                     ::loom::pipeline::ScheduleKind kind) {
  printer << '"' << ::loom::pipeline::getScheduleKindName(kind) << '"';
}

LogicalResult PipelinePredictionAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, llvm::APFloat stepTime,
    llvm::APFloat bubble, llvm::APFloat p2p, DenseF64ArrayAttr forwardAttr,
    DenseF64ArrayAttr backwardAttr, DenseI64ArrayAttr memoryAttr) {
  ArrayRef<double> forward = forwardAttr.asArrayRef();
  ArrayRef<double> backward = backwardAttr.asArrayRef();
  ArrayRef<int64_t> memory = memoryAttr.asArrayRef();
  // C1.
  for (auto [name, value] :
       {std::pair<StringRef, const llvm::APFloat &>{"step_time_s", stepTime},
        {"bubble_s", bubble},
        {"p2p_s", p2p}})
    if (!value.isFinite() || value.isNegative())
      return emitError() << "expects `" << name << "` finite and >= 0, got "
                         << value.convertToDouble();
  for (auto [name, list] : {std::pair<StringRef, ArrayRef<double>>{
                                "stage_forward_s", forward},
                            {"stage_backward_s", backward}})
    for (double value : list)
      if (!std::isfinite(value) || value < 0)
        return emitError() << "expects every `" << name
                           << "` finite and >= 0, got " << value;
  for (int64_t bytes : memory)
    if (bytes < 0)
      return emitError() << "expects every `stage_memory_bytes` >= 0, got "
                         << bytes;
  // C2.
  if (forward.size() != backward.size() || memory.empty() != forward.empty() ||
      (!memory.empty() && forward.size() % memory.size() != 0))
    return emitError() << "expects one `stage_forward_s` and "
                          "`stage_backward_s` entry per chunk and one "
                          "`stage_memory_bytes` entry per stage, got "
                       << forward.size() << ", " << backward.size() << " and "
                       << memory.size();
  return success();
}

LogicalResult PipelineAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef axis, int64_t stages,
                                   int64_t microBatches,
                                   ::loom::pipeline::ScheduleKind schedule,
                                   int64_t virtualStages,
                                   ArrayRef<LayerRange> stageLayers,
                                   PipelinePredictionAttr predicted) {
  // C1.
  if (axis.empty())
    return emitError() << "expects a non-empty `axis`";
  if (stages < 1)
    return emitError() << "expects `stages` >= 1, got " << stages;
  if (microBatches < 1)
    return emitError() << "expects `micro_batches` >= 1, got " << microBatches;
  if (virtualStages < 1)
    return emitError() << "expects `virtual_stages` >= 1, got "
                       << virtualStages;
  if (stages > 1 || virtualStages > 1)
    if (std::optional<std::string> error = ::loom::pipeline::checkSchedule(
            schedule, stages, microBatches, virtualStages))
      return emitError() << *error;
  int64_t chunks = stages * virtualStages;
  // C2.
  if (!stageLayers.empty()) {
    if (static_cast<int64_t>(stageLayers.size()) != chunks)
      return emitError() << "expects one `stage_layers` range per "
                         << (virtualStages > 1 ? "chunk (" : "stage (")
                         << chunks << "), got " << stageLayers.size();
    for (auto [s, range] : llvm::enumerate(stageLayers)) {
      if (range.first < 0 || range.first >= range.end)
        return emitError() << "expects stage " << s
                           << "'s layers [first, end) with 0 <= first < end, "
                              "got ["
                           << range.first << ", " << range.end << ")";
      if (s > 0 && stageLayers[s - 1].end > range.first)
        return emitError() << "expects stage " << s
                           << "'s layers to start at or after "
                           << stageLayers[s - 1].end << ", where stage "
                           << s - 1 << "'s end, got " << range.first;
    }
  }
  // C3.
  if (predicted &&
      (static_cast<int64_t>(predicted.getStageForwardS().size()) != chunks ||
       static_cast<int64_t>(predicted.getStageMemoryBytes().size()) != stages))
    return emitError() << "expects `predicted` for " << stages << " stages of "
                       << virtualStages << " chunk(s), got "
                       << predicted.getStageForwardS().size() << " time(s) and "
                       << predicted.getStageMemoryBytes().size()
                       << " memory size(s)";
  return success();
}

//===- HostEmitter.cpp - Per-rank C++ from a partitioned step -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Find the entry and its mesh; read every argument's and result's layout
//    and derive global shapes, each rank's block offsets, partial holders and
//    canonical replicas (the interpreter's `prepare` and `run`, done once at
//    compile time).
// 2. For each rank, walk the entry's single block in order and print one
//    C++ statement group per op (OpEmitter): a comment with the op, the
//    result buffers, then the host kernel or Communicator call the
//    interpreter makes for that op. Scalars (`dist.axis_index`, index
//    constants and arithmetic) are folded to this rank's constants.
// 3. Print the ProgramSpec the harness needs, the step function tables,
//    main.cpp and CMakeLists.txt.
//
// Any op without a pattern stops the emission with an error at the op; the
// translation then writes nothing.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Host/HostEmitter.h"
#include "loom/Analysis/Layout/Layout.h"
#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/EntrySignature.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <optional>
#include <set>

namespace mlir::loom {

using dist::Layout;
using dist::Mesh;
using Shape = std::vector<int64_t>;

namespace {

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// `{2, 8, 16}`.
std::string shapeLiteral(ArrayRef<int64_t> shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}

/// A double that reads back as the same bits (17 significant digits), with
/// a `.` or exponent so that it reads as a double.
std::string doubleLiteral(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  std::string s = buffer;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

std::string boolLiteral(bool value) { return value ? "true" : "false"; }

/// `"a"` with C escapes (names are plain, but a name is user input).
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

/// `{"dp", "tp"}`.
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
// The entry's layouts
//===----------------------------------------------------------------------===//

/// What step 1 learns about one argument or result.
struct TensorInfo {
  std::string name;
  Type type;
  bool isInteger = false;
  Shape localShape, globalShape;
  Layout layout = Layout::getReplicated(0);
};

/// The entry function and its mesh (absent: one device).
struct EntryInfo {
  func::FuncOp func;
  std::optional<Mesh> mesh;
  std::string meshName;
  std::vector<TensorInfo> args, results;
  int64_t numRanks = 1;
};

/// Whether `type` is held as int64_t (integers but i1, index).
bool isIntegerStorage(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  return isa<IndexType>(type) || (isa<IntegerType>(type) && !type.isInteger(1));
}

/// Checks that `type` is a tensor the host runtime holds: static shape,
/// float (held in the run's type) or integer (held as int64_t), not i1.
LogicalResult checkTensorType(Operation *op, Type type, const Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return op->emitError() << what << " has type " << type
                           << "; the host emitter needs statically shaped "
                              "tensors";
  Type element = tensor.getElementType();
  if (!isa<FloatType>(element) && !isIntegerStorage(element))
    return op->emitError() << what << " has element type " << element
                           << "; host programs hold floats and integers "
                              "(not i1)";
  return success();
}

LogicalResult readTensorInfo(func::FuncOp func, Attribute layoutAttr, Type type,
                             const EntryInfo &entry, const Twine &what,
                             TensorInfo &info) {
  if (failed(checkTensorType(func, type, what)))
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

LogicalResult readEntry(ModuleOp module, const HostEmitOptions &options,
                        EntryInfo &entry) {
  std::string name = options.entry;
  if (name.empty())
    name = module.lookupSymbol<func::FuncOp>("train_step") ? "train_step"
                                                           : "forward";
  entry.func = module.lookupSymbol<func::FuncOp>(name);
  if (!entry.func)
    return module.emitError() << "no function @" << name
                              << " to emit (name it with --emit-host-entry)";
  func::FuncOp func = entry.func;
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError() << "the host emitter needs a function with one "
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
    return func.emitError()
           << "uses several meshes (@" << *meshNames.begin() << ", @"
           << *std::next(meshNames.begin()) << "); a host program runs on one";
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

  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    TensorInfo info;
    info.name = interp::getArgumentName(func, i);
    if (failed(readTensorInfo(func, func.getArgAttr(i, interp::kLayoutAttrName),
                              func.getArgumentTypes()[i], entry,
                              "argument #" + Twine(i), info)))
      return failure();
    entry.args.push_back(std::move(info));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    TensorInfo info;
    info.name = interp::getResultName(func, i);
    if (failed(readTensorInfo(
            func, func.getResultAttr(i, interp::kLayoutAttrName),
            func.getResultTypes()[i], entry, "result #" + Twine(i), info)))
      return failure();
    entry.results.push_back(std::move(info));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// One rank's step function
//===----------------------------------------------------------------------===//

/// Prints the statements of one rank.
class RankEmitter {
public:
  RankEmitter(const EntryInfo &entry, int64_t rank, AsmState &asmState,
              raw_ostream &os)
      : entry(entry), rank(rank), asmState(asmState), os(os) {}

  LogicalResult emit();

private:
  /// The C++ name of a value: its SSA name (`%12` -> `v12`, `%dx_0` ->
  /// `v_dx_0`, `%6#1` -> `v6_1`, `%arg3` -> `arg3`).
  std::string name(Value value);
  /// `T` or `int64_t`: how the elements of `value` are held.
  std::string elementType(Value value) {
    return isIntegerStorage(value.getType()) ? "int64_t" : "T";
  }
  Shape shapeOf(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    return Shape(type.getShape().begin(), type.getShape().end());
  }
  std::string shape(Value value) { return shapeLiteral(shapeOf(value)); }
  std::string data(Value value) { return name(value) + ".data()"; }
  std::string optionalData(Value value) {
    return value ? data(value) : "nullptr";
  }
  int64_t numElements(Value value) {
    int64_t n = 1;
    for (int64_t d : shapeOf(value))
      n *= d;
    return n;
  }
  /// Declares the zero-filled buffer of a result.
  void allocate(Value result) {
    os << "  std::vector<" << elementType(result) << "> " << name(result) << "("
       << numElements(result) << ");\n";
  }
  /// A call whose host::Status or Communicator Status is checked.
  void checked(Operation *op, const std::string &call) {
    os << "  LOOM_CHECK(" << call << ", " << stringLiteral(describe(op))
       << ");\n";
  }
  /// A call returning std::optional<std::string> (the older kernels).
  void checkedMessage(Operation *op, const std::string &call) {
    os << "  LOOM_CHECK_MESSAGE(" << call << ", " << stringLiteral(describe(op))
       << ");\n";
  }
  void call(const std::string &text) { os << "  " << text << ";\n"; }
  /// Names `value` as another name for the same elements (reshape and
  /// other ops that only look at their operand).
  void alias(Value result, Value operand) {
    os << "  const std::vector<" << elementType(result) << "> &" << name(result)
       << " = " << name(operand) << ";\n";
  }
  std::string describe(Operation *op) {
    return "rank " + std::to_string(rank) + ": " + interp::describeOp(op);
  }
  /// The value of a scalar folded for this rank.
  FailureOr<int64_t> scalar(Operation *user, Value value) {
    auto it = scalars.find(value);
    if (it == scalars.end())
      return user->emitError()
             << "the host emitter folds index scalars from "
                "`dist.axis_index`, `arith.constant`, `arith.addi` and "
                "`arith.muli` only";
    return it->second;
  }
  std::string axes(Operation *op) {
    return axesLiteral(axisNames(op->getAttrOfType<ArrayAttr>("axes")));
  }
  std::vector<std::string> axisList(Operation *op) {
    return axisNames(op->getAttrOfType<ArrayAttr>("axes"));
  }
  /// The peer of a send/recv: the rank at `coordinate` on `axis`, this
  /// rank's coordinates elsewhere.
  FailureOr<int64_t> peer(Operation *op, StringRef axis, int64_t coordinate);

  LogicalResult emitOp(Operation *op);
  LogicalResult emitLoomOp(Operation *op);
  LogicalResult emitDistOp(Operation *op);
  LogicalResult emitConstant(arith::ConstantOp op);

  const EntryInfo &entry;
  int64_t rank;
  AsmState &asmState;
  raw_ostream &os;
  llvm::DenseMap<Value, std::string> names;
  llvm::DenseMap<Value, int64_t> scalars;
};

std::string RankEmitter::name(Value value) {
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

FailureOr<int64_t> RankEmitter::peer(Operation *op, StringRef axis,
                                     int64_t coordinate) {
  std::optional<size_t> index = entry.mesh->findAxis(axis.str());
  if (!index)
    return op->emitError() << "axis `" << axis << "` is not an axis of mesh @"
                           << entry.meshName;
  std::vector<int64_t> coordinates = entry.mesh->getCoordinates(rank);
  coordinates[*index] = coordinate;
  return entry.mesh->getRank(coordinates);
}

LogicalResult RankEmitter::emitConstant(arith::ConstantOp op) {
  Type type = op.getType();
  Attribute value = op.getValue();
  if (type.isIntOrIndex()) {
    auto attr = dyn_cast<IntegerAttr>(value);
    if (!attr || type.isInteger(1))
      return op.emitError() << "no host emission for this scalar constant";
    scalars[op.getResult()] = attr.getValue().getSExtValue();
    os << "  const int64_t " << name(op.getResult()) << " = "
       << scalars[op.getResult()] << ";\n";
    return success();
  }
  if (failed(checkTensorType(op, type, "the constant")))
    return failure();
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return op.emitError() << "no host emission for a constant that is not "
                             "dense elements";
  // The interpreter's conversion: each element to double (floats) or
  // int64_t, then to the storage type.
  std::vector<std::string> elements;
  if (isa<FloatType>(dense.getElementType()))
    for (const APFloat &f : dense.getValues<APFloat>())
      elements.push_back("static_cast<T>(" +
                         doubleLiteral(f.convertToDouble()) + ")");
  else
    for (const APInt &i : dense.getValues<APInt>())
      elements.push_back("int64_t(" + std::to_string(i.getSExtValue()) + ")");
  Value result = op.getResult();
  os << "  const std::vector<" << elementType(result) << "> " << name(result);
  if (dense.isSplat())
    os << "(" << numElements(result) << ", " << elements.front() << ");\n";
  else
    os << " = {" << llvm::join(elements, ", ") << "};\n";
  return success();
}

LogicalResult RankEmitter::emitDistOp(Operation *op) {
  auto group = [&](Operation *collective) {
    std::vector<int64_t> members =
        entry.mesh->getGroup(rank, axisList(collective));
    std::string s;
    for (int64_t m : members)
      s += (s.empty() ? "" : ", ") + std::to_string(m);
    os << "  // group over " << axes(collective) << ": ranks {" << s
       << "}, this rank is member "
       << entry.mesh->getGroupIndex(rank, axisList(collective)) << "\n";
  };
  auto unary = [&](Operation *collective, const std::string &method,
                   const std::string &attrs) {
    Value in = collective->getOperand(0), out = collective->getResult(0);
    group(collective);
    allocate(out);
    checked(collective, "comm." + method + "(" + data(in) + ", " + shape(in) +
                            ", " + axes(collective) + ", " + attrs + data(out) +
                            ")");
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](dist::AxisIndexOp index) -> LogicalResult {
        std::optional<size_t> axis =
            entry.mesh->findAxis(index.getAxis().str());
        if (!axis)
          return index.emitError() << "axis `" << index.getAxis()
                                   << "` is not an axis of the mesh";
        int64_t value = entry.mesh->getCoordinates(rank)[*axis];
        scalars[index.getResult()] = value;
        os << "  const int64_t " << name(index.getResult()) << " = " << value
           << ";\n";
        return success();
      })
      .Case([&](dist::AnnotateOp annotate) {
        alias(annotate.getResult(), annotate.getInput());
        return success();
      })
      .Case([&](dist::ReshardOp reshard) -> LogicalResult {
        if (entry.numRanks > 1)
          return reshard.emitError()
                 << "reshards must be lowered to collectives "
                    "(-dist-lower-reshards) before host emission";
        alias(reshard.getResult(), reshard.getInput());
        return success();
      })
      .Case([&](dist::AllGatherOp gather) {
        unary(gather, "allGather", std::to_string(gather.getDim()) + ", ");
        return success();
      })
      .Case([&](dist::AllSliceOp slice) {
        unary(slice, "allSlice", std::to_string(slice.getDim()) + ", ");
        return success();
      })
      .Case([&](dist::AllReduceOp reduce) {
        unary(reduce, "allReduce",
              std::string(reduce.getKind() == dist::ReductionKind::Sum
                              ? "mpi::ReduceKind::Sum"
                              : "mpi::ReduceKind::Max") +
                  ", ");
        return success();
      })
      .Case([&](dist::ReduceScatterOp scatter) {
        unary(scatter, "reduceScatter",
              std::to_string(scatter.getDim()) + ", ");
        return success();
      })
      .Case([&](dist::AllToAllOp a2a) {
        unary(a2a, "allToAll",
              std::to_string(a2a.getSplitDim()) + ", " +
                  std::to_string(a2a.getConcatDim()) + ", ");
        return success();
      })
      .Case([&](dist::CollectivePermuteOp permute) {
        unary(permute, "collectivePermute",
              "int64_t(" + std::to_string(permute.getShift()) + "), ");
        return success();
      })
      .Case([&](dist::BroadcastOp broadcast) {
        unary(broadcast, "broadcast",
              std::to_string(broadcast.getRoot()) + ", ");
        return success();
      })
      .Case([&](dist::SendOp send) -> LogicalResult {
        FailureOr<int64_t> to =
            peer(send, send.getAxis(), static_cast<int64_t>(send.getTo()));
        if (failed(to))
          return failure();
        if (*to == rank) {
          // Every rank runs one instruction stream: a send to oneself does
          // nothing, as in the interpreter.
          os << "  // a send to this rank itself: nothing to do\n";
          return success();
        }
        checked(send, "comm.send(" + data(send.getInput()) + ", " +
                          shape(send.getInput()) + ", " + std::to_string(*to) +
                          ", 0)");
        return success();
      })
      .Case([&](dist::RecvOp recv) -> LogicalResult {
        FailureOr<int64_t> from =
            peer(recv, recv.getAxis(), static_cast<int64_t>(recv.getFrom()));
        if (failed(from))
          return failure();
        if (failed(checkTensorType(recv, recv.getResult().getType(),
                                   "the result")))
          return failure();
        allocate(recv.getResult());
        if (*from == rank) {
          os << "  // a receive from this rank itself yields zeros\n";
          return success();
        }
        checked(recv, "comm.recv(" + data(recv.getResult()) + ", " +
                          shape(recv.getResult()) + ", " +
                          std::to_string(*from) + ", 0)");
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError()
               << "no host emission for '" << other->getName() << "'";
      });
}

/// The host enums of op attributes.
std::string geluApproximation(GeluApproximation approximate) {
  return approximate == GeluApproximation::Tanh
             ? "host::GeluApproximation::Tanh"
             : "host::GeluApproximation::None";
}

std::string optionalScale(std::optional<llvm::APFloat> scale) {
  if (!scale)
    return "std::nullopt";
  return "std::optional<double>(" + doubleLiteral(scale->convertToDouble()) +
         ")";
}

std::string castTarget(Type type) {
  if (type.isF64())
    return "F64";
  if (type.isF32())
    return "F32";
  if (type.isBF16())
    return "BF16";
  if (type.isF16())
    return "F16";
  if (type.isInteger(64) || type.isIndex())
    return "I64";
  if (type.isInteger(32))
    return "I32";
  return "";
}

LogicalResult RankEmitter::emitLoomOp(Operation *op) {
  // Every loom value is a tensor the runtime holds.
  for (Value v : op->getOperands())
    if (!scalars.count(v) &&
        failed(checkTensorType(op, v.getType(), "an operand")))
      return failure();
  for (Value v : op->getResults())
    if (failed(checkTensorType(op, v.getType(), "a result")))
      return failure();

  auto binary = [&](Operation *b, const char *kind) {
    Value lhs = b->getOperand(0), rhs = b->getOperand(1), out = b->getResult(0);
    allocate(out);
    checkedMessage(
        b, "host::binary<" + elementType(out) + ">(host::BinaryKind::" + kind +
               ", " + data(lhs) + ", " + shape(lhs) + ", " + data(rhs) + ", " +
               shape(rhs) + ", " + data(out) + ", " + shape(out) + ")");
    return success();
  };
  auto unaryFn = [&](Operation *u, const char *kind) {
    Value in = u->getOperand(0), out = u->getResult(0);
    allocate(out);
    call("host::unary<T>(host::UnaryKind::" + std::string(kind) + ", " +
         data(in) + ", " + std::to_string(numElements(in)) + ", " + data(out) +
         ")");
    return success();
  };
  auto reduce = [&](Operation *r, ArrayRef<int64_t> axesAttr,
                    const char *kind) {
    Value in = r->getOperand(0), out = r->getResult(0);
    allocate(out);
    call("host::reduce<" + elementType(in) + ">(host::ReduceKind::" + kind +
         ", " + data(in) + ", " + shape(in) + ", " + shapeLiteral(axesAttr) +
         ", " + data(out) + ")");
    return success();
  };
  // Forward (x -> y) and backward (y, dy -> dx) kernels on one shape.
  auto simple = [&](Value in, Value out, const std::string &fn,
                    const std::string &extra) {
    allocate(out);
    call(fn + "(" + data(in) + ", " + shape(in) + extra + ", " + data(out) +
         ")");
    return success();
  };
  auto grad = [&](Value dy, Value x, Value dx, const std::string &fn,
                  const std::string &extra) {
    allocate(dx);
    call(fn + "(" + data(dy) + ", " + data(x) + ", " + shape(x) + extra + ", " +
         data(dx) + ")");
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](AddOp o) { return binary(o, "Add"); })
      .Case([&](SubOp o) { return binary(o, "Sub"); })
      .Case([&](MulOp o) { return binary(o, "Mul"); })
      .Case([&](DivOp o) { return binary(o, "Div"); })
      .Case([&](NegOp o) { return unaryFn(o, "Neg"); })
      .Case([&](ExpOp o) { return unaryFn(o, "Exp"); })
      .Case([&](LogOp o) { return unaryFn(o, "Log"); })
      .Case([&](SqrtOp o) { return unaryFn(o, "Sqrt"); })
      .Case([&](RsqrtOp o) { return unaryFn(o, "Rsqrt"); })
      .Case([&](TanhOp o) { return unaryFn(o, "Tanh"); })
      .Case([&](SigmoidOp o) { return unaryFn(o, "Sigmoid"); })
      .Case([&](ScaleOp o) {
        allocate(o.getResult());
        call("host::scale<T>(" + data(o.getInput()) + ", " +
             std::to_string(numElements(o.getInput())) + ", " +
             doubleLiteral(o.getFactorAttr().getValueAsDouble()) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](CastOp o) -> LogicalResult {
        Type target =
            cast<ShapedType>(o.getResult().getType()).getElementType();
        std::string t = castTarget(target);
        if (t.empty())
          return o.emitError() << "no host emission for a cast to " << target;
        // As the interpreter: casts to f64, and to f32 in an f64 run, keep
        // the run's precision; bf16 and f16 casts round.
        std::string targetExpr = "host::CastTarget::" + t;
        if (t == "F64" || t == "F32")
          targetExpr = "(std::is_same_v<T, double> ? host::CastTarget::F64 : "
                       "host::CastTarget::F32)";
        allocate(o.getResult());
        call("host::cast<" + elementType(o.getInput()) + ", " +
             elementType(o.getResult()) + ">(" + data(o.getInput()) + ", " +
             std::to_string(numElements(o.getInput())) + ", " + targetExpr +
             ", " + data(o.getResult()) + ")");
        return success();
      })
      .Case([&](MatmulOp o) {
        allocate(o.getResult());
        call("host::matmul<T>(" + data(o.getLhs()) + ", " + shape(o.getLhs()) +
             ", " + data(o.getRhs()) + ", " + shape(o.getRhs()) + ", " +
             boolLiteral(o.getTransposeLhs()) + ", " +
             boolLiteral(o.getTransposeRhs()) + ", " + data(o.getResult()) +
             ")");
        return success();
      })
      .Case([&](ReduceSumOp o) { return reduce(o, o.getAxes(), "Sum"); })
      .Case([&](ReduceMeanOp o) { return reduce(o, o.getAxes(), "Mean"); })
      .Case([&](ReduceMaxOp o) { return reduce(o, o.getAxes(), "Max"); })
      .Case([&](ReshapeOp o) {
        // Row-major order is kept: the same elements under another shape.
        alias(o.getResult(), o.getInput());
        return success();
      })
      .Case([&](TransposeOp o) {
        Value in = o.getInput();
        allocate(o.getResult());
        call("host::transpose<" + elementType(in) + ">(" + data(in) + ", " +
             shape(in) + ", " + shapeLiteral(o.getPermutation()) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](SliceOp o) {
        Value in = o.getInput();
        allocate(o.getResult());
        call("host::slice<" + elementType(in) + ">(" + data(in) + ", " +
             shape(in) + ", " + shapeLiteral(o.getStarts()) + ", " +
             shapeLiteral(o.getLimits()) + ", " + shapeLiteral(o.getStrides()) +
             ", " + data(o.getResult()) + ")");
        return success();
      })
      .Case([&](PadOp o) {
        Value in = o.getInput();
        allocate(o.getResult());
        call("host::pad<" + elementType(in) + ">(" + data(in) + ", " +
             shape(in) + ", " + shapeLiteral(o.getLow()) + ", " +
             shapeLiteral(o.getHigh()) + ", " + shapeLiteral(o.getInterior()) +
             ", " + data(o.getResult()) + ")");
        return success();
      })
      .Case([&](ConcatOp o) {
        std::vector<std::string> datas, shapes;
        for (Value v : o.getInputs()) {
          datas.push_back(data(v));
          shapes.push_back(shape(v));
        }
        allocate(o.getResult());
        call("host::concat<" + elementType(o.getResult()) + ">({" +
             llvm::join(datas, ", ") + "}, {" + llvm::join(shapes, ", ") +
             "}, " + std::to_string(o.getAxis()) + ", " + data(o.getResult()) +
             ")");
        return success();
      })
      .Case([&](SplitOp o) {
        std::vector<std::string> outs;
        for (Value v : o.getOutputs()) {
          allocate(v);
          outs.push_back(data(v));
        }
        Value in = o.getInput();
        call("host::split<" + elementType(in) + ">(" + data(in) + ", " +
             shape(in) + ", " + std::to_string(o.getAxis()) + ", " +
             shapeLiteral(o.getSizes()) + ", {" + llvm::join(outs, ", ") +
             "})");
        return success();
      })
      .Case([&](ReluOp o) {
        return simple(o.getInput(), o.getResult(), "host::relu<T>", "");
      })
      .Case([&](SiluOp o) {
        return simple(o.getInput(), o.getResult(), "host::silu<T>", "");
      })
      .Case([&](GeluOp o) {
        return simple(o.getInput(), o.getResult(), "host::gelu<T>",
                      ", " + geluApproximation(o.getApproximate()));
      })
      .Case([&](ReluGradOp o) {
        return grad(o.getDy(), o.getX(), o.getDx(), "host::reluGrad<T>", "");
      })
      .Case([&](SiluGradOp o) {
        return grad(o.getDy(), o.getX(), o.getDx(), "host::siluGrad<T>", "");
      })
      .Case([&](GeluGradOp o) {
        return grad(o.getDy(), o.getX(), o.getDx(), "host::geluGrad<T>",
                    ", " + geluApproximation(o.getApproximate()));
      })
      .Case([&](SoftmaxOp o) {
        return simple(o.getInput(), o.getResult(), "host::softmax<T>",
                      ", " + std::to_string(o.getAxisAttr().getInt()));
      })
      .Case([&](LogSoftmaxOp o) {
        return simple(o.getInput(), o.getResult(), "host::logSoftmax<T>",
                      ", " + std::to_string(o.getAxisAttr().getInt()));
      })
      .Case([&](SoftmaxGradOp o) {
        allocate(o.getResult());
        call("host::softmaxGrad<T>(" + data(o.getOutput()) + ", " +
             data(o.getGrad()) + ", " + shape(o.getOutput()) + ", " +
             std::to_string(o.getAxisAttr().getInt()) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](LogSoftmaxGradOp o) {
        allocate(o.getResult());
        call("host::logSoftmaxGrad<T>(" + data(o.getOutput()) + ", " +
             data(o.getGrad()) + ", " + shape(o.getOutput()) + ", " +
             std::to_string(o.getAxisAttr().getInt()) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](AttentionOp o) {
        Value mask = o.getMask();
        allocate(o.getResult());
        call("host::attention<T>(" + data(o.getQuery()) + ", " +
             shape(o.getQuery()) + ", " + data(o.getKey()) + ", " +
             shape(o.getKey()) + ", " + data(o.getValue()) + ", " +
             shape(o.getValue()) + ", " + optionalData(mask) + ", " +
             (mask ? shape(mask) : "{}") + ", " + boolLiteral(o.getCausal()) +
             ", " + optionalScale(o.getScale()) + ", " + data(o.getResult()) +
             ")");
        return success();
      })
      .Case([&](AttentionGradOp o) {
        Value mask = o.getMask();
        allocate(o.getDquery());
        allocate(o.getDkey());
        allocate(o.getDvalue());
        call("host::attentionGrad<T>(" + data(o.getQuery()) + ", " +
             shape(o.getQuery()) + ", " + data(o.getKey()) + ", " +
             shape(o.getKey()) + ", " + data(o.getValue()) + ", " +
             shape(o.getValue()) + ", " + data(o.getOut()) + ", " +
             data(o.getDout()) + ", " + optionalData(mask) + ", " +
             (mask ? shape(mask) : "{}") + ", " + boolLiteral(o.getCausal()) +
             ", " + optionalScale(o.getScale()) + ", " + data(o.getDquery()) +
             ", " + data(o.getDkey()) + ", " + data(o.getDvalue()) + ")");
        return success();
      })
      .Case([&](RopeOp o) {
        Value positions = o.getPositions();
        allocate(o.getResult());
        call("host::rope<T>(" + data(o.getInput()) + ", " +
             shape(o.getInput()) + ", " + optionalData(positions) + ", " +
             (positions ? shape(positions) : "{}") + ", " +
             doubleLiteral(o.getThetaAttr().getValueAsDouble()) + ", " +
             boolLiteral(o.getInverse()) + ", " + data(o.getResult()) + ")");
        return success();
      })
      .Case([&](EmbeddingOp o) -> LogicalResult {
        allocate(o.getResult());
        std::string common = data(o.getTable()) + ", " + shape(o.getTable()) +
                             ", " + data(o.getIds()) + ", " + shape(o.getIds());
        if (Value offset = o.getOffset()) {
          FailureOr<int64_t> first = scalar(o, offset);
          if (failed(first))
            return failure();
          checked(o, "host::embeddingBlock<T>(" + common + ", " +
                         std::to_string(*first) + ", " + data(o.getResult()) +
                         ")");
          return success();
        }
        checked(o, "host::embedding<T>(" + common + ", " + data(o.getResult()) +
                       ")");
        return success();
      })
      .Case([&](EmbeddingGradOp o) -> LogicalResult {
        allocate(o.getResult());
        int64_t rows = shapeOf(o.getResult())[0];
        std::string common = data(o.getDy()) + ", " + shape(o.getDy()) + ", " +
                             data(o.getIds()) + ", " + shape(o.getIds());
        if (Value offset = o.getOffset()) {
          FailureOr<int64_t> first = scalar(o, offset);
          if (failed(first))
            return failure();
          checked(o, "host::embeddingGradBlock<T>(" + common + ", " +
                         std::to_string(*first) + ", " + std::to_string(rows) +
                         ", " + data(o.getResult()) + ")");
          return success();
        }
        checked(o, "host::embeddingGrad<T>(" + common + ", " +
                       std::to_string(rows) + ", " + data(o.getResult()) + ")");
        return success();
      })
      .Case([&](CrossEntropyOp o) -> LogicalResult {
        std::string offset = "nullptr";
        if (Value v = o.getOffset()) {
          if (failed(scalar(o, v)))
            return failure();
          offset = "&" + name(v);
        }
        allocate(o.getResult());
        checked(o, "host::crossEntropyLocal<T>(" + data(o.getLogits()) + ", " +
                       shape(o.getLogits()) + ", " + data(o.getLabels()) +
                       ", " + std::to_string(o.getIgnoreIndexAttr().getInt()) +
                       ", " + offset + ", " + boolLiteral(o.getSum()) + ", " +
                       data(o.getResult()) + ")");
        return success();
      })
      .Case([&](CrossEntropyGradOp o) -> LogicalResult {
        std::string offset = "nullptr";
        if (Value v = o.getOffset()) {
          if (failed(scalar(o, v)))
            return failure();
          offset = "&" + name(v);
        }
        allocate(o.getResult());
        checked(o, "host::crossEntropyGradLocal<T>(" + data(o.getLogits()) +
                       ", " + shape(o.getLogits()) + ", " +
                       data(o.getLabels()) + ", " + name(o.getDloss()) +
                       "[0], " +
                       std::to_string(o.getIgnoreIndexAttr().getInt()) + ", " +
                       offset + ", " + boolLiteral(o.getSum()) + ", " +
                       data(o.getResult()) + ")");
        return success();
      })
      .Case([&](LabelCountOp o) {
        allocate(o.getResult());
        call("host::labelCount<T>(" + data(o.getLabels()) + ", " +
             std::to_string(numElements(o.getLabels())) + ", " +
             std::to_string(o.getIgnoreIndexAttr().getInt()) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](LayerNormOp o) {
        allocate(o.getResult());
        call("host::layerNorm<T>(" + data(o.getInput()) + ", " +
             shape(o.getInput()) + ", " + optionalData(o.getGamma()) + ", " +
             optionalData(o.getBeta()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](RmsNormOp o) {
        allocate(o.getResult());
        call("host::rmsNorm<T>(" + data(o.getInput()) + ", " +
             shape(o.getInput()) + ", " + optionalData(o.getGamma()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](LayerNormGradOp o) {
        allocate(o.getDx());
        std::string dgamma = "nullptr", dbeta = "nullptr";
        if (o.getGamma()) {
          allocate(o.getParamGrads()[0]);
          allocate(o.getParamGrads()[1]);
          dgamma = data(o.getParamGrads()[0]);
          dbeta = data(o.getParamGrads()[1]);
        }
        call("host::layerNormGrad<T>(" + data(o.getGrad()) + ", " +
             data(o.getInput()) + ", " + shape(o.getInput()) + ", " +
             optionalData(o.getGamma()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             data(o.getDx()) + ", " + dgamma + ", " + dbeta + ")");
        return success();
      })
      .Case([&](RmsNormGradOp o) {
        allocate(o.getDx());
        if (o.getDgamma())
          allocate(o.getDgamma());
        call("host::rmsNormGrad<T>(" + data(o.getGrad()) + ", " +
             data(o.getInput()) + ", " + shape(o.getInput()) + ", " +
             optionalData(o.getGamma()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             data(o.getDx()) + ", " + optionalData(o.getDgamma()) + ")");
        return success();
      })
      .Case([&](SgdUpdateOp o) {
        allocate(o.getNewParam());
        if (o.getNewMomentumBuf())
          allocate(o.getNewMomentumBuf());
        call("host::sgdUpdate<T>(" + data(o.getParam()) + ", " +
             data(o.getGrad()) + ", " + optionalData(o.getMomentumBuf()) +
             ", " + shape(o.getParam()) + ", " +
             doubleLiteral(o.getLrAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getMomentumAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getWeightDecayAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getDampeningAttr().getValueAsDouble()) + ", " +
             boolLiteral(o.getNesterov()) + ", " + data(o.getNewParam()) +
             ", " + optionalData(o.getNewMomentumBuf()) + ")");
        return success();
      })
      .Case([&](AdamwUpdateOp o) {
        allocate(o.getNewParam());
        allocate(o.getNewExpAvg());
        allocate(o.getNewExpAvgSq());
        call("host::adamwUpdate<T>(" + data(o.getParam()) + ", " +
             data(o.getGrad()) + ", " + data(o.getExpAvg()) + ", " +
             data(o.getExpAvgSq()) + ", " + shape(o.getParam()) + ", " +
             name(o.getStep()) + "[0], " +
             doubleLiteral(o.getLrAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getBeta1Attr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getBeta2Attr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getWeightDecayAttr().getValueAsDouble()) + ", " +
             data(o.getNewParam()) + ", " + data(o.getNewExpAvg()) + ", " +
             data(o.getNewExpAvgSq()) + ")");
        return success();
      })
      .Case([&](DropoutOp o) -> LogicalResult {
        // The mask is drawn by global index, so the block's place in the
        // global tensor is a constant of this rank.
        Shape block = shapeOf(o.getInput());
        Shape global = block, offset(block.size(), 0);
        if (entry.numRanks > 1) {
          auto attr =
              o->getAttrOfType<dist::LayoutAttr>(interp::kLayoutAttrName);
          if (!attr)
            return o.emitError() << "dropout in an SPMD program needs the "
                                    "layout of its input (a `dist.layout` "
                                    "attribute on the op)";
          auto layout = attr.toLayout(*entry.mesh);
          if (!layout)
            return o.emitError() << "`dist.layout`: " << layout.error();
          if (layout->getRank() != block.size())
            return o.emitError()
                   << "`dist.layout` of rank " << layout->getRank()
                   << " does not fit the input of rank " << block.size();
          global = layout->getGlobalShape(*entry.mesh, block);
          auto at = layout->getBlockOffset(*entry.mesh, global, rank);
          if (!at)
            return o.emitError() << "`dist.layout`: " << at.error();
          offset = *at;
        }
        allocate(o.getResult());
        call("host::dropout<T>(" + data(o.getInput()) + ", " +
             shapeLiteral(global) + ", " + shapeLiteral(offset) + ", " +
             shapeLiteral(block) + ", " +
             doubleLiteral(o.getRateAttr().getValueAsDouble()) + ", " +
             std::to_string(o.getSeedAttr().getInt()) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError()
               << "no host emission for '" << other->getName() << "'";
      });
}

LogicalResult RankEmitter::emitOp(Operation *op) {
  // The op it came from, with its location.
  std::string text;
  llvm::raw_string_ostream ts(text);
  op->print(ts, asmState);
  for (StringRef line : llvm::split(StringRef(text), '\n'))
    os << "  // " << line << "\n";

  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      os << "  results[" << i << "]."
         << (isIntegerStorage(v.getType()) ? "ints" : "floats") << " = "
         << name(v) << ";\n";
    os << "  return Status::success();\n";
    return success();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return emitConstant(constant);
  if (isa<arith::AddIOp, arith::MulIOp>(op)) {
    FailureOr<int64_t> lhs = scalar(op, op->getOperand(0));
    FailureOr<int64_t> rhs = scalar(op, op->getOperand(1));
    if (failed(lhs) || failed(rhs))
      return failure();
    int64_t value = isa<arith::AddIOp>(op) ? *lhs + *rhs : *lhs * *rhs;
    scalars[op->getResult(0)] = value;
    os << "  const int64_t " << name(op->getResult(0)) << " = " << value
       << ";\n";
    return success();
  }
  StringRef dialect = op->getName().getDialectNamespace();
  if (dialect == "dist")
    return emitDistOp(op);
  if (dialect == "loom")
    return emitLoomOp(op);
  return op->emitError() << "no host emission for '" << op->getName() << "'";
}

LogicalResult RankEmitter::emit() {
  func::FuncOp func = entry.func;
  os << "/// Rank " << rank;
  if (entry.mesh) {
    std::vector<int64_t> coordinates = entry.mesh->getCoordinates(rank);
    os << " of mesh @" << entry.meshName << ": coordinates (";
    for (size_t a = 0; a < coordinates.size(); ++a)
      os << (a ? ", " : "") << entry.mesh->getAxis(a).name << " "
         << coordinates[a];
    os << ")";
  }
  os << ".\n";
  os << "template <typename T>\n"
     << "Status loom_" << func.getSymName() << "_rank" << rank
     << "(mpi::Communicator &comm, const std::vector<Buffer<T>> &args,\n"
     << "    std::vector<Buffer<T>> &results) {\n";
  os << "  (void)comm;\n";
  for (auto [i, arg] : llvm::enumerate(entry.args)) {
    Value value = func.getArgument(i);
    os << "  const std::vector<" << elementType(value) << "> &" << name(value)
       << " = args[" << i << "]." << (arg.isInteger ? "ints" : "floats")
       << "; // " << arg.name << "\n";
  }
  for (Operation &op : func.getBody().front()) {
    os << "\n";
    if (failed(emitOp(&op)))
      return failure();
  }
  os << "}\n\n";
  return success();
}

//===----------------------------------------------------------------------===//
// The program around the step functions
//===----------------------------------------------------------------------===//

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
  if (auto param = func.getArgAttrOfType<ParamAttr>(index, "loom.param")) {
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
  if (func.getArgAttrOfType<StringAttr>(index, interp::kNameAttrName))
    return "Init::State";
  return "Init::None";
}

/// The ProgramSpec and the step tables.
LogicalResult emitSpec(const EntryInfo &entry, raw_ostream &os) {
  func::FuncOp func = entry.func;
  os << "} // namespace\n\n"
     << "/// The mesh, the arguments and results, and each rank's blocks of "
        "them.\n"
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
  auto tensorSpec = [&](const TensorInfo &t, const std::string &init,
                        const std::string &initArgs) {
    os << "        {" << stringLiteral(t.name) << ", "
       << boolLiteral(t.isInteger) << ", " << dtypeLiteral(t.type) << ", "
       << shapeLiteral(t.globalShape) << ", " << shapeLiteral(t.localShape)
       << ", " << init << ", " << initArgs << ", "
       << stringLiteral(t.layout.toString()) << "},\n";
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

  // Placements, [rank][tensor]: block offsets, partial holders, replicas.
  const Mesh *mesh = entry.mesh ? &*entry.mesh : nullptr;
  auto offsetOf = [&](const TensorInfo &t, int64_t r) -> FailureOr<Shape> {
    if (!mesh)
      return Shape(t.localShape.size(), 0);
    auto offset = t.layout.getBlockOffset(*mesh, t.globalShape, r);
    if (!offset)
      return func.emitError() << "`" << t.name << "`: " << offset.error();
    return *offset;
  };
  os << "    s.argumentPlacements = {\n";
  for (int64_t r = 0; r < entry.numRanks; ++r) {
    os << "        {";
    for (auto [i, t] : llvm::enumerate(entry.args)) {
      FailureOr<Shape> offset = offsetOf(t, r);
      if (failed(offset))
        return failure();
      // A pending sum: the first member of each partial group holds it.
      bool holds =
          !mesh || mesh->getGroupIndex(r, t.layout.getPartialAxes()) == 0;
      os << (i ? ", " : "") << "{" << shapeLiteral(*offset) << ", "
         << boolLiteral(holds) << ", 0}";
    }
    os << "}, // rank " << r << "\n";
  }
  os << "    };\n    s.resultPlacements = {\n";
  for (int64_t r = 0; r < entry.numRanks; ++r) {
    os << "        {";
    for (auto [i, t] : llvm::enumerate(entry.results)) {
      FailureOr<Shape> offset = offsetOf(t, r);
      if (failed(offset))
        return failure();
      bool canonical = true;
      int64_t canonicalRank = r;
      if (mesh) {
        // Axes the layout does not use hold replicas.
        std::vector<std::string> replicated;
        for (const Mesh::Axis &axis : mesh->getAxes())
          if (!t.layout.uses(axis.name))
            replicated.push_back(axis.name);
        canonical = mesh->getGroupIndex(r, replicated) == 0;
        canonicalRank = mesh->getGroup(r, replicated).front();
      }
      os << (i ? ", " : "") << "{" << shapeLiteral(*offset) << ", "
         << boolLiteral(canonical) << ", " << canonicalRank << "}";
    }
    os << "}, // rank " << r << "\n";
  }
  os << "    };\n";
  // Loop-carried: a result named like an argument of its kind and shape.
  os << "    s.carried = {";
  bool first = true;
  for (auto [ri, result] : llvm::enumerate(entry.results))
    for (auto [ai, arg] : llvm::enumerate(entry.args))
      if (result.name == arg.name && result.isInteger == arg.isInteger &&
          result.globalShape == arg.globalShape) {
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
    // CMakeLists.txt): its table is then empty and the harness says so.
    os << "/// The step function of each rank, computing in " << type
       << " (empty when built with LOOM_STEP_NO_" << suffix << ").\n"
       << "const std::vector<StepFn<" << type << ">> &loomSteps" << suffix
       << "() {\n"
       << "  static const std::vector<StepFn<" << type << ">> steps = {\n"
       << "#ifndef LOOM_STEP_NO_" << suffix << "\n";
    for (int64_t r = 0; r < entry.numRanks; ++r)
      os << "      &loom_" << func.getSymName() << "_rank" << r << "<" << type
         << ">,\n";
    os << "#endif\n  };\n  return steps;\n}\n\n";
  }
  return success();
}

const char *kStepPrologue = R"cpp(
#include "loom/Runtime/Harness/Harness.h"
#include "loom/Runtime/Host/Activation.h"
#include "loom/Runtime/Host/Attention.h"
#include "loom/Runtime/Host/Elementwise.h"
#include "loom/Runtime/Host/Embedding.h"
#include "loom/Runtime/Host/Loss.h"
#include "loom/Runtime/Host/Matmul.h"
#include "loom/Runtime/Host/Normalization.h"
#include "loom/Runtime/Host/Optimizer.h"
#include "loom/Runtime/Host/Random.h"
#include "loom/Runtime/Host/Reduction.h"
#include "loom/Runtime/Host/Rope.h"
#include "loom/Runtime/Host/Shape.h"
#include "loom/Runtime/Host/Softmax.h"
#include "loom/Runtime/MPI/Communicator.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

using namespace loom::runtime::harness;
namespace host = loom::runtime::host;
namespace io = loom::runtime::io;
namespace mpi = loom::runtime::mpi;

/// Returns a failed kernel's or collective's Status, naming the op.
#define LOOM_CHECK(call, what)                                                 \
  do {                                                                         \
    Status status_ = (call);                                                   \
    if (!status_.ok())                                                         \
      return Status::failure(std::string(what) + ": " + status_.message());   \
  } while (false)

/// The same for the kernels that return an optional error message.
#define LOOM_CHECK_MESSAGE(call, what)                                         \
  do {                                                                         \
    std::optional<std::string> message_ = (call);                              \
    if (message_)                                                              \
      return Status::failure(std::string(what) + ": " + *message_);           \
  } while (false)

namespace {

)cpp";

std::string mainSource() {
  return R"cpp(//===- main.cpp - Emitted by loom-translate --emit-host -------------------===//
//
// Runs the emitted training step on this MPI rank. Training (any of --data,
// --resume, --ckpt-dir, --init-only, --print-layouts; Trainer.h):
//   mpirun -np N ./train_step --data TOKENS.bin --steps N [--seed S]
//       [--log-every K] [--ckpt-dir DIR [--ckpt-every K] [--resume]]
//       [--dtype f32|f64] [--init-only]
// One step from tensor files, as loom-run (Harness.h):
//   mpirun -np N ./train_step --inputs IN.safetensors --outputs OUT.safetensors
//       [--dtype f64|f32] [--steps N]
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Harness/Harness.h"
#include "loom/Runtime/Trainer/Trainer.h"

using namespace loom::runtime;

// Defined in train_step.cpp.
const harness::ProgramSpec &loomProgramSpec();
const std::vector<harness::StepFn<float>> &loomStepsF32();
const std::vector<harness::StepFn<double>> &loomStepsF64();

int main(int argc, char **argv) {
  if (trainer::isTrainingCommandLine(argc, argv))
    return trainer::runTrainer(argc, argv, loomProgramSpec(), loomStepsF32(),
                               loomStepsF64());
  return harness::runMain(argc, argv, loomProgramSpec(), loomStepsF32(),
                          loomStepsF64());
}
)cpp";
}

std::string cmakeSource() {
  return R"cmake(#===- CMakeLists.txt - Emitted by loom-translate --emit-host ---------------===#
#
# Builds the per-rank host program against Loom's runtime libraries:
#   cmake -G Ninja -S . -B build -DLOOM_SOURCE_DIR=<loom checkout> \
#         -DLOOM_BUILD_DIR=<loom build tree>
#   cmake --build build
#
#===----------------------------------------------------------------------===#

cmake_minimum_required(VERSION 3.20)
project(loom_emitted_step C CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  # The step is one long function per rank: -O1 compiles it quickly and the
  # time goes into the runtime's kernels, which are built optimized
  # (`loomc --emit host` asks for -O2 with -DCMAKE_BUILD_TYPE=Release
  # -DCMAKE_CXX_FLAGS_RELEASE=-O2).
  set(CMAKE_BUILD_TYPE Release)
  set(CMAKE_CXX_FLAGS_RELEASE "-O1")
endif()

set(LOOM_SOURCE_DIR "" CACHE PATH "Loom's source tree (for its headers)")
set(LOOM_BUILD_DIR "" CACHE PATH "Loom's build tree (for its libraries)")
if(NOT LOOM_SOURCE_DIR OR NOT LOOM_BUILD_DIR)
  message(FATAL_ERROR "set LOOM_SOURCE_DIR and LOOM_BUILD_DIR")
endif()

find_package(MPI REQUIRED COMPONENTS C)
find_library(LOOM_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
set(loom_runtime_libs)
# Static libraries, each before the ones it uses.
foreach(lib LoomRuntimeTrainer LoomRuntimeHarness LoomRuntimeHost LoomRuntimeIO
            LoomRuntimeMPI LoomRuntimeLayout LoomRuntimeSupport)
  find_library(LOOM_${lib}_LIBRARY NAMES ${lib}
    PATHS ${LOOM_BUILD_DIR}/lib ${LOOM_BUILD_DIR}/lib/Runtime
    NO_DEFAULT_PATH REQUIRED)
  list(APPEND loom_runtime_libs ${LOOM_${lib}_LIBRARY})
endforeach()

# The precisions the step functions are compiled for (`--dtype`); leaving
# one out halves the compile time.
set(LOOM_STEP_DTYPES "f32;f64" CACHE STRING "f32, f64 or both")

add_executable(train_step train_step.cpp main.cpp)
target_include_directories(train_step PRIVATE ${LOOM_SOURCE_DIR}/include)
foreach(dtype f32 f64)
  if(NOT dtype IN_LIST LOOM_STEP_DTYPES)
    string(TOUPPER ${dtype} upper)
    target_compile_definitions(train_step PRIVATE LOOM_STEP_NO_${upper}=1)
  endif()
endforeach()
# The step never throws; without exceptions the compiler skips the cleanup
# paths of its many buffers (about half the compile time).
set_source_files_properties(train_step.cpp PROPERTIES
  COMPILE_OPTIONS -fno-exceptions)
# The runtime uses MPI's C API only; Open MPI's mpi.h would otherwise pull in
# its C++ bindings, which MPI::MPI_C does not link.
target_compile_definitions(train_step PRIVATE OMPI_SKIP_MPICXX=1
                                              MPICH_SKIP_MPICXX=1)
target_link_libraries(train_step PRIVATE ${loom_runtime_libs}
                      ${LOOM_OPENBLAS_LIBRARY} MPI::MPI_C)
)cmake";
}

} // namespace

LogicalResult emitHostProgram(ModuleOp module, const HostEmitOptions &options,
                              HostProgramFiles &files) {
  EntryInfo entry;
  if (failed(readEntry(module, options, entry)))
    return failure();

  std::string step;
  llvm::raw_string_ostream os(step);
  os << "//===- train_step.cpp - Emitted by loom-translate --emit-host "
        "-------------===//\n"
     << "//\n"
     << "// Per-rank host code of @" << entry.func.getSymName();
  if (entry.mesh)
    os << " over mesh @" << entry.meshName << " " << entry.mesh->toString()
       << " (" << entry.numRanks << " ranks)";
  os << ": one function per rank,\n"
     << "// each op as the host kernel or collective the interpreter runs for "
        "it,\n"
     << "// after the op in a comment. Generated; do not edit.\n"
     << "//\n"
     << "//===------------------------------------------------------------"
        "----------===//\n"
     << kStepPrologue;

  // SSA names as the comments print them.
  AsmState asmState(entry.func, OpPrintingFlags().enableDebugInfo(
                                    true, /*prettyForm=*/false));
  for (int64_t r = 0; r < entry.numRanks; ++r) {
    RankEmitter rankEmitter(entry, r, asmState, os);
    if (failed(rankEmitter.emit()))
      return failure();
  }
  if (failed(emitSpec(entry, os)))
    return failure();

  files.clear();
  files.emplace_back("train_step.cpp", std::move(step));
  files.emplace_back("main.cpp", mainSource());
  files.emplace_back("CMakeLists.txt", cmakeSource());
  return success();
}

} // namespace mlir::loom

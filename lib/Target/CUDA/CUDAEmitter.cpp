//===- CUDAEmitter.cpp - One SPMD CUDA program from a partitioned step ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Read the entry, its mesh and its layouts (emit::readEntry, shared with
//    the host emitter).
// 2. Print the one step function every rank runs, with the harness's
//    signature: take the process's cuda::Session (device, stream, cuBLAS,
//    NCCL), open a cuda::Workspace, upload the arguments (a carried one only
//    when the session holds no resident copy the caller allows), then walk
//    the entry's block and print one statement group per op (StepEmitter): a
//    comment with the op, the device buffers of its results, and the CUDA
//    kernel launch, cuBLAS GEMM or NCCL Communicator call for it. Index
//    scalars, peers and block offsets are run-time expressions of the rank's
//    mesh coordinates (emit::StepEmitterBase). At the return, wait for the
//    step, turn a recorded data error into a Status naming its op, copy the
//    other results to the host, hand the carried results to the session as
//    the next step's resident arguments, and copy those to the host only
//    when the caller needs them (harness::StepContext).
//    In a pipelined program (docs/Pipeline.md) each stage's ops run in an
//    `if (loomStage == k)` region and a rank leaves other stages' results
//    untouched. NCCL has no tags and matches by order, so the emission first
//    pairs every receive with a send of its tag (matchPointToPoint, on one
//    rank per distinct role: an unpaired send or receive is an error) and
//    prints the program's sends once (nccl::SendSite); from them each rank
//    computes at run time the messages its peers send it, in each sender's
//    program order (nccl::incomingMessages), and hands that table to the
//    communicator (nccl::Communicator::beginStep), which delivers by tag.
// 3. Print the ProgramSpec and step tables (shared), main.cpp and the
//    CMakeLists.txt that builds with nvcc.
//
// The calls mirror the host emitter's one for one (same kernels, same
// parameters, device pointers instead of vectors), so a pattern missing
// here is an error naming the op, never a silent fallback.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CUDA/CUDAEmitter.h"
#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Target/Common/EmitterSupport.h"
#include "loom/Target/Common/StepArena.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

namespace mlir::loom {

using emit::boolLiteral;
using emit::doubleLiteral;
using emit::EntryInfo;
using emit::isIntegerStorage;
using emit::shapeLiteral;
using emit::stringLiteral;
using Shape = std::vector<int64_t>;

namespace {

const emit::EmitterName kCUDA = {"CUDA", "--emit-cuda-entry"};

/// The largest attention head dim of the runtime's kernel
/// (cuda::kMaxAttentionHeadDim; the emitter does not include runtime
/// headers).
constexpr int64_t kMaxAttentionHeadDim = 256;

LogicalResult checkTensorType(Operation *op, Type type, const Twine &what) {
  return emit::checkTensorType(op, type, what, kCUDA);
}

/// Attention's head dims within the kernel's limit.
LogicalResult checkHeadDims(Operation *op, Value query, Value value) {
  int64_t d = cast<RankedTensorType>(query.getType()).getShape().back();
  int64_t dv = cast<RankedTensorType>(value.getType()).getShape().back();
  if (d > kMaxAttentionHeadDim || dv > kMaxAttentionHeadDim)
    return op->emitOpError() << "head dim " << std::max(d, dv)
                             << " exceeds the CUDA attention kernel's limit of "
                             << kMaxAttentionHeadDim;
  return success();
}

/// The 16-bit type ("BF16" or "F16", a cuda::CastTarget) whose values
/// `value` holds exactly: a bf16 or f16 result of an op (rounded once,
/// docs/MixedPrecision.md) or its widening to f32/f64 by loom.cast,
/// through reshapes and annotations; empty otherwise. A block argument
/// is not trusted to hold rounded values (the caller's data). A matmul
/// whose operands both hold one type's values runs on the tensor cores
/// (cuda::matmulLowPrecision).
std::optional<StringRef> lowPrecisionValues(Value value) {
  auto typeName = [](Type type) -> std::optional<StringRef> {
    Type element = getElementTypeOrSelf(type);
    if (element.isBF16())
      return StringRef("BF16");
    if (element.isF16())
      return StringRef("F16");
    return std::nullopt;
  };
  while (Operation *def = value.getDefiningOp()) {
    if (isa<ReshapeOp, dist::AnnotateOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    if (std::optional<StringRef> own = typeName(value.getType()))
      return own;
    // A widening to f32 or f64 keeps the values exact.
    auto cast = dyn_cast<CastOp>(def);
    Type target = cast ? getElementTypeOrSelf(cast.getResult().getType())
                       : Type();
    if (cast && isa<FloatType>(target) && target.getIntOrFloatBitWidth() >= 32)
      return lowPrecisionValues(cast.getInput());
    return std::nullopt;
  }
  return std::nullopt;
}

/// The attention kernels' name suffix: "LowPrecision" (float sums in an
/// f32 run, cuda::attentionLowPrecision) when query, key and value all hold
/// values of one 16-bit type, else none (the exact kernels).
std::string attentionVariant(Value query, Value key, Value value) {
  std::optional<StringRef> low = lowPrecisionValues(query);
  return low && low == lowPrecisionValues(key) &&
                 low == lowPrecisionValues(value)
             ? "LowPrecision"
             : "";
}

/// Prints the step function every rank runs.
class StepEmitter : public emit::StepEmitterBase {
public:
  StepEmitter(const EntryInfo &entry, AsmState &asmState, raw_ostream &out)
      : StepEmitterBase(entry, asmState, out, kCUDA), arena(entry) {}

  LogicalResult emit();

private:
  /// `T` or `int64_t`: how the elements of `value` are held.
  std::string elementType(Value value) {
    return isIntegerStorage(value.getType()) ? "int64_t" : "T";
  }
  std::string optional(Value value) { return value ? name(value) : "nullptr"; }
  /// Declares the zeroed device buffer of a result (in a stage's region:
  /// declared null before it, allocated where the stage runs the op): the
  /// buffer of the argument the value is carried into when that argument is
  /// dead (emit::StepArena::freeCarriedArgument), else its offset in the
  /// step's arena (planArena, after the body).
  void allocate(Value result) {
    std::string type = elementType(result);
    std::string count = std::to_string(numElements(result));
    std::string alloc;
    if (std::optional<unsigned> arg =
            arena.freeCarriedArgument(currentOp, result)) {
      // The device buffer of the argument the value is carried into, which
      // no op reads from here on (the in-place rule, dist::InPlaceReuse):
      // it then becomes the argument's resident copy, as an update in place
      // does.
      Value argument = func::FuncOp(entry.func).getArgument(*arg);
      arena.alias(result, argument);
      os << "  // In the place of " << name(argument)
         << ", which no op reads from here on.\n";
      alloc = "ws.reuse(" + name(argument) + ", " + count + ")";
    } else {
      alloc = "ws.at<" + type + ">(" + arena.add(result, currentOp) + ", " +
              count + ")";
    }
    if (inStageRegion()) {
      declare(type + " *" + name(result) + " = nullptr;");
      os << "  " << name(result) << " = " << alloc << ";\n";
      return;
    }
    os << "  " << type << " *" << name(result) << " = " << alloc << ";\n";
  }
  /// A call returning a Status (NCCL, the embedding gradients).
  void checked(Operation *op, const std::string &call) {
    os << "  LOOM_CHECK(" << call << ", " << stringLiteral(describe(op))
       << ");\n";
  }
  void call(const std::string &text) { os << "  " << text << ";\n"; }
  /// The error sink of `op`: kernels that validate data record failures
  /// under the op's position in `ops`.
  std::string errors(Operation *op) {
    ops.push_back(describe(op));
    return "session.errors(" + std::to_string(ops.size()) + ")";
  }
  /// Another name for the same device buffer.
  void alias(Value result, Value operand) {
    arena.alias(result, operand);
    if (inStageRegion()) {
      declare("const " + elementType(result) + " *" + name(result) +
              " = nullptr;");
      os << "  " << name(result) << " = " << name(operand) << ";\n";
      return;
    }
    os << "  const " << elementType(result) << " *" << name(result) << " = "
       << name(operand) << ";\n";
  }

  LogicalResult emitTargetOp(Operation *op) override;
  LogicalResult emitLoomOp(Operation *op);
  LogicalResult emitDistOp(Operation *op);
  LogicalResult emitConstant(arith::ConstantOp op);
  LogicalResult emitReturn(func::ReturnOp op);

  /// Prints the program's sends and the beginStep call with this rank's
  /// table computed from them.
  void emitIncoming();

  /// Declares an optimizer update's result: the buffer of the argument it
  /// updates (`operand`) when the update is that argument's last reader and
  /// the result is carried into it (emit::StepArena::updatesInPlace), else
  /// a buffer of its own (allocate). The update kernels read each element
  /// before they write it, so the new model state overwrites the old in
  /// place, and the step holds one copy of the state rather than two
  /// (docs/Codegen.md, "Memory").
  void allocateUpdate(Value result, Value operand) {
    if (!arena.updatesInPlace(currentOp, result, operand)) {
      allocate(result);
      return;
    }
    arena.alias(result, operand);
    std::string statement = name(result) + " = const_cast<" +
                            elementType(result) + " *>(" + name(operand) + ");";
    os << "  // In place: the update is the last reader of " << name(operand)
       << ".\n";
    if (inStageRegion()) {
      declare(elementType(result) + " *" + name(result) + " = nullptr;");
      os << "  " << statement << "\n";
      return;
    }
    os << "  " << elementType(result) << " *" << statement << "\n";
  }
  /// The step's static memory plan.
  emit::StepArena arena;
  /// The op being emitted: allocate() takes its stage.
  Operation *currentOp = nullptr;

  /// The carried arguments kept on the device: argument index -> the result
  /// carried into it. In a pipelined program only the stage that computes
  /// the result keeps it (resultCondition).
  std::map<size_t, size_t> residentArgs;
  /// Constants emitted so far: the next one's id in the session.
  size_t numConstants = 0;
  /// Descriptions of the ops that record data errors, by tag - 1.
  std::vector<std::string> ops;
};

void StepEmitter::emitIncoming() {
  std::vector<Operation *> sends;
  for (Operation &op : func::FuncOp(entry.func).getBody().front())
    if (isa<dist::SendOp>(op))
      sends.push_back(&op);
  if (sends.empty()) {
    os << "  LOOM_CHECK(nccl.beginStep(nullptr, 0), \"the step's "
          "messages\");\n";
    return;
  }
  // NCCL matches by order: the communicator receives each sender's messages
  // in the sender's order and delivers them by tag. Each rank finds its
  // senders among the program's sends.
  os << "  // The program's sends: {stage, axis, to, tag, count, integer}.\n"
     << "  static const nccl::SendSite kSends[] = {";
  for (Operation *op : sends) {
    auto send = cast<dist::SendOp>(op);
    auto type = cast<RankedTensorType>(send.getInput().getType());
    os << "\n      {" << entry.stageOfOp(op) << ", "
       << *entry.mesh->findAxis(send.getAxis().str()) << ", " << send.getTo()
       << ", " << send.getTag() << ", " << type.getNumElements() << ", "
       << boolLiteral(isIntegerStorage(type)) << "},";
  }
  os << "\n  };\n"
     << "  const std::vector<nccl::Message> incoming =\n"
     << "      nccl::incomingMessages<T>(comm.getMesh(), loomRank, "
     << (entry.numStages ? static_cast<int64_t>(entry.pipelineAxisIndex) : -1)
     << ", kSends, " << sends.size() << ");\n"
     << "  LOOM_CHECK(nccl.beginStep(incoming.data(), incoming.size()),\n"
     << "             \"the step's messages\");\n";
}

LogicalResult StepEmitter::emitConstant(arith::ConstantOp op) {
  if (failed(checkTensorType(op, op.getType(), "the constant")))
    return failure();
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "no CUDA emission for a constant that is not "
                             "dense elements";
  // The host values (as the interpreter converts them), uploaded on the
  // process's first step and kept in the session: a constant never changes.
  std::vector<std::string> elements;
  if (isa<FloatType>(dense.getElementType()))
    for (const APFloat &f : dense.getValues<APFloat>())
      elements.push_back("static_cast<T>(" +
                         doubleLiteral(f.convertToDouble()) + ")");
  else
    for (const APInt &i : dense.getValues<APInt>())
      elements.push_back("int64_t(" + std::to_string(i.getSExtValue()) + ")");
  Value result = op.getResult();
  std::string type = elementType(result);
  std::string host =
      "const std::vector<" + type + "> " + name(result) + "_host";
  if (dense.isSplat())
    host += "(" + std::to_string(numElements(result)) + ", " +
            elements.front() + ");";
  else
    host += " = {" + llvm::join(elements, ", ") + "};";
  declare(host);
  declare("const " + type + " *" + name(result) +
          " = session.constant(&stepKey, " + std::to_string(numConstants++) +
          ", ws, " + name(result) + "_host);");
  return success();
}

LogicalResult StepEmitter::emitReturn(func::ReturnOp ret) {
  os << "  static const char *const kOps[] = {";
  for (const std::string &op : ops)
    os << "\n      " << stringLiteral(op) << ",";
  os << (ops.empty() ? "nullptr};\n" : "\n  };\n");
  os << "  if (Status status = session.finish(kOps, " << ops.size()
     << "); !status)\n"
     << "    return Status::failure(\"rank \" + std::to_string(loomRank) + "
        "\": \" +\n"
     << "                           status.message());\n";
  // A result computed on one stage only: on the others the caller's buffer
  // stays as it was.
  auto guard = [&](unsigned i) {
    std::string condition = resultCondition(i);
    return condition.empty() ? condition : "if (" + condition + ") ";
  };
  auto download = [&](unsigned i, Value v, StringRef indent) {
    os << indent << guard(i) << "ws.download(results[" << i << "]."
       << (isIntegerStorage(v.getType()) ? "ints" : "floats") << ", " << name(v)
       << ", " << numElements(v) << ");\n";
  };
  std::vector<unsigned> carried;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    size_t index = i;
    bool isCarried = llvm::any_of(
        residentArgs, [&](const auto &pair) { return pair.second == index; });
    if (isCarried)
      carried.push_back(i);
    else
      download(i, v, "  ");
  }
  if (!carried.empty()) {
    os << "  // The carried results become the next step's arguments on the\n"
       << "  // device; the host reads them only when the caller asks (a\n"
       << "  // checkpoint, the last step).\n";
    bool staged = llvm::any_of(residentArgs, [&](const auto &pair) {
      return !resultCondition(pair.second).empty();
    });
    auto entryText = [&](size_t arg, size_t result) {
      Value v = ret.getOperand(result);
      return "{" + std::to_string(arg) + ", " + name(v) + ", " +
             std::to_string(numElements(v)) + " * int64_t(sizeof(" +
             elementType(v) + "))}";
    };
    if (!staged) {
      os << "  session.keepResident(&stepKey, ws, {\n";
      for (auto [arg, result] : residentArgs)
        os << "      " << entryText(arg, result) << ", // "
           << entry.args[arg].name << "\n";
      os << "  });\n";
    } else {
      // Each stage keeps the results it computes.
      os << "  std::vector<cuda::Session::Carried> loomCarried;\n";
      for (auto [arg, result] : residentArgs)
        os << "  " << guard(result) << "loomCarried.push_back("
           << entryText(arg, result) << "); // " << entry.args[arg].name
           << "\n";
      os << "  session.keepResident(&stepKey, ws, loomCarried);\n";
    }
    os << "  if (context.hostNeedsCarried) {\n";
    for (unsigned i : carried)
      download(i, ret.getOperand(i), "    ");
    os << "  }\n";
  }
  os << "  return Status::success();\n";
  return success();
}

LogicalResult StepEmitter::emitTargetOp(Operation *op) {
  currentOp = op;
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return emitReturn(ret);
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return emitConstant(constant);
  StringRef dialect = op->getName().getDialectNamespace();
  if (dialect == "dist" || dialect == "loom") {
    if (failed(dialect == "dist" ? emitDistOp(op) : emitLoomOp(op)))
      return failure();
    // As the interpreter: a bf16 or f16 result is computed in T, then
    // rounded once to its own type (the cast kernel, in place).
    for (Value result : op->getResults())
      if (interp::isRoundedToLowPrecision(result))
        call("cuda::cast<T, T>(stream, " + name(result) + ", " +
             std::to_string(numElements(result)) + ", cuda::CastTarget::" +
             (getElementTypeOrSelf(result.getType()).isBF16() ? "BF16"
                                                              : "F16") +
             ", " + name(result) + ")");
    return success();
  }
  return op->emitError() << "no CUDA emission for '" << op->getName() << "'";
}

LogicalResult StepEmitter::emitDistOp(Operation *op) {
  auto collective = [&](Operation *c, const std::string &method,
                        const std::string &attrs) {
    Value in = c->getOperand(0), out = c->getResult(0);
    groupComment(c);
    allocate(out);
    checked(c, "nccl." + method + "(" + name(in) + ", " + shape(in) + ", " +
                   axes(c) + ", " + attrs + name(out) + ")");
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](dist::AnnotateOp annotate) {
        alias(annotate.getResult(), annotate.getInput());
        return success();
      })
      .Case([&](dist::ReshardOp reshard) -> LogicalResult {
        if (entry.numRanks > 1)
          return reshard.emitError()
                 << "reshards must be lowered to collectives "
                    "(-dist-lower-reshards) before CUDA emission";
        alias(reshard.getResult(), reshard.getInput());
        return success();
      })
      .Case([&](dist::AllGatherOp o) {
        return collective(o, "allGather", std::to_string(o.getDim()) + ", ");
      })
      .Case([&](dist::AllSliceOp o) {
        return collective(o, "allSlice", std::to_string(o.getDim()) + ", ");
      })
      .Case([&](dist::AllReduceOp o) {
        return collective(o, "allReduce",
                          std::string(o.getKind() == dist::ReductionKind::Sum
                                          ? "nccl::ReduceKind::Sum"
                                          : "nccl::ReduceKind::Max") +
                              ", ");
      })
      .Case([&](dist::ReduceScatterOp o) {
        return collective(o, "reduceScatter",
                          std::to_string(o.getDim()) + ", ");
      })
      .Case([&](dist::AllToAllOp o) {
        return collective(o, "allToAll",
                          std::to_string(o.getSplitDim()) + ", " +
                              std::to_string(o.getConcatDim()) + ", ");
      })
      .Case([&](dist::CollectivePermuteOp o) {
        return collective(o, "collectivePermute",
                          "int64_t(" + std::to_string(o.getShift()) + "), ");
      })
      .Case([&](dist::BroadcastOp o) {
        return collective(o, "broadcast", std::to_string(o.getRoot()) + ", ");
      })
      .Case([&](dist::SendOp send) -> LogicalResult {
        FailureOr<std::string> to =
            peer(send, send.getAxis(), static_cast<int64_t>(send.getTo()));
        if (failed(to))
          return failure();
        // A send to this rank itself does nothing. Queued, not posted: the
        // communicator posts it with the next receive, collective or the
        // step's end (no rendezvous deadlock).
        os << "  if (const int64_t to = " << *to << "; to != loomRank) {\n  ";
        checked(send, "nccl.send(" + name(send.getInput()) + ", " +
                          shape(send.getInput()) + ", to, " +
                          std::to_string(send.getTag()) + ")");
        os << "  }\n";
        return success();
      })
      .Case([&](dist::RecvOp recv) -> LogicalResult {
        FailureOr<std::string> from =
            peer(recv, recv.getAxis(), static_cast<int64_t>(recv.getFrom()));
        if (failed(from))
          return failure();
        if (failed(checkTensorType(recv, recv.getResult().getType(),
                                   "the result")))
          return failure();
        allocate(recv.getResult());
        // A receive from this rank itself yields zeros.
        os << "  if (const int64_t from = " << *from
           << "; from != loomRank) {\n  ";
        checked(recv, "nccl.recv(" + name(recv.getResult()) + ", " +
                          shape(recv.getResult()) + ", from, " +
                          std::to_string(recv.getTag()) + ")");
        os << "  }\n";
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError()
               << "no CUDA emission for '" << other->getName() << "'";
      });
}

std::string geluApproximation(GeluApproximation approximate) {
  return approximate == GeluApproximation::Tanh
             ? "cuda::GeluApproximation::Tanh"
             : "cuda::GeluApproximation::None";
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

LogicalResult StepEmitter::emitLoomOp(Operation *op) {
  for (Value v : op->getOperands())
    if (!isScalar(v) && failed(checkTensorType(op, v.getType(), "an operand")))
      return failure();
  for (Value v : op->getResults())
    if (failed(checkTensorType(op, v.getType(), "a result")))
      return failure();

  auto binary = [&](Operation *b, const char *kind) {
    Value lhs = b->getOperand(0), rhs = b->getOperand(1), out = b->getResult(0);
    allocate(out);
    // Only integer division can fail on data.
    std::string sink = elementType(out) == "int64_t" && StringRef(kind) == "Div"
                           ? ", " + errors(b)
                           : "";
    call("cuda::binary<" + elementType(out) + ">(stream, cuda::BinaryKind::" +
         kind + ", " + name(lhs) + ", " + shape(lhs) + ", " + name(rhs) + ", " +
         shape(rhs) + ", " + name(out) + ", " + shape(out) + sink + ")");
    return success();
  };
  auto unaryFn = [&](Operation *u, const char *kind) {
    Value in = u->getOperand(0), out = u->getResult(0);
    allocate(out);
    call("cuda::unary<T>(stream, cuda::UnaryKind::" + std::string(kind) + ", " +
         name(in) + ", " + std::to_string(numElements(in)) + ", " + name(out) +
         ")");
    return success();
  };
  auto reduce = [&](Operation *r, ArrayRef<int64_t> axesAttr,
                    const char *kind) {
    Value in = r->getOperand(0), out = r->getResult(0);
    allocate(out);
    call("cuda::reduce<" + elementType(in) +
         ">(stream, cuda::ReduceKind::" + kind + ", " + name(in) + ", " +
         shape(in) + ", " + shapeLiteral(axesAttr) + ", " + name(out) + ")");
    return success();
  };
  auto simple = [&](Value in, Value out, const std::string &fn,
                    const std::string &extra) {
    allocate(out);
    call(fn + "(stream, " + name(in) + ", " + shape(in) + extra + ", " +
         name(out) + ")");
    return success();
  };
  auto grad = [&](Value dy, Value x, Value dx, const std::string &fn,
                  const std::string &extra) {
    allocate(dx);
    call(fn + "(stream, " + name(dy) + ", " + name(x) + ", " + shape(x) +
         extra + ", " + name(dx) + ")");
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
        call("cuda::scale<T>(stream, " + name(o.getInput()) + ", " +
             std::to_string(numElements(o.getInput())) + ", " +
             doubleLiteral(o.getFactorAttr().getValueAsDouble()) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](CastOp o) -> LogicalResult {
        Type target =
            cast<ShapedType>(o.getResult().getType()).getElementType();
        std::string t = castTarget(target);
        if (t.empty())
          return o.emitError() << "no CUDA emission for a cast to " << target;
        // As the interpreter: casts to f64, and to f32 in an f64 run, keep
        // the run's precision; bf16 and f16 casts round.
        std::string targetExpr = "cuda::CastTarget::" + t;
        if (t == "F64" || t == "F32")
          targetExpr = "(std::is_same_v<T, double> ? cuda::CastTarget::F64 : "
                       "cuda::CastTarget::F32)";
        allocate(o.getResult());
        call("cuda::cast<" + elementType(o.getInput()) + ", " +
             elementType(o.getResult()) + ">(stream, " + name(o.getInput()) +
             ", " + std::to_string(numElements(o.getInput())) + ", " +
             targetExpr + ", " + name(o.getResult()) + ")");
        return success();
      })
      .Case([&](MatmulOp o) {
        allocate(o.getResult());
        std::optional<StringRef> low = lowPrecisionValues(o.getLhs());
        if (low && low == lowPrecisionValues(o.getRhs())) {
          // Both operands hold bf16 (f16) values: tensor cores, f32 sums.
          call("cuda::matmulLowPrecision<T>(blas, session.getGemmScratch(), "
               "cuda::CastTarget::" +
               low->str() + ", " + name(o.getLhs()) + ", " + shape(o.getLhs()) +
               ", " + name(o.getRhs()) + ", " + shape(o.getRhs()) + ", " +
               boolLiteral(o.getTransposeLhs()) + ", " +
               boolLiteral(o.getTransposeRhs()) + ", " + name(o.getResult()) +
               ")");
          return success();
        }
        call("cuda::matmul<T>(blas, " + name(o.getLhs()) + ", " +
             shape(o.getLhs()) + ", " + name(o.getRhs()) + ", " +
             shape(o.getRhs()) + ", " + boolLiteral(o.getTransposeLhs()) +
             ", " + boolLiteral(o.getTransposeRhs()) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](ReduceSumOp o) { return reduce(o, o.getAxes(), "Sum"); })
      .Case([&](ReduceMeanOp o) { return reduce(o, o.getAxes(), "Mean"); })
      .Case([&](ReduceMaxOp o) { return reduce(o, o.getAxes(), "Max"); })
      .Case([&](ReshapeOp o) {
        // Row-major order is kept: the same buffer under another shape.
        alias(o.getResult(), o.getInput());
        return success();
      })
      .Case([&](TransposeOp o) {
        Value in = o.getInput();
        allocate(o.getResult());
        call("cuda::transpose<" + elementType(in) + ">(stream, " + name(in) +
             ", " + shape(in) + ", " + shapeLiteral(o.getPermutation()) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](SliceOp o) {
        Value in = o.getInput();
        allocate(o.getResult());
        call("cuda::slice<" + elementType(in) + ">(stream, " + name(in) + ", " +
             shape(in) + ", " + shapeLiteral(o.getStarts()) + ", " +
             shapeLiteral(o.getLimits()) + ", " + shapeLiteral(o.getStrides()) +
             ", " + name(o.getResult()) + ")");
        return success();
      })
      .Case([&](PadOp o) {
        Value in = o.getInput();
        allocate(o.getResult());
        call("cuda::pad<" + elementType(in) + ">(stream, " + name(in) + ", " +
             shape(in) + ", " + shapeLiteral(o.getLow()) + ", " +
             shapeLiteral(o.getHigh()) + ", " + shapeLiteral(o.getInterior()) +
             ", " + name(o.getResult()) + ")");
        return success();
      })
      .Case([&](ConcatOp o) {
        std::vector<std::string> inputs, shapes;
        for (Value v : o.getInputs()) {
          inputs.push_back(name(v));
          shapes.push_back(shape(v));
        }
        std::string type = elementType(o.getResult());
        allocate(o.getResult());
        call("cuda::concat<" + type + ">(stream, std::vector<const " + type +
             " *>{" + llvm::join(inputs, ", ") + "}, {" +
             llvm::join(shapes, ", ") + "}, " + std::to_string(o.getAxis()) +
             ", " + name(o.getResult()) + ")");
        return success();
      })
      .Case([&](SplitOp o) {
        std::vector<std::string> outs;
        for (Value v : o.getOutputs()) {
          allocate(v);
          outs.push_back(name(v));
        }
        Value in = o.getInput();
        call("cuda::split<" + elementType(in) + ">(stream, " + name(in) + ", " +
             shape(in) + ", " + std::to_string(o.getAxis()) + ", " +
             shapeLiteral(o.getSizes()) + ", {" + llvm::join(outs, ", ") +
             "})");
        return success();
      })
      .Case([&](ReluOp o) {
        return simple(o.getInput(), o.getResult(), "cuda::relu<T>", "");
      })
      .Case([&](SiluOp o) {
        return simple(o.getInput(), o.getResult(), "cuda::silu<T>", "");
      })
      .Case([&](GeluOp o) {
        return simple(o.getInput(), o.getResult(), "cuda::gelu<T>",
                      ", " + geluApproximation(o.getApproximate()));
      })
      .Case([&](ReluGradOp o) {
        return grad(o.getDy(), o.getX(), o.getDx(), "cuda::reluGrad<T>", "");
      })
      .Case([&](SiluGradOp o) {
        return grad(o.getDy(), o.getX(), o.getDx(), "cuda::siluGrad<T>", "");
      })
      .Case([&](GeluGradOp o) {
        return grad(o.getDy(), o.getX(), o.getDx(), "cuda::geluGrad<T>",
                    ", " + geluApproximation(o.getApproximate()));
      })
      .Case([&](SoftmaxOp o) {
        return simple(o.getInput(), o.getResult(), "cuda::softmax<T>",
                      ", " + std::to_string(o.getAxisAttr().getInt()));
      })
      .Case([&](LogSoftmaxOp o) {
        return simple(o.getInput(), o.getResult(), "cuda::logSoftmax<T>",
                      ", " + std::to_string(o.getAxisAttr().getInt()));
      })
      .Case([&](SoftmaxGradOp o) {
        allocate(o.getResult());
        call("cuda::softmaxGrad<T>(stream, " + name(o.getOutput()) + ", " +
             name(o.getGrad()) + ", " + shape(o.getOutput()) + ", " +
             std::to_string(o.getAxisAttr().getInt()) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](LogSoftmaxGradOp o) {
        allocate(o.getResult());
        call("cuda::logSoftmaxGrad<T>(stream, " + name(o.getOutput()) + ", " +
             name(o.getGrad()) + ", " + shape(o.getOutput()) + ", " +
             std::to_string(o.getAxisAttr().getInt()) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](AttentionOp o) -> LogicalResult {
        if (failed(checkHeadDims(o, o.getQuery(), o.getValue())))
          return failure();
        Value mask = o.getMask();
        allocate(o.getResult());
        call("cuda::attention" + attentionVariant(o.getQuery(), o.getKey(),
                                                  o.getValue()) +
             "<T>(stream, " + name(o.getQuery()) + ", " +
             shape(o.getQuery()) + ", " + name(o.getKey()) + ", " +
             shape(o.getKey()) + ", " + name(o.getValue()) + ", " +
             shape(o.getValue()) + ", " + optional(mask) + ", " +
             (mask ? shape(mask) : "{}") + ", " + boolLiteral(o.getCausal()) +
             ", " + optionalScale(o.getScale()) + ", " + name(o.getResult()) +
             ")");
        return success();
      })
      .Case([&](AttentionGradOp o) -> LogicalResult {
        if (failed(checkHeadDims(o, o.getQuery(), o.getValue())))
          return failure();
        Value mask = o.getMask();
        allocate(o.getDquery());
        allocate(o.getDkey());
        allocate(o.getDvalue());
        call("cuda::attentionGrad" +
             attentionVariant(o.getQuery(), o.getKey(), o.getValue()) +
             "<T>(stream, " + name(o.getQuery()) + ", " +
             shape(o.getQuery()) + ", " + name(o.getKey()) + ", " +
             shape(o.getKey()) + ", " + name(o.getValue()) + ", " +
             shape(o.getValue()) + ", " + name(o.getOut()) + ", " +
             name(o.getDout()) + ", " + optional(mask) + ", " +
             (mask ? shape(mask) : "{}") + ", " + boolLiteral(o.getCausal()) +
             ", " + optionalScale(o.getScale()) + ", " + name(o.getDquery()) +
             ", " + name(o.getDkey()) + ", " + name(o.getDvalue()) + ")");
        return success();
      })
      .Case([&](DropoutOp o) -> LogicalResult {
        // The host kernel's mask, bit for bit (Support/Philox.h), from the
        // step's run seed and RNG step.
        Shape global;
        FailureOr<std::string> offset = globalBlock(o, global);
        if (failed(offset))
          return failure();
        allocate(o.getResult());
        call("cuda::dropout<T>(stream, " + name(o.getInput()) + ", " +
             shapeLiteral(global) + ", " + *offset + ", " +
             shape(o.getInput()) + ", " +
             doubleLiteral(o.getRateAttr().getValueAsDouble()) + ", " +
             std::to_string(o.getSeedAttr().getInt()) +
             ", context.seed, context.step, " + name(o.getResult()) + ")");
        return success();
      })
      .Case([&](RopeOp o) {
        Value positions = o.getPositions();
        allocate(o.getResult());
        call("cuda::rope<T>(stream, " + name(o.getInput()) + ", " +
             shape(o.getInput()) + ", " + optional(positions) + ", " +
             (positions ? shape(positions) : "{}") + ", " +
             doubleLiteral(o.getThetaAttr().getValueAsDouble()) + ", " +
             boolLiteral(o.getInverse()) + ", " + name(o.getResult()) + ")");
        return success();
      })
      .Case([&](EmbeddingOp o) -> LogicalResult {
        allocate(o.getResult());
        std::string common = name(o.getTable()) + ", " + shape(o.getTable()) +
                             ", " + name(o.getIds()) + ", " + shape(o.getIds());
        if (Value offset = o.getOffset()) {
          FailureOr<std::string> first = scalar(o, offset);
          if (failed(first))
            return failure();
          call("cuda::embeddingBlock<T>(stream, " + common + ", " + *first +
               ", " + name(o.getResult()) + ")");
          return success();
        }
        call("cuda::embedding<T>(stream, " + common + ", " +
             name(o.getResult()) + ", " + errors(o) + ")");
        return success();
      })
      .Case([&](EmbeddingGradOp o) -> LogicalResult {
        allocate(o.getResult());
        int64_t rows = shapeOf(o.getResult())[0];
        std::string common = name(o.getDy()) + ", " + shape(o.getDy()) + ", " +
                             name(o.getIds()) + ", " + shape(o.getIds());
        if (Value offset = o.getOffset()) {
          FailureOr<std::string> first = scalar(o, offset);
          if (failed(first))
            return failure();
          checked(o, "cuda::embeddingGradBlock<T>(stream, " + common + ", " +
                         *first + ", " + std::to_string(rows) + ", " +
                         name(o.getResult()) + ")");
          return success();
        }
        checked(o, "cuda::embeddingGrad<T>(stream, " + common + ", " +
                       std::to_string(rows) + ", " + name(o.getResult()) + ")");
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
        call("cuda::crossEntropyLocal<T>(stream, " + name(o.getLogits()) +
             ", " + shape(o.getLogits()) + ", " + name(o.getLabels()) + ", " +
             std::to_string(o.getIgnoreIndexAttr().getInt()) + ", " + offset +
             ", " + boolLiteral(o.getSum()) + ", " + name(o.getResult()) +
             ", " + errors(o) + ")");
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
        call("cuda::crossEntropyGradLocal<T>(stream, " + name(o.getLogits()) +
             ", " + shape(o.getLogits()) + ", " + name(o.getLabels()) + ", " +
             name(o.getDloss()) + ", " +
             std::to_string(o.getIgnoreIndexAttr().getInt()) + ", " + offset +
             ", " + boolLiteral(o.getSum()) + ", " + name(o.getResult()) +
             ", " + errors(o) + ")");
        return success();
      })
      .Case([&](NonfiniteCountOp o) {
        allocate(o.getResult());
        call("cuda::nonfiniteCount<T>(stream, " + name(o.getInput()) + ", " +
             std::to_string(numElements(o.getInput())) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](SelectOp o) {
        allocate(o.getResult());
        call("cuda::selectWhole<T, " + elementType(o.getResult()) +
             ">(stream, " + name(o.getCondition()) + ", " +
             name(o.getOnTrue()) + ", " + name(o.getOnFalse()) + ", " +
             std::to_string(numElements(o.getResult())) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](UpdateLossScaleOp o) {
        allocate(o.getNewScale());
        allocate(o.getNewGrowthTracker());
        call("cuda::updateLossScale<T>(stream, " + name(o.getScale()) + ", " +
             name(o.getGrowthTracker()) + ", " + name(o.getNonfinite()) + ", " +
             doubleLiteral(o.getGrowthFactor().convertToDouble()) + ", " +
             doubleLiteral(o.getBackoffFactor().convertToDouble()) + ", " +
             std::to_string(o.getGrowthInterval()) + ", " +
             name(o.getNewScale()) + ", " + name(o.getNewGrowthTracker()) +
             ")");
        return success();
      })
      .Case([&](LabelCountOp o) {
        allocate(o.getResult());
        call("cuda::labelCount<T>(stream, " + name(o.getLabels()) + ", " +
             std::to_string(numElements(o.getLabels())) + ", " +
             std::to_string(o.getIgnoreIndexAttr().getInt()) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](LayerNormOp o) {
        allocate(o.getResult());
        call("cuda::layerNorm<T>(stream, " + name(o.getInput()) + ", " +
             shape(o.getInput()) + ", " + optional(o.getGamma()) + ", " +
             optional(o.getBeta()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](RmsNormOp o) {
        allocate(o.getResult());
        call("cuda::rmsNorm<T>(stream, " + name(o.getInput()) + ", " +
             shape(o.getInput()) + ", " + optional(o.getGamma()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             name(o.getResult()) + ")");
        return success();
      })
      .Case([&](LayerNormGradOp o) {
        allocate(o.getDx());
        std::string dgamma = "nullptr", dbeta = "nullptr";
        if (o.getGamma()) {
          allocate(o.getParamGrads()[0]);
          allocate(o.getParamGrads()[1]);
          dgamma = name(o.getParamGrads()[0]);
          dbeta = name(o.getParamGrads()[1]);
        }
        call("cuda::layerNormGrad<T>(stream, " + name(o.getGrad()) + ", " +
             name(o.getInput()) + ", " + shape(o.getInput()) + ", " +
             optional(o.getGamma()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             name(o.getDx()) + ", " + dgamma + ", " + dbeta + ")");
        return success();
      })
      .Case([&](RmsNormGradOp o) {
        allocate(o.getDx());
        if (o.getDgamma())
          allocate(o.getDgamma());
        call("cuda::rmsNormGrad<T>(stream, " + name(o.getGrad()) + ", " +
             name(o.getInput()) + ", " + shape(o.getInput()) + ", " +
             optional(o.getGamma()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             name(o.getDx()) + ", " + optional(o.getDgamma()) + ")");
        return success();
      })
      .Case([&](SgdUpdateOp o) {
        allocateUpdate(o.getNewParam(), o.getParam());
        if (o.getNewMomentumBuf())
          allocateUpdate(o.getNewMomentumBuf(), o.getMomentumBuf());
        call("cuda::sgdUpdate<T>(stream, " + name(o.getParam()) + ", " +
             name(o.getGrad()) + ", " + optional(o.getMomentumBuf()) + ", " +
             shape(o.getParam()) + ", " +
             doubleLiteral(o.getLrAttr().getValueAsDouble()) + ", " +
             optional(o.getLrScale()) + ", " +
             doubleLiteral(o.getMomentumAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getWeightDecayAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getDampeningAttr().getValueAsDouble()) + ", " +
             boolLiteral(o.getNesterov()) + ", " + name(o.getNewParam()) +
             ", " + optional(o.getNewMomentumBuf()) + ")");
        return success();
      })
      .Case([&](AdamwUpdateOp o) {
        allocateUpdate(o.getNewParam(), o.getParam());
        allocateUpdate(o.getNewExpAvg(), o.getExpAvg());
        allocateUpdate(o.getNewExpAvgSq(), o.getExpAvgSq());
        // The step and the learning-rate factor stay on the device; the
        // kernel reads them.
        call("cuda::adamwUpdate<T, " + elementType(o.getStep()) + ">(stream, " +
             name(o.getParam()) + ", " + name(o.getGrad()) + ", " +
             name(o.getExpAvg()) + ", " + name(o.getExpAvgSq()) + ", " +
             shape(o.getParam()) + ", " + name(o.getStep()) + ", " +
             doubleLiteral(o.getLrAttr().getValueAsDouble()) + ", " +
             optional(o.getLrScale()) + ", " +
             doubleLiteral(o.getBeta1Attr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getBeta2Attr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getWeightDecayAttr().getValueAsDouble()) + ", " +
             name(o.getNewParam()) + ", " + name(o.getNewExpAvg()) + ", " +
             name(o.getNewExpAvgSq()) + ")");
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError()
               << "no CUDA emission for '" << other->getName() << "'";
      });
}

LogicalResult StepEmitter::emit() {
  func::FuncOp func = entry.func;
  // The arena's tables follow the function (the plan needs its whole body).
  arena.printDeclarations(os);
  emitStepComment();
  os << "template <typename T>\n"
     << "Status loom_" << func.getSymName()
     << "(mpi::Communicator &comm, const StepContext &context,\n"
     << "    const std::vector<Buffer<T>> &args, std::vector<Buffer<T>> "
        "&results) {\n";
  emitRankVariables();
  os << "  cuda::Session &session = cuda::Session::get(comm);\n"
     << "  cudaStream_t stream = session.getStream();\n"
     << "  cublasHandle_t blas = session.getBlas();\n"
     << "  nccl::Communicator &nccl = session.getNccl();\n"
     << "  (void)blas;\n"
     << "  (void)context;\n"
     << "  (void)nccl;\n"
     << "  cuda::Workspace ws(stream);\n";
  std::string stage = entry.numStages ? "loomStage" : "0";
  os << "  ws.openArena(" << arena.bytesOf(stage) << ");\n"
     << "  loom::runtime::stepMemory().predictedPeakBytes = "
     << arena.predictedPeakOf(stage) << ";\n";
  emitIncoming();
  for (auto [result, arg] : emit::carriedPairs(entry))
    residentArgs[arg] = result;
  // `stepKey`'s address names this function (each precision's is its
  // own) to the session, which keeps its resident state and constants.
  os << "  // What the session keeps for this step function (its f32 and f64\n"
     << "  // instantiations each have their own) is filed under `&stepKey`.\n"
     << "  static char stepKey;\n"
     << "  (void)stepKey;\n";
  if (!residentArgs.empty())
    os << "  // The model state (carried arguments) stays on the device\n"
       << "  // between steps: the session's copy of the previous step's\n"
       << "  // result when the host buffers hold nothing newer, else an\n"
       << "  // upload. The batch is uploaded every step.\n";
  for (auto [i, arg] : llvm::enumerate(entry.args)) {
    Value value = func.getArgument(i);
    std::string host = "args[" + std::to_string(i) + "]." +
                       (arg.isInteger ? "ints" : "floats");
    std::string upload = "ws.upload(" + host + ")";
    os << "  const " << elementType(value) << " *" << name(value) << " = ";
    auto resident = residentArgs.find(i);
    if (resident == residentArgs.end()) {
      os << upload << ";";
    } else {
      std::string carried =
          "session.carriedArgument(&stepKey, " + std::to_string(i) +
          ", context.carriedAreLastResults, ws,\n      " + host + ", " +
          std::to_string(numElements(value)) + ")";
      // In a pipelined program only the stage that computes the carried
      // result keeps a copy of it.
      if (std::string condition = resultCondition(resident->second);
          !condition.empty())
        os << condition << "\n      ? " << carried << "\n      : " << upload
           << ";";
      else
        os << carried << ";";
    }
    os << " // " << arg.name << "\n";
  }
  if (failed(emitBody()))
    return failure();
  os << "}\n\n";
  arena.printTables(os);
  flush();
  return success();
}

//===----------------------------------------------------------------------===//
// The program around the step functions
//===----------------------------------------------------------------------===//

const char *kStepPrologue = R"cpp(
#include "loom/Runtime/CUDA/Activation.h"
#include "loom/Runtime/CUDA/Attention.h"
#include "loom/Runtime/CUDA/Elementwise.h"
#include "loom/Runtime/CUDA/Embedding.h"
#include "loom/Runtime/CUDA/Loss.h"
#include "loom/Runtime/CUDA/LossScaling.h"
#include "loom/Runtime/CUDA/Matmul.h"
#include "loom/Runtime/CUDA/Normalization.h"
#include "loom/Runtime/CUDA/Optimizer.h"
#include "loom/Runtime/CUDA/Random.h"
#include "loom/Runtime/CUDA/Reduction.h"
#include "loom/Runtime/CUDA/Rope.h"
#include "loom/Runtime/CUDA/Session.h"
#include "loom/Runtime/CUDA/Shape.h"
#include "loom/Runtime/CUDA/Softmax.h"
#include "loom/Runtime/CUDA/Workspace.h"
#include "loom/Runtime/Harness/Harness.h"
#include "loom/Runtime/NCCL/Communicator.h"
#include "loom/Runtime/NCCL/Incoming.h"
#include "loom/Runtime/Support/StepMemory.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

using namespace loom::runtime::harness;
namespace cuda = loom::runtime::cuda;
namespace io = loom::runtime::io;
namespace mpi = loom::runtime::mpi;
namespace nccl = loom::runtime::nccl;

/// Returns a failed collective's or kernel's Status, naming the rank
/// (`loomRank`, the step's) and the op.
#define LOOM_CHECK(call, what)                                                 \
  do {                                                                         \
    Status status_ = (call);                                                   \
    if (!status_.ok())                                                         \
      return Status::failure("rank " + std::to_string(loomRank) + ": " +      \
                             std::string(what) + ": " + status_.message());   \
  } while (false)

namespace {

)cpp";

std::string mainSource() {
  return R"cpp(//===- main.cpp - Emitted by loom-translate --emit-cuda -------------------===//
//
// Runs the emitted training step on this MPI rank's GPU (the node-local rank
// picks the device). Training, with the host trainer's flags and loop
// (loom/Runtime/Trainer/Trainer.h; any of --data, --resume, --ckpt-dir,
// --init-only, --print-layouts):
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

// Defined in train_step.cu.
const harness::ProgramSpec &loomProgramSpec();
harness::StepFn<float> loomStepF32();
harness::StepFn<double> loomStepF64();
harness::StepFn<float> loomEvalStepF32();
harness::StepFn<double> loomEvalStepF64();

int main(int argc, char **argv) {
  // The CUDA steps have the host steps' signature (host buffers in and out),
  // so the trainer and the harness drive them exactly as they drive the
  // host program's.
  if (trainer::isTrainingCommandLine(argc, argv))
    return trainer::runTrainer(argc, argv, loomProgramSpec(), loomStepF32(),
                               loomStepF64(), loomEvalStepF32(),
                               loomEvalStepF64());
  return harness::runMain(argc, argv, loomProgramSpec(), loomStepF32(),
                          loomStepF64());
}
)cpp";
}

std::string cmakeSource(const CUDAEmitOptions &options) {
  std::string text =
      R"cmake(#===- CMakeLists.txt - Emitted by loom-translate --emit-cuda ---------------===#
#
# Builds the CUDA program (one for every rank) against Loom's runtime
# libraries (a Loom build configured with LOOM_ENABLE_CUDA):
#   cmake -G Ninja -S . -B build -DLOOM_SOURCE_DIR=<loom checkout> \
#         -DLOOM_BUILD_DIR=<loom build tree> [-DCMAKE_CUDA_ARCHITECTURES=90a]
#   cmake --build build
# With -DLOOM_CUDA_EMULATOR=ON the same sources build as plain C++ against
# Loom's CUDA emulator (a Loom build with LOOM_ENABLE_CUDA_EMULATOR): no
# nvcc, and the program runs on the CPU.
#
#===----------------------------------------------------------------------===#

cmake_minimum_required(VERSION 3.20)
# A sanitizer build of Loom names the compiler its runtime was built with:
# a program linking it needs that compiler's sanitizer runtime. Otherwise
# CMake picks the compiler.
include(${LOOM_BUILD_DIR}/LoomEmittedCompiler.cmake OPTIONAL)
option(LOOM_CUDA_EMULATOR "Build for Loom's CUDA emulator (runs on the CPU)"
       OFF)
if(LOOM_CUDA_EMULATOR)
  project(loom_emitted_cuda_step C CXX)
else()
  # nvcc rejects clang-22 as its host compiler; g++ compiles the host side.
  if(NOT CMAKE_CUDA_HOST_COMPILER)
    find_program(LOOM_CUDA_HOST_CXX NAMES g++ REQUIRED)
    set(CMAKE_CUDA_HOST_COMPILER ${LOOM_CUDA_HOST_CXX} CACHE FILEPATH "")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "@ARCHITECTURES@")
  endif()
  project(loom_emitted_cuda_step C CXX CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
endif()
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  # The step is host code that launches the runtime's kernels: -O1 compiles
  # it quickly; the kernels themselves are built optimized in Loom's tree.
  set(CMAKE_BUILD_TYPE Release)
  set(CMAKE_CXX_FLAGS_RELEASE "-O1")
  set(CMAKE_CUDA_FLAGS_RELEASE "-O1")
endif()

set(LOOM_SOURCE_DIR "" CACHE PATH "Loom's source tree (for its headers)")
set(LOOM_BUILD_DIR "" CACHE PATH "Loom's build tree (for its libraries)")
if(NOT LOOM_SOURCE_DIR OR NOT LOOM_BUILD_DIR)
  message(FATAL_ERROR "set LOOM_SOURCE_DIR and LOOM_BUILD_DIR")
endif()
# The flags Loom's own build compiled its runtime with that a program
# linking it must share (a sanitizer build's -fsanitize=...; none otherwise).
include(${LOOM_BUILD_DIR}/LoomEmittedFlags.cmake OPTIONAL)

find_package(MPI REQUIRED COMPONENTS C)
find_library(LOOM_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
if(LOOM_CUDA_EMULATOR)
  find_package(Boost 1.74 CONFIG REQUIRED COMPONENTS context)
  set(emulated Emulated)
  set(loom_emulator_lib LoomCUDAEmulator)
else()
  find_package(CUDAToolkit REQUIRED)
  find_library(LOOM_NCCL_LIBRARY nccl REQUIRED
               HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_DIR}/../lib
                     /usr/local/cuda/lib /usr/local/cuda/lib64)
  find_path(LOOM_NCCL_INCLUDE_DIR nccl.h REQUIRED
            HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
endif()
# Static libraries, users before what they use.
set(loom_runtime_libs)
foreach(lib LoomRuntimeTrainer LoomRuntimeCUDASession${emulated}
            LoomRuntimeNCCL${emulated} LoomRuntimeHarness
            LoomRuntimeCUDA${emulated} LoomRuntimeHost LoomRuntimeIO LoomRuntimeMPI
            LoomRuntimeLayout LoomLayout LoomRuntimeSupport LoomSupport
            ${loom_emulator_lib})
  find_library(LOOM_${lib}_LIBRARY NAMES ${lib}
    PATHS ${LOOM_BUILD_DIR}/lib ${LOOM_BUILD_DIR}/lib/Runtime
          ${LOOM_BUILD_DIR}/lib/Analysis/Layout ${LOOM_BUILD_DIR}/lib/Support
          ${LOOM_BUILD_DIR}/lib/Runtime/CUDAEmulator
    NO_DEFAULT_PATH REQUIRED)
  list(APPEND loom_runtime_libs ${LOOM_${lib}_LIBRARY})
endforeach()

# The precisions the step functions are compiled for (`--dtype`); leaving
# one out halves the compile time.
set(LOOM_STEP_DTYPES "f32;f64" CACHE STRING "f32, f64 or both")

if(LOOM_CUDA_EMULATOR)
  # train_step.cu as C++, behind the emulator's cuda_runtime.h as nvcc
  # would put the toolkit's.
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/train_step_emulated.cpp
       CONTENT "#include <cuda_runtime.h>
#include \"${CMAKE_CURRENT_SOURCE_DIR}/train_step.cu\"
")
  add_executable(train_step ${CMAKE_CURRENT_BINARY_DIR}/train_step_emulated.cpp
                            main.cpp)
  target_include_directories(train_step PRIVATE
    ${LOOM_SOURCE_DIR}/lib/Runtime/CUDAEmulator/include)
  target_compile_definitions(train_step PRIVATE LOOM_CUDA_EMULATOR=1)
else()
  add_executable(train_step train_step.cu main.cpp)
  target_include_directories(train_step PRIVATE ${LOOM_NCCL_INCLUDE_DIR})
endif()
target_include_directories(train_step PRIVATE ${LOOM_SOURCE_DIR}/include)
foreach(dtype f32 f64)
  if(NOT dtype IN_LIST LOOM_STEP_DTYPES)
    string(TOUPPER ${dtype} upper)
    target_compile_definitions(train_step PRIVATE LOOM_STEP_NO_${upper}=1)
  endif()
endforeach()
target_compile_definitions(train_step PRIVATE OMPI_SKIP_MPICXX=1
                                              MPICH_SKIP_MPICXX=1)
target_link_libraries(train_step PRIVATE ${loom_runtime_libs}
                      ${LOOM_OPENBLAS_LIBRARY} MPI::MPI_C)
if(LOOM_CUDA_EMULATOR)
  target_link_libraries(train_step PRIVATE Boost::context)
else()
  target_link_libraries(train_step PRIVATE ${LOOM_NCCL_LIBRARY} CUDA::cublas
                                           CUDA::cudart)
endif()
)cmake";
  size_t at = text.find("@ARCHITECTURES@");
  text.replace(at, std::string("@ARCHITECTURES@").size(),
               options.architectures);
  return text;
}

} // namespace

/// The peer of a send/recv on `rank`: the rank at `coordinate` on `axis`
/// (-1 when the axis is not the mesh's; the emission reports that).
static int64_t peerOf(const EntryInfo &entry, int64_t rank, StringRef axis,
                      int64_t coordinate) {
  std::optional<size_t> index = entry.mesh->findAxis(axis.str());
  if (!index)
    return -1;
  std::vector<int64_t> coordinates = entry.mesh->getCoordinates(rank);
  coordinates[*index] = coordinate;
  return entry.mesh->getRank(coordinates);
}

/// The element count and whether a send's or recv's tensor holds integers.
static std::pair<int64_t, bool> payloadOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return {type.getNumElements(), isIntegerStorage(type)};
}

/// The ranks whose coordinates are 0 on every axis that neither carries a
/// send/recv nor is the pipeline axis. What a rank sends and receives
/// depends only on its coordinates on those axes (its stage, and peers that
/// differ from it on one such axis), and a sender and its receiver share
/// all other coordinates; so every pairing in the mesh is a copy of a
/// pairing among these ranks, and checking them checks all. They number
/// the product of those axes' sizes (the stages, for a pipeline), not the
/// mesh's rank count.
static std::vector<int64_t> pointToPointRanks(const EntryInfo &entry) {
  std::set<size_t> axes;
  if (entry.numStages)
    axes.insert(entry.pipelineAxisIndex);
  for (Operation &op : func::FuncOp(entry.func).getBody().front()) {
    std::optional<size_t> axis;
    if (auto send = dyn_cast<dist::SendOp>(op))
      axis = entry.mesh->findAxis(send.getAxis().str());
    else if (auto recv = dyn_cast<dist::RecvOp>(op))
      axis = entry.mesh->findAxis(recv.getAxis().str());
    if (axis)
      axes.insert(*axis);
  }
  std::vector<int64_t> ranks;
  std::vector<int64_t> coordinates(entry.mesh->getNumAxes(), 0);
  // Counts through the chosen axes' coordinates, the last fastest.
  while (true) {
    ranks.push_back(entry.mesh->getRank(coordinates));
    auto axis = axes.rbegin();
    for (; axis != axes.rend(); ++axis) {
      if (++coordinates[*axis] < entry.mesh->getAxis(*axis).size)
        break;
      coordinates[*axis] = 0;
    }
    if (axis == axes.rend())
      return ranks;
  }
}

/// NCCL has no tags: a recv takes the peer's next send. Pairs, for every
/// two ranks (a, b) among pointToPointRanks, each recv of b from a with the
/// first unpaired send of a to b that has its tag (as MPI matches), and
/// checks that the pair agrees on the payload and that nothing is left
/// unpaired (on a GPU either side would wait forever). Each rank's table of
/// the messages it receives is computed at run time
/// (nccl::incomingMessages).
static LogicalResult matchPointToPoint(const EntryInfo &entry) {
  if (!entry.mesh)
    return success();
  using Transfer = std::pair<int64_t, Operation *>; // (tag, op)
  std::map<std::pair<int64_t, int64_t>, std::vector<Transfer>> sends, recvs;
  for (int64_t r : pointToPointRanks(entry)) {
    int64_t stage = entry.stageOf(r);
    for (Operation &op : func::FuncOp(entry.func).getBody().front()) {
      auto tagged = op.getAttrOfType<IntegerAttr>(emit::kStageAttrName);
      if (entry.numStages && tagged && tagged.getInt() != stage)
        continue;
      if (auto send = dyn_cast<dist::SendOp>(op)) {
        int64_t to = peerOf(entry, r, send.getAxis(),
                            static_cast<int64_t>(send.getTo()));
        if (to >= 0 && to != r)
          sends[{r, to}].push_back({send.getTag(), &op});
      } else if (auto recv = dyn_cast<dist::RecvOp>(op)) {
        int64_t from = peerOf(entry, r, recv.getAxis(),
                              static_cast<int64_t>(recv.getFrom()));
        if (from >= 0 && from != r)
          recvs[{from, r}].push_back({recv.getTag(), &op});
      }
    }
  }
  for (const auto &[pair, sent] : sends) {
    auto [from, to] = pair;
    const std::vector<Transfer> &received = recvs[pair];
    std::vector<bool> paired(sent.size(), false);
    for (const Transfer &r : received) {
      size_t k = 0;
      while (k < sent.size() && (paired[k] || sent[k].first != r.first))
        ++k;
      if (k == sent.size())
        return r.second->emitOpError()
               << "on rank " << to << " receives tag " << r.first
               << " from rank " << from << ", but rank " << from
               << " sends no (further) message with that tag to rank " << to
               << ": the CUDA program would wait forever";
      paired[k] = true;
      auto [sentCount, sentInteger] = payloadOf(sent[k].second->getOperand(0));
      auto [count, integer] = payloadOf(r.second->getResult(0));
      if (sentCount != count || sentInteger != integer) {
        InFlightDiagnostic diag =
            r.second->emitOpError()
            << "on rank " << to << " receives tag " << r.first << " from rank "
            << from << " as " << count << (integer ? " integer" : " float")
            << " elements, but rank " << from << " sends " << sentCount
            << (sentInteger ? " integer" : " float") << " elements";
        diag.attachNote(sent[k].second->getLoc()) << "the send";
        return failure();
      }
    }
    for (size_t k = 0; k < sent.size(); ++k) {
      if (!paired[k])
        return sent[k].second->emitOpError()
               << "on rank " << from << " sends tag " << sent[k].first
               << " to rank " << to << ", which no dist.recv on rank " << to
               << " takes: NCCL would block the sender forever";
    }
  }
  // Receives from a rank that sends this one nothing at all.
  for (const auto &[pair, received] : recvs)
    if (!sends.count(pair) && !received.empty())
      return received.front().second->emitOpError()
             << "on rank " << pair.second << " receives tag "
             << received.front().first << " from rank " << pair.first
             << ", but rank " << pair.first << " sends no message to rank "
             << pair.second << ": the CUDA program would wait forever";
  return success();
}

LogicalResult emitCUDAProgram(ModuleOp module, const CUDAEmitOptions &options,
                              CUDAProgramFiles &files) {
  EntryInfo entry;
  if (failed(emit::readEntry(module, options.entry, kCUDA, entry)))
    return failure();
  // Interleaved 1F1B sends activations around the ring V times per
  // micro-batch; under NCCL's rendezvous sends its order deadlocks on the
  // CUDA emulator (both stages block in a send), so it is refused here
  // rather than emitted to hang (docs/Pipeline.md, "Limits").
  if (auto pipeline =
          module->getAttrOfType<dist::PipelineAttr>(kPipelineAttrName);
      pipeline && pipeline.getVirtualStages() > 1)
    return module.emitError()
           << "CUDA emission: interleaved-1f1b pipelines ("
           << pipeline.getVirtualStages()
           << " virtual stages) are not supported by the CUDA emitter yet: "
              "NCCL's rendezvous sends deadlock in that order; emit host "
              "code, or use --schedule 1f1b";
  if (failed(matchPointToPoint(entry)))
    return failure();

  std::string step;
  llvm::raw_string_ostream os(step);
  os << "//===- train_step.cu - Emitted by loom-translate --emit-cuda "
        "--------------===//\n"
     << "//\n"
     << "// CUDA code of @" << entry.func.getSymName();
  if (entry.mesh)
    os << " over mesh @" << entry.meshName << " " << entry.mesh->toString()
       << " (" << entry.numRanks << " ranks)";
  os << ": one step function that\n"
     << "// every rank runs with its mesh coordinates, each op as the CUDA "
        "kernel,\n"
     << "// cuBLAS GEMM or NCCL collective of the runtime\n"
     << "// (loom/Runtime/CUDA, loom/Runtime/NCCL), after the op in a "
        "comment.\n"
     << "// Generated; do not edit.\n"
     << "//\n"
     << "//===------------------------------------------------------------"
        "----------===//\n"
     << kStepPrologue;

  AsmState asmState(entry.func, OpPrintingFlags().enableDebugInfo(
                                    true, /*prettyForm=*/false));
  StepEmitter stepEmitter(entry, asmState, os);
  if (failed(stepEmitter.emit()))
    return failure();
  // The forward-only evaluation step beside it (the trainer's --eval-data),
  // with the same arguments.
  FailureOr<func::FuncOp> eval = emit::findEvalEntry(entry.func, kCUDA);
  if (failed(eval))
    return failure();
  if (*eval) {
    EntryInfo evalEntry;
    if (failed(emit::readEntry(module, eval->getSymName(), kCUDA, evalEntry)))
      return failure();
    if (failed(matchPointToPoint(evalEntry)))
      return failure();
    AsmState evalAsmState(
        *eval, OpPrintingFlags().enableDebugInfo(true, /*prettyForm=*/false));
    StepEmitter evalEmitter(evalEntry, evalAsmState, os);
    if (failed(evalEmitter.emit()))
      return failure();
  }
  os << "} // namespace\n\n";
  if (failed(emit::emitProgramSpec(entry, os)))
    return failure();
  emit::emitEvalAccessors(*eval, os);

  files.clear();
  files.emplace_back("train_step.cu", std::move(step));
  files.emplace_back("main.cpp", mainSource());
  files.emplace_back("CMakeLists.txt", cmakeSource(options));
  return success();
}

} // namespace mlir::loom

//===- HostEmitter.cpp - One SPMD C++ program from a partitioned step -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Find the entry and its mesh; read every argument's and result's layout
//    and global shape (emit::readEntry, shared with --emit-cuda in
//    Target/Common/EmitterSupport.h).
// 2. Walk the entry's single block in order and print one C++ statement
//    group per op into the one step function every rank runs (StepEmitter):
//    a comment with the op, the result buffers, then the host kernel or
//    Communicator call the interpreter makes for that op. Scalars
//    (`dist.axis_index`, index constants and arithmetic), send/recv peers
//    and dropout's block offsets are computed at run time from the rank's
//    mesh coordinates (emit::StepEmitterBase).
//    In a pipelined program (docs/Pipeline.md) each stage's ops run in an
//    `if (loomStage == k)` region, each send/recv passes its `tag` to the
//    communicator (MPI matches a receive by peer and tag), and a rank
//    leaves other stages' results untouched.
//    Buffers follow the static memory plan (docs/Codegen.md, "Memory";
//    emit::StepArena, shared with --emit-cuda): every value the step
//    computes is a pointer into the process's arena (host::Workspace) at
//    its planned offset, a returned value is computed in the caller's
//    result buffer, and an optimizer update that is the last reader of the
//    state it updates writes into the argument's buffer, which the return
//    hands to the result. The plan's tables follow the step function.
// 3. Print the ProgramSpec the harness needs (layouts; the harness computes
//    each rank's blocks), the step accessors, main.cpp and CMakeLists.txt.
// Nothing printed depends on the rank count but the mesh's axis sizes.
//
// Any op without a pattern stops the emission with an error at the op; the
// translation then writes nothing.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Host/HostEmitter.h"
#include "loom/Analysis/Layout/Layout.h"
#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/IR/GradientBuckets.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/EntrySignature.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Target/Common/EmitterSupport.h"
#include "loom/Target/Common/StepArena.h"

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
using emit::boolLiteral;
using emit::doubleLiteral;
using emit::EntryInfo;
using emit::isIntegerStorage;
using emit::shapeLiteral;
using emit::stringLiteral;
using emit::TensorInfo;
using Shape = std::vector<int64_t>;

namespace {

/// `scale` as the host kernels take it (defined with the op emitters).
std::string optionalScale(std::optional<llvm::APFloat> scale);

const emit::EmitterName kHost = {"host", "--emit-host-entry"};

LogicalResult checkTensorType(Operation *op, Type type, const Twine &what) {
  return emit::checkTensorType(op, type, what, kHost);
}

//===----------------------------------------------------------------------===//
// The step function
//===----------------------------------------------------------------------===//

/// Prints the step function every rank runs.
class StepEmitter : public emit::StepEmitterBase {
public:
  StepEmitter(const EntryInfo &entry, AsmState &asmState, raw_ostream &out)
      : StepEmitterBase(entry, asmState, out, kHost), arena(entry) {}

  LogicalResult emit();

private:
  /// `T` or `int64_t`: how the elements of `value` are held.
  std::string elementType(Value value) {
    return isIntegerStorage(value.getType()) ? "int64_t" : "T";
  }
  /// Every tensor is a pointer to its elements (in the arena, an argument,
  /// a constant or the caller's result buffer).
  std::string data(Value value) { return name(value); }
  /// `results[i].floats` or `.ints`: the caller's buffer of result `i`.
  std::string resultBuffer(unsigned index, Value value) {
    return "results[" + std::to_string(index) + "]." +
           (isIntegerStorage(value.getType()) ? "ints" : "floats");
  }
  /// An optimizer update's learning rate: the compiled one, times the
  /// step's `lr_scale` when the update has one (the same f64 product as the
  /// interpreter, so a factor of 1 keeps the compiled rate's bits).
  std::string learningRate(FloatAttr lr, Value scale) {
    std::string base = doubleLiteral(lr.getValueAsDouble());
    if (!scale)
      return base;
    return "(" + base + " * static_cast<double>(" + name(scale) + "[0]))";
  }
  std::string optionalData(Value value) {
    return value ? data(value) : "nullptr";
  }
  /// Declares the zero-filled buffer of an op's result (in a stage's
  /// region: declared null before it, placed where the stage runs the op):
  /// the buffer of the argument the value is carried into when that
  /// argument is dead (emit::StepArena::freeCarriedArgument), else the
  /// caller's result buffer when the step returns the value and every rank
  /// that computes it writes that result (directResult), else its offset in
  /// the step's arena (planned after the body).
  void allocate(Value result) {
    std::string type = elementType(result);
    std::string count = std::to_string(numElements(result));
    std::string place;
    if (std::optional<unsigned> arg =
            arena.freeCarriedArgument(currentOp, result)) {
      // The return hands the argument's buffer to the result (emitReturn).
      Value argument = func::FuncOp(entry.func).getArgument(*arg);
      arena.alias(result, argument);
      inPlace[result] = *arg;
      os << "  // In the place of " << name(argument)
         << ", which no op reads from here on.\n";
      place = "ws.reuse(" + name(argument) + ", " + count + ")";
    } else if (std::optional<unsigned> index = directResult(result)) {
      direct[result] = *index;
      place = "ws.result(" + resultBuffer(*index, result) + ", " + count + ")";
    } else {
      place = "ws.at<" + type + ">(" + arena.add(result, currentOp) + ", " +
              count + ")";
    }
    if (inStageRegion()) {
      declare(type + " *" + name(result) + " = nullptr;");
      os << "  " << name(result) << " = " << place << ";\n";
      return;
    }
    os << "  " << type << " *" << name(result) << " = " << place << ";\n";
  }
  /// The first index at which the entry returns `value` when the ranks that
  /// compute it are exactly the ranks that write that result (the same
  /// stage, or every rank).
  std::optional<unsigned> directResult(Value value) {
    Operation *ret = func::FuncOp(entry.func).getBody().front().getTerminator();
    for (auto [i, returned] : llvm::enumerate(ret->getOperands()))
      if (returned == value)
        return entry.results[i].stage == entry.stageOfOp(currentOp)
                   ? std::optional<unsigned>(i)
                   : std::nullopt;
    return std::nullopt;
  }
  /// Declares an optimizer update's result: the buffer of the argument it
  /// updates (`operand`) when the update is that argument's last reader
  /// and the result is carried into it (emit::StepArena::updatesInPlace),
  /// else a buffer of its own (allocate). The return then hands the
  /// argument's buffer to the result (emitReturn), so the step holds one
  /// copy of the model state and copies none of it.
  void allocateUpdate(Value result, Value operand) {
    if (!arena.updatesInPlace(currentOp, result, operand)) {
      allocate(result);
      return;
    }
    arena.alias(result, operand);
    inPlace[result] = cast<BlockArgument>(operand).getArgNumber();
    std::string type = elementType(result);
    std::string statement = name(result) + " = const_cast<" + type + " *>(" +
                            name(operand) + ");";
    os << "  // In place: the update is the last reader of " << name(operand)
       << ".\n";
    if (inStageRegion()) {
      declare(type + " *" + name(result) + " = nullptr;");
      os << "  " << statement << "\n";
      return;
    }
    os << "  " << type << " *" << statement << "\n";
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
    arena.alias(result, operand);
    std::string type = "const " + elementType(result) + " *";
    if (inStageRegion()) {
      declare(type + name(result) + " = nullptr;");
      os << "  " << name(result) << " = " << name(operand) << ";\n";
      return;
    }
    os << "  " << type << name(result) << " = " << name(operand) << ";\n";
  }

  LogicalResult emitTargetOp(Operation *op) override;
  LogicalResult emitLoomOp(Operation *op);
  LogicalResult emitDistOp(Operation *op);
  LogicalResult emitConstant(arith::ConstantOp op);
  LogicalResult emitReturn(func::ReturnOp op);

  /// Overlap (docs/Codegen.md, "Overlap"): a bucketed gradient reduction
  /// (dist-bucket-gradient-reductions) starts without blocking where it
  /// stands; returns false for any other all-reduce.
  bool emitBucketStart(dist::AllReduceOp reduce);
  /// Before the op that waits for buckets: waits for their reductions.
  void emitBucketWaits(Operation *op);
  /// After each op while reductions are in flight: lets MPI move them.
  void emitProgress();
  /// The step's gradient buckets, by number.
  std::map<int64_t, dist::GradientBucket> buckets;
  /// Bucketed reductions started and not yet waited at this point.
  int64_t requestsInFlight = 0;

  /// The step's static memory plan.
  emit::StepArena arena;
  /// The op being emitted: allocate() takes its stage.
  Operation *currentOp = nullptr;
  /// Values computed in the caller's result buffer (allocate): value ->
  /// result index.
  llvm::DenseMap<Value, unsigned> direct;
  /// Updates written into their argument's buffer: value -> argument index.
  llvm::DenseMap<Value, unsigned> inPlace;
};

LogicalResult StepEmitter::emitConstant(arith::ConstantOp op) {
  Type type = op.getType();
  Attribute value = op.getValue();
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
  std::string held = elementType(result);
  std::string text =
      "const std::vector<" + held + "> " + name(result) + "_values";
  if (dense.isSplat())
    text += "(" + std::to_string(numElements(result)) + ", " +
            elements.front() + ");";
  else
    text += " = {" + llvm::join(elements, ", ") + "};";
  declare(text);
  declare("const " + held + " *" + name(result) + " = ws.constant(" +
          name(result) + "_values);");
  return success();
}

LogicalResult StepEmitter::emitDistOp(Operation *op) {
  auto unary = [&](Operation *collective, const std::string &method,
                   const std::string &attrs) {
    Value in = collective->getOperand(0), out = collective->getResult(0);
    groupComment(collective);
    allocate(out);
    checked(collective, "comm." + method + "(" + data(in) + ", " + shape(in) +
                            ", " + axes(collective) + ", " + attrs + data(out) +
                            ")");
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
        if (emitBucketStart(reduce))
          return success();
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
      .Case([&](dist::RingAttentionOp ring) {
        groupComment(ring);
        allocate(ring.getResult());
        allocate(ring.getLse());
        checked(ring,
                "mpi::ringAttention<T>(comm, " + axes(ring) + ", " +
                    data(ring.getQuery()) + ", " + shape(ring.getQuery()) +
                    ", " + data(ring.getKey()) + ", " + shape(ring.getKey()) +
                    ", " + data(ring.getValue()) + ", " +
                    shape(ring.getValue()) + ", " +
                    boolLiteral(ring.getCausal()) + ", " +
                    optionalScale(ring.getScale()) + ", " +
                    data(ring.getResult()) + ", " + data(ring.getLse()) + ")");
        return success();
      })
      .Case([&](dist::RingAttentionGradOp ring) {
        groupComment(ring);
        allocate(ring.getDquery());
        allocate(ring.getDkey());
        allocate(ring.getDvalue());
        checked(ring,
                "mpi::ringAttentionGrad<T>(comm, " + axes(ring) + ", " +
                    data(ring.getQuery()) + ", " + shape(ring.getQuery()) +
                    ", " + data(ring.getKey()) + ", " + shape(ring.getKey()) +
                    ", " + data(ring.getValue()) + ", " +
                    shape(ring.getValue()) + ", " + data(ring.getOut()) + ", " +
                    data(ring.getDout()) + ", " + data(ring.getLse()) + ", " +
                    boolLiteral(ring.getCausal()) + ", " +
                    optionalScale(ring.getScale()) + ", " +
                    data(ring.getDquery()) + ", " + data(ring.getDkey()) +
                    ", " + data(ring.getDvalue()) + ")");
        return success();
      })
      .Case([&](dist::BroadcastOp broadcast) {
        unary(broadcast, "broadcast",
              std::to_string(broadcast.getRoot()) + ", ");
        return success();
      })
      .Case([&](dist::SendOp send) -> LogicalResult {
        FailureOr<std::string> to =
            peer(send, send.getAxis(), static_cast<int64_t>(send.getTo()));
        if (failed(to))
          return failure();
        // Every rank runs one instruction stream: a send to oneself does
        // nothing, as in the interpreter.
        os << "  if (const int64_t to = " << *to << "; to != loomRank) {\n  ";
        checked(send, "comm.send(" + data(send.getInput()) + ", " +
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
        checked(recv, "comm.recv(" + data(recv.getResult()) + ", " +
                          shape(recv.getResult()) + ", from, " +
                          std::to_string(recv.getTag()) + ")");
        os << "  }\n";
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

LogicalResult StepEmitter::emitLoomOp(Operation *op) {
  // Every loom value is a tensor the runtime holds.
  for (Value v : op->getOperands())
    if (!isScalar(v) && failed(checkTensorType(op, v.getType(), "an operand")))
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
          FailureOr<std::string> first = scalar(o, offset);
          if (failed(first))
            return failure();
          checked(o, "host::embeddingBlock<T>(" + common + ", " + *first +
                         ", " + data(o.getResult()) + ")");
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
          FailureOr<std::string> first = scalar(o, offset);
          if (failed(first))
            return failure();
          checked(o, "host::embeddingGradBlock<T>(" + common + ", " + *first +
                         ", " + std::to_string(rows) + ", " +
                         data(o.getResult()) + ")");
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
      .Case([&](NonfiniteCountOp o) {
        allocate(o.getResult());
        call("host::nonfiniteCount<T>(" + data(o.getInput()) + ", " +
             std::to_string(numElements(o.getInput())) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](SelectOp o) {
        allocate(o.getResult());
        call("host::selectWhole<T, " + elementType(o.getResult()) + ">(" +
             name(o.getCondition()) + "[0], " + data(o.getOnTrue()) + ", " +
             data(o.getOnFalse()) + ", " +
             std::to_string(numElements(o.getResult())) + ", " +
             data(o.getResult()) + ")");
        return success();
      })
      .Case([&](UpdateLossScaleOp o) {
        allocate(o.getNewScale());
        allocate(o.getNewGrowthTracker());
        call("host::updateLossScale<T>(" + name(o.getScale()) + "[0], " +
             name(o.getGrowthTracker()) + "[0], " + name(o.getNonfinite()) +
             "[0], " + doubleLiteral(o.getGrowthFactor().convertToDouble()) +
             ", " + doubleLiteral(o.getBackoffFactor().convertToDouble()) +
             ", " + std::to_string(o.getGrowthInterval()) + ", " +
             data(o.getNewScale()) + ", " + data(o.getNewGrowthTracker()) +
             ")");
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
        allocateUpdate(o.getNewParam(), o.getParam());
        if (o.getNewMomentumBuf())
          allocateUpdate(o.getNewMomentumBuf(), o.getMomentumBuf());
        call("host::sgdUpdate<T>(" + data(o.getParam()) + ", " +
             data(o.getGrad()) + ", " + optionalData(o.getMomentumBuf()) +
             ", " + shape(o.getParam()) + ", " +
             learningRate(o.getLrAttr(), o.getLrScale()) + ", " +
             doubleLiteral(o.getMomentumAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getWeightDecayAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getDampeningAttr().getValueAsDouble()) + ", " +
             boolLiteral(o.getNesterov()) + ", " + data(o.getNewParam()) +
             ", " + optionalData(o.getNewMomentumBuf()) + ")");
        return success();
      })
      .Case([&](AdamwUpdateOp o) {
        allocateUpdate(o.getNewParam(), o.getParam());
        allocateUpdate(o.getNewExpAvg(), o.getExpAvg());
        allocateUpdate(o.getNewExpAvgSq(), o.getExpAvgSq());
        call("host::adamwUpdate<T>(" + data(o.getParam()) + ", " +
             data(o.getGrad()) + ", " + data(o.getExpAvg()) + ", " +
             data(o.getExpAvgSq()) + ", " + shape(o.getParam()) + ", " +
             name(o.getStep()) + "[0], " +
             learningRate(o.getLrAttr(), o.getLrScale()) + ", " +
             doubleLiteral(o.getBeta1Attr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getBeta2Attr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getEpsAttr().getValueAsDouble()) + ", " +
             doubleLiteral(o.getWeightDecayAttr().getValueAsDouble()) + ", " +
             data(o.getNewParam()) + ", " + data(o.getNewExpAvg()) + ", " +
             data(o.getNewExpAvgSq()) + ")");
        return success();
      })
      .Case([&](DropoutOp o) -> LogicalResult {
        Shape block = shapeOf(o.getInput()), global;
        FailureOr<std::string> offset = globalBlock(o, global);
        if (failed(offset))
          return failure();
        allocate(o.getResult());
        call("host::dropout<T>(" + data(o.getInput()) + ", " +
             shapeLiteral(global) + ", " + *offset + ", " +
             shapeLiteral(block) + ", " +
             doubleLiteral(o.getRateAttr().getValueAsDouble()) + ", " +
             std::to_string(o.getSeedAttr().getInt()) +
             ", context.seed, context.step, " + data(o.getResult()) + ")");
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError()
               << "no host emission for '" << other->getName() << "'";
      });
}

LogicalResult StepEmitter::emitReturn(func::ReturnOp ret) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto it = direct.find(v);
    if (it != direct.end() && it->second == i)
      continue; // Computed in results[i].
    // Computed on one stage: on the others the caller's buffer stays as
    // it was.
    os << "  ";
    if (std::string condition = resultCondition(i); !condition.empty())
      os << "if (" << condition << ") ";
    auto updated = inPlace.find(v);
    if (updated != inPlace.end() &&
        arena.carriedResultOf(updated->second) == static_cast<size_t>(i)) {
      // The argument's buffer holds the update: it becomes the result, and
      // the argument takes the result's former buffer, which the caller
      // replaces with this result before the next step (harness::StepFn).
      os << "std::swap(" << resultBuffer(i, v) << ", const_cast<Buffer<T> &>(args["
         << updated->second << "])."
         << (isIntegerStorage(v.getType()) ? "ints" : "floats") << ");\n";
      continue;
    }
    os << resultBuffer(i, v) << ".assign(" << name(v) << ", " << name(v)
       << " + " << numElements(v) << ");\n";
  }
  // A bucket started and never waited is an error, not a leak.
  if (!buckets.empty())
    checked(ret, "comm.checkAllWaited()");
  os << "  return Status::success();\n";
  return success();
}

bool StepEmitter::emitBucketStart(dist::AllReduceOp reduce) {
  std::optional<int64_t> bucket = dist::getBucket(reduce);
  if (!bucket)
    return false;
  Value in = reduce.getInput(), out = reduce.getResult();
  groupComment(reduce);
  allocate(out);
  std::string request = name(out) + "_request";
  declare("mpi::Communicator::Request " + request + " = -1;");
  os << "  // Gradient bucket " << *bucket
     << ": its last gradient is ready; reduce while the backward goes on.\n";
  checked(reduce, "comm.startAllReduce(" + data(in) + ", " + shape(in) + ", " +
                      axes(reduce) + ", mpi::ReduceKind::Sum, " + data(out) +
                      ", " + request + ")");
  ++requestsInFlight;
  return true;
}

void StepEmitter::emitBucketWaits(Operation *op) {
  for (int64_t bucket : dist::getWaitedBuckets(op)) {
    os << "  // Gradient bucket " << bucket << " is read from here on.\n";
    for (dist::AllReduceOp reduce : buckets[bucket].reductions) {
      checked(reduce, "comm.wait(" + name(reduce.getResult()) + "_request)");
      --requestsInFlight;
    }
  }
}

void StepEmitter::emitProgress() {
  if (requestsInFlight > 0)
    os << "  LOOM_CHECK(comm.progress(), \"gradient buckets\");\n";
}

LogicalResult StepEmitter::emitTargetOp(Operation *op) {
  currentOp = op;
  emitBucketWaits(op);
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return emitReturn(ret);
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return emitConstant(constant);
  StringRef dialect = op->getName().getDialectNamespace();
  if (dialect == "dist" || dialect == "loom") {
    if (failed(dialect == "dist" ? emitDistOp(op) : emitLoomOp(op)))
      return failure();
    // As the interpreter: a bf16 or f16 result is computed in T, then
    // rounded once to its own type.
    for (Value result : op->getResults())
      if (interp::isRoundedToLowPrecision(result))
        call("host::roundToPrecision<T>(" + data(result) + ", " +
             std::to_string(numElements(result)) + ", host::CastTarget::" +
             castTarget(getElementTypeOrSelf(result.getType())) + ")");
    emitProgress();
    return success();
  }
  return op->emitError() << "no host emission for '" << op->getName() << "'";
}

LogicalResult StepEmitter::emit() {
  func::FuncOp func = entry.func;
  arena.printDeclarations(os);
  emitStepComment();
  os << "template <typename T>\n"
     << "Status loom_" << func.getSymName()
     << "(mpi::Communicator &comm, const StepContext &context,\n"
     << "    const std::vector<Buffer<T>> &args, std::vector<Buffer<T>> "
        "&results) {\n";
  os << "  (void)comm;\n"
     << "  (void)context;\n";
  emitRankVariables();
  // The step's buffers: the arena of the rank's stage (its tables follow
  // the function: the plan needs the whole body).
  std::string stage = entry.numStages ? "loomStage" : "0";
  os << "  host::Workspace ws(" << arena.bytesOf(stage) << ",\n"
     << "                     " << arena.predictedPeakOf(stage) << ");\n"
     << "  ws.countArguments(args);\n";
  for (auto [i, arg] : llvm::enumerate(entry.args)) {
    Value value = func.getArgument(i);
    os << "  const " << elementType(value) << " *" << name(value) << " = args["
       << i << "]." << (arg.isInteger ? "ints" : "floats") << ".data(); // "
       << arg.name << "\n";
  }
  buckets = dist::collectGradientBuckets(func);
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

/// The ProgramSpec and the step tables, after the step functions'
/// anonymous namespace.
LogicalResult emitSpec(const EntryInfo &entry, raw_ostream &os) {
  os << "} // namespace\n\n";
  return emit::emitProgramSpec(entry, os);
}

const char *kStepPrologue = R"cpp(
#include "loom/Runtime/Harness/Harness.h"
#include "loom/Runtime/Host/Activation.h"
#include "loom/Runtime/Host/Attention.h"
#include "loom/Runtime/Host/Elementwise.h"
#include "loom/Runtime/Host/Embedding.h"
#include "loom/Runtime/Host/Loss.h"
#include "loom/Runtime/Host/LossScaling.h"
#include "loom/Runtime/Host/Matmul.h"
#include "loom/Runtime/Host/Normalization.h"
#include "loom/Runtime/Host/Optimizer.h"
#include "loom/Runtime/Host/Random.h"
#include "loom/Runtime/Host/Reduction.h"
#include "loom/Runtime/Host/Rope.h"
#include "loom/Runtime/Host/Shape.h"
#include "loom/Runtime/Host/Softmax.h"
#include "loom/Runtime/Host/Workspace.h"
#include "loom/Runtime/MPI/Communicator.h"
#include "loom/Runtime/MPI/RingAttention.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace loom::runtime::harness;
namespace host = loom::runtime::host;
namespace io = loom::runtime::io;
namespace mpi = loom::runtime::mpi;

/// Returns a failed kernel's or collective's Status, naming the rank
/// (`loomRank`, the step's) and the op.
#define LOOM_CHECK(call, what)                                                 \
  do {                                                                         \
    Status status_ = (call);                                                   \
    if (!status_.ok())                                                         \
      return Status::failure("rank " + std::to_string(loomRank) + ": " +      \
                             std::string(what) + ": " + status_.message());   \
  } while (false)

/// The same for the kernels that return an optional error message.
#define LOOM_CHECK_MESSAGE(call, what)                                         \
  do {                                                                         \
    std::optional<std::string> message_ = (call);                              \
    if (message_)                                                              \
      return Status::failure("rank " + std::to_string(loomRank) + ": " +      \
                             std::string(what) + ": " + *message_);           \
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
harness::StepFn<float> loomStepF32();
harness::StepFn<double> loomStepF64();
harness::StepFn<float> loomEvalStepF32();
harness::StepFn<double> loomEvalStepF64();

int main(int argc, char **argv) {
  if (trainer::isTrainingCommandLine(argc, argv))
    return trainer::runTrainer(argc, argv, loomProgramSpec(), loomStepF32(),
                               loomStepF64(), loomEvalStepF32(),
                               loomEvalStepF64());
  return harness::runMain(argc, argv, loomProgramSpec(), loomStepF32(),
                          loomStepF64());
}
)cpp";
}

std::string cmakeSource() {
  return R"cmake(#===- CMakeLists.txt - Emitted by loom-translate --emit-host ---------------===#
#
# Builds the host program (one for every rank) against Loom's runtime
# libraries:
#   cmake -G Ninja -S . -B build -DLOOM_SOURCE_DIR=<loom checkout> \
#         -DLOOM_BUILD_DIR=<loom build tree>
#   cmake --build build
#
#===----------------------------------------------------------------------===#

cmake_minimum_required(VERSION 3.20)
# A sanitizer build of Loom names the compiler its runtime was built with:
# a program linking it needs that compiler's sanitizer runtime. Otherwise
# CMake picks the compiler.
include(${LOOM_BUILD_DIR}/LoomEmittedCompiler.cmake OPTIONAL)
project(loom_emitted_step C CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  # The step is one long function: -O1 compiles it quickly and the
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
# The flags Loom's own build compiled its runtime with that a program
# linking it must share (a sanitizer build's -fsanitize=...; none otherwise).
include(${LOOM_BUILD_DIR}/LoomEmittedFlags.cmake OPTIONAL)

find_package(MPI REQUIRED COMPONENTS C)
find_library(LOOM_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
set(loom_runtime_libs)
# Static libraries, each before the ones it uses (the MPI runtime's ring
# attention uses the host kernels).
foreach(lib LoomRuntimeTrainer LoomRuntimeHarness LoomRuntimeIO LoomRuntimeMPI
            LoomRuntimeHost LoomRuntimeLayout LoomLayout LoomRuntimeSupport
            LoomSupport)
  find_library(LOOM_${lib}_LIBRARY NAMES ${lib}
    PATHS ${LOOM_BUILD_DIR}/lib ${LOOM_BUILD_DIR}/lib/Runtime
          ${LOOM_BUILD_DIR}/lib/Analysis/Layout ${LOOM_BUILD_DIR}/lib/Support
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
  if (failed(emit::readEntry(module, options.entry, kHost, entry)))
    return failure();

  std::string step;
  llvm::raw_string_ostream os(step);
  os << "//===- train_step.cpp - Emitted by loom-translate --emit-host "
        "-------------===//\n"
     << "//\n"
     << "// Host code of @" << entry.func.getSymName();
  if (entry.mesh)
    os << " over mesh @" << entry.meshName << " " << entry.mesh->toString()
       << " (" << entry.numRanks << " ranks)";
  os << ": one step function that\n"
     << "// every rank runs with its mesh coordinates, each op as the host "
        "kernel or\n"
     << "// collective the interpreter runs for it, after the op in a "
        "comment.\n"
     << "// Generated; do not edit.\n"
     << "//\n"
     << "//===------------------------------------------------------------"
        "----------===//\n"
     << kStepPrologue;

  // SSA names as the comments print them.
  AsmState asmState(entry.func, OpPrintingFlags().enableDebugInfo(
                                    true, /*prettyForm=*/false));
  StepEmitter stepEmitter(entry, asmState, os);
  if (failed(stepEmitter.emit()))
    return failure();
  // The forward-only evaluation step beside it (the trainer's --eval-data),
  // with the same arguments.
  FailureOr<func::FuncOp> eval = emit::findEvalEntry(entry.func, kHost);
  if (failed(eval))
    return failure();
  if (*eval) {
    EntryInfo evalEntry;
    if (failed(emit::readEntry(module, eval->getSymName(), kHost, evalEntry)))
      return failure();
    AsmState evalAsmState(
        *eval, OpPrintingFlags().enableDebugInfo(true, /*prettyForm=*/false));
    StepEmitter evalEmitter(evalEntry, evalAsmState, os);
    if (failed(evalEmitter.emit()))
      return failure();
  }
  if (failed(emitSpec(entry, os)))
    return failure();
  emit::emitEvalAccessors(*eval, os);

  files.clear();
  files.emplace_back("train_step.cpp", std::move(step));
  files.emplace_back("main.cpp", mainSource());
  files.emplace_back("CMakeLists.txt", cmakeSource());
  return success();
}

} // namespace mlir::loom

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
//    Communicator call the interpreter makes for that op, from the emission
//    table (emit::KernelCallTable, shared with --emit-cuda), written in the
//    host's call syntax (the hooks below). Scalars
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
// Any op without a table entry stops the emission with an error at the op;
// the translation then writes nothing.
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
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <optional>
#include <set>

namespace mlir::loom {

using dist::Layout;
using dist::Mesh;
using emit::doubleLiteral;
using emit::EntryInfo;
using emit::isIntegerStorage;
using emit::KernelCall;
using emit::stringLiteral;
using emit::TensorInfo;
using Shape = std::vector<int64_t>;

namespace {

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
  /// Every tensor is a pointer to its elements (in the arena, an argument,
  /// a constant or the caller's result buffer).
  std::string data(Value value) { return name(value); }
  /// `results[i].floats` or `.ints`: the caller's buffer of result `i`.
  std::string resultBuffer(unsigned index, Value value) {
    return "results[" + std::to_string(index) + "]." +
           (isIntegerStorage(value.getType()) ? "ints" : "floats");
  }
  /// Declares the zero-filled buffer of an op's result (in a stage's
  /// region: declared null before it, placed where the stage runs the op):
  /// the buffer of the argument the value is carried into when that
  /// argument is dead (emit::StepArena::freeCarriedArgument), else the
  /// caller's result buffer when the step returns the value and every rank
  /// that computes it writes that result (directResult), else its offset in
  /// the step's arena (planned after the body).
  void allocate(Value result) override {
    std::string type = storageType(result);
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
  void allocateUpdate(Value result, Value operand) override {
    if (!arena.updatesInPlace(currentOp, result, operand)) {
      allocate(result);
      return;
    }
    arena.alias(result, operand);
    inPlace[result] = cast<BlockArgument>(operand).getArgNumber();
    std::string type = storageType(result);
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
  void alias(Value result, Value operand) override {
    arena.alias(result, operand);
    std::string type = "const " + storageType(result) + " *";
    if (inStageRegion()) {
      declare(type + name(result) + " = nullptr;");
      os << "  " << name(result) << " = " << name(operand) << ";\n";
      return;
    }
    os << "  " << type << name(result) << " = " << name(operand) << ";\n";
  }

  LogicalResult emitTargetOp(Operation *op) override;
  LogicalResult emitConstant(arith::ConstantOp op);
  LogicalResult emitReturn(func::ReturnOp op);

  // The host's call syntax (KernelCallTable.h): kernels in `host::` take
  // no stream, read one-element tensors on the host and report errors by
  // their return value.
  StringRef kernelNamespace() const override { return "host"; }
  StringRef communicatorObject() const override { return "comm"; }
  StringRef communicatorNamespace() const override { return "mpi"; }
  std::string scalarArgument(Value value) override;
  std::string learningRateArgument(StringRef rate, Value factor) override;
  void printCall(Operation *op, const KernelCall &call,
                 const std::string &callee,
                 std::vector<std::string> arguments) override;
  /// Overlap (docs/Codegen.md, "Overlap"): a bucketed gradient reduction
  /// (dist-bucket-gradient-reductions; an all-reduce, or a reduce-scatter
  /// under ZeRO) starts without blocking where it stands; returns false
  /// for any other op.
  bool emitBucketStart(Operation *reduce);
  /// Before the op that waits for buckets: waits for their reductions.
  void emitBucketWaits(Operation *op);
  /// After each op while reductions are in flight: lets MPI move them.
  void emitProgress();
  /// Rounds a bf16 or f16 result computed in T to its own type.
  void emitRounding(Value result);
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
  std::string held = storageType(result);
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

/// The runtimes' CastTarget of a bf16 or f16 result's rounding.
std::string castTarget(Type type) {
  if (type.isBF16())
    return "BF16";
  if (type.isF16())
    return "F16";
  return "";
}

//===----------------------------------------------------------------------===//
// The host's call syntax for the emission table (KernelCallTable.h)
//===----------------------------------------------------------------------===//

/// How a host kernel reports an error its inputs can hold at run time: a
/// Status (an id or label out of range), an optional message (`binary`'s
/// shapes), or not at all. A fact of the host runtime's signatures
/// (include/loom/Runtime/Host), so it lives with the target.
enum class HostReport { None, Status, Message };
HostReport reportOf(StringRef kernel) {
  return llvm::StringSwitch<HostReport>(kernel)
      .Case("binary", HostReport::Message)
      .Cases({"embedding", "embeddingBlock", "embeddingGrad",
              "embeddingGradBlock", "crossEntropyLocal",
              "crossEntropyGradLocal"},
             HostReport::Status)
      .Default(HostReport::None);
}

std::string StepEmitter::scalarArgument(Value value) {
  // The host reads the one element; the kernels take it by value.
  return name(value) + "[0]";
}

std::string StepEmitter::learningRateArgument(StringRef rate, Value factor) {
  // The compiled rate times the step's `lr_scale`: the same f64 product as
  // the interpreter, so a factor of 1 keeps the compiled rate's bits.
  if (!factor)
    return rate.str();
  return "(" + rate.str() + " * static_cast<double>(" + name(factor) + "[0]))";
}

void StepEmitter::printCall(Operation *op, const KernelCall &call,
                            const std::string &callee,
                            std::vector<std::string> arguments) {
  std::string text = callee + "(" + llvm::join(arguments, ", ") + ")";
  // The communicator's calls return a Status.
  if (call.executor == emit::Executor::Communicator ||
      call.executor == emit::Executor::CommunicatorKernel) {
    checked(op, text);
    return;
  }
  switch (reportOf(call.kernel)) {
  case HostReport::None:
    this->call(text);
    return;
  case HostReport::Status:
    checked(op, text);
    return;
  case HostReport::Message:
    checkedMessage(op, text);
    return;
  }
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

bool StepEmitter::emitBucketStart(Operation *reduce) {
  std::optional<int64_t> bucket = dist::getBucket(reduce);
  if (!bucket)
    return false;
  Value in = dist::getReducedGradient(reduce), out = reduce->getResult(0);
  groupComment(reduce);
  allocate(out);
  std::string request = name(out) + "_request";
  declare("mpi::Communicator::Request " + request + " = -1;");
  os << "  // Gradient bucket " << *bucket
     << ": its last gradient is ready; reduce while the backward goes on.\n";
  // The blocking call's arguments (DistKernelCalls.cpp) and the request.
  std::string start =
      isa<dist::ReduceScatterOp>(reduce)
          ? "comm.startReduceScatter(" + data(in) + ", " + shape(in) + ", " +
                axes(reduce) + ", " +
                std::to_string(cast<dist::ReduceScatterOp>(reduce).getDim())
          : "comm.startAllReduce(" + data(in) + ", " + shape(in) + ", " +
                axes(reduce) + ", mpi::ReduceKind::Sum";
  checked(reduce, start + ", " + data(out) + ", " + request + ")");
  ++requestsInFlight;
  return true;
}

void StepEmitter::emitBucketWaits(Operation *op) {
  for (int64_t bucket : dist::getWaitedBuckets(op)) {
    os << "  // Gradient bucket " << bucket << " is read from here on.\n";
    for (Operation *reduce : buckets[bucket].reductions) {
      checked(reduce, "comm.wait(" + name(reduce->getResult(0)) + "_request)");
      emitRounding(reduce->getResult(0));
      --requestsInFlight;
    }
  }
}

void StepEmitter::emitRounding(Value result) {
  // As the interpreter: a bf16 or f16 result is computed in T, then rounded
  // once to its own type.
  if (interp::isRoundedToLowPrecision(result))
    call("host::roundToPrecision<T>(" + data(result) + ", " +
         std::to_string(numElements(result)) + ", host::CastTarget::" +
         castTarget(getElementTypeOrSelf(result.getType())) + ")");
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
    // A bucketed gradient reduction only starts here; its result is
    // rounded (if it is bf16 or f16) where it is waited for.
    if (emitBucketStart(op)) {
      emitProgress();
      return success();
    }
    if (failed(emitKernelCall(op)))
      return failure();
    for (Value result : op->getResults())
      emitRounding(result);
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
    os << "  const " << storageType(value) << " *" << name(value) << " = args["
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
/// anonymous namespace. The spec records the arenas of the training and the
/// evaluation step (`eval`, may be null) for the trainer's memory check.
LogicalResult emitSpec(const EntryInfo &entry, func::FuncOp eval,
                       raw_ostream &os) {
  os << "} // namespace\n\n";
  SmallVector<std::string> arenaTables = {
      emit::StepArena::table("Bytes", func::FuncOp(entry.func).getSymName())};
  if (eval)
    arenaTables.push_back(emit::StepArena::table("Bytes", eval.getSymName()));
  return emit::emitProgramSpec(entry, os, arenaTables);
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
  if (failed(emitSpec(entry, *eval, os)))
    return failure();
  emit::emitEvalAccessors(*eval, os);

  files.clear();
  files.emplace_back("train_step.cpp", std::move(step));
  files.emplace_back("main.cpp", mainSource());
  files.emplace_back("CMakeLists.txt", cmakeSource());
  return success();
}

} // namespace mlir::loom

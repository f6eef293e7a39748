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
// An op's call comes from the emission table (emit::KernelCallTable) that
// the host emitter prints too: the same kernels and communicator methods
// with the same parameters, written in the CUDA call syntax (the hooks
// below: the stream first, device pointers for scalars, the error sink, the
// NCCL communicator). An op without an entry, or one the CUDA runtime lacks
// (ring attention), is an error naming the op, never a silent fallback.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CUDA/CUDAEmitter.h"
#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/IR/GradientBuckets.h"
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
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

namespace mlir::loom {

using emit::boolLiteral;
using emit::doubleLiteral;
using emit::EntryInfo;
using emit::isIntegerStorage;
using emit::KernelCall;
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
  /// Declares the zeroed device buffer of a result (in a stage's region:
  /// declared null before it, allocated where the stage runs the op): the
  /// buffer of the argument the value is carried into when that argument is
  /// dead (emit::StepArena::freeCarriedArgument), else its offset in the
  /// step's arena (planArena, after the body).
  void allocate(Value result) override {
    std::string type = storageType(result);
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
  void alias(Value result, Value operand) override {
    arena.alias(result, operand);
    if (inStageRegion()) {
      declare("const " + storageType(result) + " *" + name(result) +
              " = nullptr;");
      os << "  " << name(result) << " = " << name(operand) << ";\n";
      return;
    }
    os << "  const " << storageType(result) << " *" << name(result) << " = "
       << name(operand) << ";\n";
  }

  LogicalResult emitTargetOp(Operation *op) override;
  LogicalResult emitConstant(arith::ConstantOp op);
  LogicalResult emitReturn(func::ReturnOp op);
  /// Rounds a bf16 or f16 result computed in T to its own type.
  void emitRounding(Value result);

  // The CUDA call syntax (KernelCallTable.h): kernels in `cuda::` take the
  // stream (GEMMs the cuBLAS handle) first, read one-element tensors on the
  // device, and record data errors in the step's error sink.
  StringRef kernelNamespace() const override { return "cuda"; }
  StringRef communicatorObject() const override { return "nccl"; }
  StringRef communicatorNamespace() const override { return "nccl"; }
  std::string executorArgument(const KernelCall &call) override;
  std::string scalarArgument(Value value) override { return name(value); }
  std::string learningRateArgument(StringRef rate, Value factor) override;
  std::string inputListArgument(ArrayRef<Value> inputs, Value result) override;
  std::optional<std::string> scalarTemplateArgument(Value value) override {
    return storageType(value);
  }
  LogicalResult refineKernelCall(Operation *op, KernelCall &call) override;
  void printCall(Operation *op, const KernelCall &call,
                 const std::string &callee,
                 std::vector<std::string> arguments) override;

  /// Prints the program's sends and the beginStep call with this rank's
  /// table computed from them.
  void emitIncoming();

  /// Overlap (docs/Codegen.md, "Overlap"): a bucketed gradient reduction
  /// (dist-bucket-gradient-reductions) starts on the communication stream
  /// where it stands, and the compute stream goes on without waiting for
  /// it; returns false for any other all-reduce.
  bool emitBucketStart(dist::AllReduceOp reduce);
  /// Before the op that waits for buckets: orders the compute stream after
  /// their reductions.
  void emitBucketWaits(Operation *op);
  /// The step's gradient buckets, by number.
  std::map<int64_t, dist::GradientBucket> buckets;

  /// Declares an optimizer update's result: the buffer of the argument it
  /// updates (`operand`) when the update is that argument's last reader and
  /// the result is carried into it (emit::StepArena::updatesInPlace), else
  /// a buffer of its own (allocate). The update kernels read each element
  /// before they write it, so the new model state overwrites the old in
  /// place, and the step holds one copy of the state rather than two
  /// (docs/Codegen.md, "Memory").
  void allocateUpdate(Value result, Value operand) override {
    if (!arena.updatesInPlace(currentOp, result, operand)) {
      allocate(result);
      return;
    }
    arena.alias(result, operand);
    std::string statement = name(result) + " = const_cast<" +
                            storageType(result) + " *>(" + name(operand) + ");";
    os << "  // In place: the update is the last reader of " << name(operand)
       << ".\n";
    if (inStageRegion()) {
      declare(storageType(result) + " *" + name(result) + " = nullptr;");
      os << "  " << statement << "\n";
      return;
    }
    os << "  " << storageType(result) << " *" << statement << "\n";
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
  std::string type = storageType(result);
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
  // A bucket started and never waited is an error, not a race.
  if (!buckets.empty())
    checked(ret, "nccl.checkAllWaited()");
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
             storageType(v) + "))}";
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

bool StepEmitter::emitBucketStart(dist::AllReduceOp reduce) {
  std::optional<int64_t> bucket = dist::getBucket(reduce);
  if (!bucket)
    return false;
  Value in = reduce.getInput(), out = reduce.getResult();
  groupComment(reduce);
  allocate(out);
  std::string request = name(out) + "_request";
  declare("nccl::Communicator::Request " + request + " = -1;");
  os << "  // Gradient bucket " << *bucket
     << ": its last gradient is ready; reduce on the communication stream "
        "while the backward goes on.\n";
  checked(reduce, "nccl.startAllReduce(" + name(in) + ", " + shape(in) + ", " +
                      axes(reduce) + ", nccl::ReduceKind::Sum, " + name(out) +
                      ", " + request + ")");
  return true;
}

void StepEmitter::emitBucketWaits(Operation *op) {
  for (int64_t bucket : dist::getWaitedBuckets(op)) {
    os << "  // Gradient bucket " << bucket
       << " is read from here on: the compute stream waits for it.\n";
    for (Operation *member : buckets[bucket].reductions) {
      // A bucketed reduce-scatter (ZeRO) ran in stream order where it
      // stands: only the all-reduces were started on the communication
      // stream.
      auto reduce = dyn_cast<dist::AllReduceOp>(member);
      if (!reduce)
        continue;
      Value result = reduce.getResult();
      checked(reduce, "nccl.wait(" + name(result) + "_request)");
      emitRounding(result);
    }
  }
}

void StepEmitter::emitRounding(Value result) {
  // As the interpreter: a bf16 or f16 result is computed in T, then rounded
  // once to its own type (the cast kernel, in place).
  if (interp::isRoundedToLowPrecision(result))
    call("cuda::cast<T, T>(stream, " + name(result) + ", " +
         std::to_string(numElements(result)) + ", cuda::CastTarget::" +
         (getElementTypeOrSelf(result.getType()).isBF16() ? "BF16" : "F16") +
         ", " + name(result) + ")");
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
    if (auto reduce = dyn_cast<dist::AllReduceOp>(op);
        reduce && emitBucketStart(reduce))
      return success();
    if (failed(emitKernelCall(op)))
      return failure();
    for (Value result : op->getResults())
      emitRounding(result);
    return success();
  }
  return op->emitError() << "no CUDA emission for '" << op->getName() << "'";
}

//===----------------------------------------------------------------------===//
// The CUDA call syntax for the emission table (KernelCallTable.h)
//===----------------------------------------------------------------------===//

/// How a CUDA kernel reports an error its inputs can hold at run time. The
/// kernels run asynchronously: those that validate data on the device
/// record a failure in the step's error sink (an argument, read back at the
/// step's end); the embedding gradients validate on the host and return a
/// Status. A fact of the CUDA runtime's signatures
/// (include/loom/Runtime/CUDA), so it lives with the target.
enum class CUDAReport { None, Status, Sink };
CUDAReport reportOf(const KernelCall &call) {
  return llvm::StringSwitch<CUDAReport>(call.kernel)
      .Cases({"embeddingGrad", "embeddingGradBlock"}, CUDAReport::Status)
      .Cases({"embedding", "crossEntropyLocal", "crossEntropyGradLocal"},
             CUDAReport::Sink)
      // Only an integer division can fail on data.
      .Case("binary", call.checksData ? CUDAReport::Sink : CUDAReport::None)
      .Default(CUDAReport::None);
}

std::string StepEmitter::executorArgument(const KernelCall &call) {
  return call.executor == emit::Executor::Blas ? "blas" : "stream";
}

std::string StepEmitter::learningRateArgument(StringRef rate, Value factor) {
  // The learning-rate factor stays on the device; the kernel reads it.
  return rate.str() + ", " + (factor ? name(factor) : "nullptr");
}

std::string StepEmitter::inputListArgument(ArrayRef<Value> inputs,
                                           Value result) {
  SmallVector<std::string> names;
  for (Value v : inputs)
    names.push_back(name(v));
  return "std::vector<const " + storageType(result) + " *>{" +
         llvm::join(names, ", ") + "}";
}

LogicalResult StepEmitter::refineKernelCall(Operation *op, KernelCall &call) {
  // Ring attention (context parallelism) has no NCCL implementation yet.
  if (isa<dist::RingAttentionOp, dist::RingAttentionGradOp>(op))
    return op->emitError() << "no CUDA emission for '" << op->getName() << "'";
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    std::optional<StringRef> low = lowPrecisionValues(matmul.getLhs());
    if (low && low == lowPrecisionValues(matmul.getRhs())) {
      // Both operands hold bf16 (f16) values: tensor cores, f32 sums.
      call.kernel = "matmulLowPrecision";
      call.args.insert(
          call.args.begin(),
          {{emit::CallArg::Kind::Text, Value(), "session.getGemmScratch()", {}},
           {emit::CallArg::Kind::Enumerator,
            Value(),
            ("CastTarget::" + *low).str(),
            {}}});
    }
    return success();
  }
  if (auto attention = dyn_cast<AttentionOp>(op)) {
    if (failed(checkHeadDims(op, attention.getQuery(), attention.getValue())))
      return failure();
    call.kernel += attentionVariant(attention.getQuery(), attention.getKey(),
                                    attention.getValue());
    return success();
  }
  if (auto grad = dyn_cast<AttentionGradOp>(op)) {
    if (failed(checkHeadDims(op, grad.getQuery(), grad.getValue())))
      return failure();
    call.kernel +=
        attentionVariant(grad.getQuery(), grad.getKey(), grad.getValue());
  }
  return success();
}

void StepEmitter::printCall(Operation *op, const KernelCall &call,
                            const std::string &callee,
                            std::vector<std::string> arguments) {
  // The communicator's calls return a Status.
  CUDAReport report = call.executor == emit::Executor::Communicator
                          ? CUDAReport::Status
                          : reportOf(call);
  if (report == CUDAReport::Sink)
    arguments.push_back(errors(op));
  std::string text = callee + "(" + llvm::join(arguments, ", ") + ")";
  if (report == CUDAReport::Status)
    checked(op, text);
  else
    this->call(text);
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
  buckets = dist::collectGradientBuckets(func);
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
    os << "  const " << storageType(value) << " *" << name(value) << " = ";
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

//===- EmitterSupport.h - What the step emitters share ----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The host (`--emit-host`) and CUDA (`--emit-cuda`) emitters turn the same
// partitioned step into one SPMD program, run by every rank of the mesh
// under the same harness (loom/Runtime/Harness/Harness.h); they differ only
// in how an op becomes a call. This file holds everything else, so that both
// read the entry, compute the rank's scalars, name values and describe the
// program to the harness identically:
//   - C++ literals of shapes, doubles, strings and axis lists;
//   - the entry function and its mesh, arguments and results (readEntry);
//   - StepEmitterBase, the walk over the ops with value names, the op
//     comment before each statement group, and index scalars
//     (`dist.axis_index`, `arith.constant`/`addi`/`muli`) as run-time
//     expressions of the rank's mesh coordinates;
//   - the ProgramSpec and step functions the harness needs
//     (emitProgramSpec): layouts, not per-rank tables;
//   - pipelined programs (docs/Pipeline.md, "the contract"): each stage's
//     ops run in `if (loomStage == k)` regions, a rank leaves the results of
//     other stages untouched, and counts its in-flight micro-batches.
// Nothing emitted, and no emission time, grows with the rank count
// (docs/Codegen.md, "One program for every rank").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_COMMON_EMITTERSUPPORT_H
#define LOOM_TARGET_COMMON_EMITTERSUPPORT_H

#include "loom/Analysis/Layout/Layout.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Target/Common/KernelCallTable.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::loom::emit {

using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// `{2, 8, 16}`.
std::string shapeLiteral(ArrayRef<int64_t> shape);
/// A double that reads back as the same bits (17 significant digits), with
/// a `.` or exponent so that it reads as a double.
std::string doubleLiteral(double value);
std::string boolLiteral(bool value);
/// `"a"` with C escapes (names are plain, but a name is user input).
std::string stringLiteral(StringRef text);
/// `{"dp", "tp"}`.
std::string axesLiteral(ArrayRef<std::string> axes);
/// The names of an array of string attributes.
std::vector<std::string> axisNames(ArrayAttr axes);

//===----------------------------------------------------------------------===//
// The entry
//===----------------------------------------------------------------------===//

/// One argument or result of the entry.
struct TensorInfo {
  std::string name;
  Type type;
  bool isInteger = false;
  Shape localShape, globalShape;
  dist::Layout layout = dist::Layout::getReplicated(0);
  /// The pipeline stage that computes (results) or owns (arguments) it; -1
  /// on every stage (not pipelined, data inputs, untagged results).
  int64_t stage = -1;
  /// Its `loom.file_shape` (the ecosystem's shape of a row-major view),
  /// empty when it has none; checkpoints record it for merged files.
  Shape fileShape;
};

/// Attributes of the pipelined program (docs/Pipeline.md).
using dist::kBackwardAttrName;
using dist::kMicroBatchAttrName;
using dist::kPipelineAttrName;
using dist::kStageAttrName;

/// The entry function and its mesh (absent: one device).
struct EntryInfo {
  func::FuncOp func;
  std::optional<dist::Mesh> mesh;
  std::string meshName;
  std::vector<TensorInfo> args, results;
  int64_t numRanks = 1;
  /// Pipelined programs (a module `dist.pipeline` attribute): the pipeline
  /// axis's name and index in the mesh, and the number of stages (0: not
  /// pipelined).
  std::string pipelineAxis;
  size_t pipelineAxisIndex = 0;
  int64_t numStages = 0;

  /// The stage of `rank` (-1 when not pipelined).
  int64_t stageOf(int64_t rank) const;
  /// The `dist.stage` of `op` in a pipelined program, else -1 (the op runs
  /// on every rank).
  int64_t stageOfOp(Operation *op) const;
};

/// How an emitter words its errors: its name ("host", "CUDA") and the flag
/// that picks the entry (`--emit-host-entry`).
struct EmitterName {
  StringRef target;
  StringRef entryFlag;
};

/// Whether `type` (or its element type) is held as int64_t: integers but i1,
/// and index.
bool isIntegerStorage(Type type);

/// Checks that `type` is a tensor the runtimes hold: static shape, float
/// (held in the run's type) or integer (held as int64_t), not i1.
LogicalResult checkTensorType(Operation *op, Type type, const Twine &what,
                              const EmitterName &emitter);

/// Finds the entry (`entryName`; `train_step`, else `forward`, when empty)
/// and reads its mesh and the layouts, global shapes and names of its
/// arguments and results; in a pipelined program also the pipeline axis and
/// each argument's owner and result's stage (an argument is owned by the
/// stage of the result carried into it, else by the one stage that reads
/// it).
LogicalResult readEntry(ModuleOp module, StringRef entryName,
                        const EmitterName &emitter, EntryInfo &entry);

/// The loop-carried (result, argument) pairs of the entry: a result named
/// like an argument of its kind and global shape (ProgramSpec::carried).
std::vector<std::pair<size_t, size_t>> carriedPairs(const EntryInfo &entry);

//===----------------------------------------------------------------------===//
// The step every rank runs
//===----------------------------------------------------------------------===//

/// The parts of the step's emission that do not depend on the target. A
/// subclass prints the statements of each op (emitTargetOp) and the function
/// around them. The step is one function for every rank of the mesh: what
/// differs between ranks is computed at run time from the rank's mesh
/// coordinates (`loomRank`, `loomCoords` and, in a pipelined program,
/// `loomStage`, which emitRankVariables declares), never folded per rank,
/// so that the program's size does not grow with the rank count.
class StepEmitterBase : public KernelCallContext {
public:
  StepEmitterBase(const EntryInfo &entry, AsmState &asmState, raw_ostream &out,
                  const EmitterName &emitter)
      : entry(entry), asmState(asmState), out(out), emitter(emitter) {}
  virtual ~StepEmitterBase() = default;

protected:
  /// The doc comment of the step function: the mesh it runs on.
  void emitStepComment();
  /// Declares `loomRank` and `loomCoords` (from the step's `comm`) and, in a
  /// pipelined program, `loomStage`, the rank's coordinate on the pipeline
  /// axis.
  void emitRankVariables();
  /// Emits every op of the entry's block (emitOp), then writes what is left
  /// to the output.
  LogicalResult emitBody();
  /// Prints the op as a comment, then its statements: an index scalar as a
  /// run-time expression of the rank's coordinates, anything else through
  /// emitTargetOp. In a pipelined program the consecutive ops of one stage
  /// (`dist.stage`) go into one `if (loomStage == k) { ... }` region, whose
  /// declarations (declare) are printed before it, and the first forward op
  /// and the last backward op of a micro-batch on a stage are bracketed by
  /// the in-flight counter's `pipelineInFlight().begin/end` calls.
  LogicalResult emitOp(Operation *op);
  /// Writes the statements printed so far (to `os`) to the output.
  void flush();
  /// Whether the statements now printed go into a stage's region.
  bool inStageRegion() const { return regionStage >= 0; }
  /// Prints `text` (a declaration statement, without indentation or
  /// newline) so that the rest of the function sees it: before the current
  /// stage region, else in place.
  void declare(const Twine &text);
  /// The C++ condition under which a rank computes result `index` of the
  /// entry (`loomStage == k`), or "" when every rank does.
  std::string resultCondition(unsigned index) const;
  /// The target's statements of `op` (not an index scalar).
  virtual LogicalResult emitTargetOp(Operation *op) = 0;

  /// The C++ name of a value: its SSA name (`%12` -> `v12`, `%dx_0` ->
  /// `v_dx_0`, `%6#1` -> `v6_1`, `%arg3` -> `arg3`).
  std::string name(Value value);
  Shape shapeOf(Value value);
  std::string shape(Value value) { return shapeLiteral(shapeOf(value)); }
  int64_t numElements(Value value);
  /// The C++ expression of an index scalar (its name); an error at `user`
  /// when `value` is not one the emitter computes.
  FailureOr<std::string> scalar(Operation *user, Value value) override;
  bool isScalar(Value value) const { return scalars.count(value) != 0; }
  /// The `axes` attribute of a collective, as a literal and as names.
  std::string axes(Operation *op);
  std::vector<std::string> axisList(Operation *op);
  /// The peer of a send/recv, as a C++ expression: the rank at
  /// `coordinate` on `axis`, this rank's coordinates elsewhere.
  FailureOr<std::string> peer(Operation *op, StringRef axis,
                              int64_t coordinate) override;
  /// The op as the interpreter describes it; the step's LOOM_CHECK prefixes
  /// the failing rank at run time.
  std::string describe(Operation *op);
  /// A comment naming the axes of a collective's group.
  void groupComment(Operation *collective);
  /// Records `value` as the index scalar `expression` and declares it.
  void defineScalar(Value value, const std::string &expression);
  /// Where this rank's block of `op`'s first operand lies in the global
  /// tensor, for kernels keyed by the global index (dropout): the whole
  /// tensor on one rank; in an SPMD program the block offset is computed at
  /// run time from the op's `dist.layout` attribute, which it must carry
  /// (an error at the op). Prints that computation and returns the offset's
  /// C++ expression.
  FailureOr<std::string> globalBlock(Operation *op,
                                     Shape &globalShape) override;
  StringRef targetName() const override { return emitter.target; }
  int64_t numRanks() const override { return entry.numRanks; }
  LogicalResult checkTensor(Operation *op, Type type,
                            const Twine &what) override {
    return checkTensorType(op, type, what, emitter);
  }

  //===--------------------------------------------------------------------===//
  // The emission table (KernelCallTable.h) and the target's call syntax
  //===--------------------------------------------------------------------===//

  /// Emits `op` by its kernel call table entry: checks that its operands
  /// (but index scalars) and results are tensors the runtimes hold (where
  /// the entry asks), describes the call, lets the target refine it
  /// (refineKernelCall), declares the results (allocate, allocateUpdate,
  /// alias) and prints the call (printCall; a send's or receive's guarded by
  /// its peer). An op without an entry is an error naming the op and the
  /// target.
  LogicalResult emitKernelCall(Operation *op);
  /// `T` or `int64_t`: how the elements of `value` are held.
  std::string storageType(Value value);

  /// The namespace of the target's kernels (`host`, `cuda`).
  virtual StringRef kernelNamespace() const = 0;
  /// The rank's communicator in the step (`comm`, `nccl`) and the namespace
  /// of its runtime (`mpi`, `nccl`).
  virtual StringRef communicatorObject() const = 0;
  virtual StringRef communicatorNamespace() const = 0;
  /// The argument the target passes before the table's (CUDA: the stream
  /// or the cuBLAS handle); none when empty, the default.
  virtual std::string executorArgument(const KernelCall &call) { return ""; }
  /// A one-element tensor the kernel reads as a number
  /// (CallArg::Kind::Scalar).
  virtual std::string scalarArgument(Value value) = 0;
  /// An optimizer's rate literal and its optional per-step factor
  /// (CallArg::Kind::LearningRate): one argument or two.
  virtual std::string learningRateArgument(StringRef rate, Value factor) = 0;
  /// The braced list of a kernel's input buffers holding `result`'s
  /// element type (concat).
  virtual std::string inputListArgument(ArrayRef<Value> inputs, Value result);
  /// The template argument of a Scalar's storage type, or none when the
  /// target reads the scalar on the host.
  virtual std::optional<std::string> scalarTemplateArgument(Value value) {
    return std::nullopt;
  }
  /// The target's hook for the calls it writes differently (another kernel
  /// for some operand types, a limit of its kernels); an error stops the
  /// emission.
  virtual LogicalResult refineKernelCall(Operation *op, KernelCall &call) {
    return success();
  }
  /// Prints the statement of `callee(arguments)` with the checks the
  /// target's runtime needs (a returned Status, an error sink argument).
  virtual void printCall(Operation *op, const KernelCall &call,
                         const std::string &callee,
                         std::vector<std::string> arguments) = 0;
  /// Declares a result buffer; an optimizer update's result that may take
  /// the buffer of the state it replaces; another name for an operand.
  virtual void allocate(Value result) = 0;
  virtual void allocateUpdate(Value result, Value operand) = 0;
  virtual void alias(Value result, Value operand) = 0;

  const EntryInfo &entry;
  AsmState &asmState;
  /// The file; the subclass prints to `os`, which flush() moves there.
  raw_ostream &out;
  std::string text;
  llvm::raw_string_ostream os{text};
  EmitterName emitter;

private:
  /// The op's statements, comment and in-flight calls included.
  LogicalResult emitOpStatements(Operation *op);
  /// Checks that `op` (of `stage`, -1: every stage) reads no value that
  /// another stage's region computes.
  LogicalResult checkStageOperands(Operation *op, int64_t stage);
  /// Writes the open stage region (its declarations, then its guarded
  /// statements) to the output and closes it.
  void closeRegion();
  /// Finds each stage's first forward and last backward op of each
  /// micro-batch (once, on the first emitOp).
  void findMicroBatchBounds();
  /// Prints the in-flight `call` (begin or end) of micro-batch `m` on
  /// `stage`, guarded unless the op runs on that stage only.
  void inFlightCall(Operation *op, StringRef call, int64_t stage, int64_t m);

  llvm::DenseMap<Value, std::string> names;
  llvm::DenseSet<Value> scalars;
  /// The stage of the open region (-1: none) and its declarations.
  int64_t regionStage = -1;
  std::string declarations;
  /// Micro-batch bounds: op -> (stage, micro-batch) pairs.
  bool boundsFound = false;
  llvm::DenseMap<Operation *, std::vector<std::pair<int64_t, int64_t>>>
      firstForward, lastBackward;
};

/// Checks the pipeline attributes of a pipelined entry's ops: `dist.stage`
/// in [0, stages) on every op that has operands, and send/recv on the
/// pipeline axis. Called by readEntry.
LogicalResult verifyPipelineOps(const EntryInfo &entry,
                                const EmitterName &emitter);

//===----------------------------------------------------------------------===//
// The program around the step functions
//===----------------------------------------------------------------------===//

/// Prints `loomProgramSpec()` (mesh, arguments and results with their
/// layouts, the loop-carried pairs: nothing per rank, the harness computes
/// each rank's blocks from the layouts) and `loomStepF32()` and
/// `loomStepF64()`, which return `loom_<entry><T>` (null when the build
/// leaves that precision out). `hostArenaTables` names the step arenas'
/// `kArenaBytes_<entry>` tables of a host program, which the spec records
/// (ProgramSpec::hostArenaBytes) for the trainer's memory check.
LogicalResult emitProgramSpec(const EntryInfo &entry, raw_ostream &os,
                              ArrayRef<std::string> hostArenaTables = {});

/// The evaluation entry emitted beside a training step: `@eval_step`
/// (dist-derive-eval-step) when `train` is `@train_step` and the module has
/// one, else null. It must take the training step's arguments and return
/// one `loss` (the trainer passes it the training state's buffers); an
/// entry that does not is an error.
FailureOr<func::FuncOp> findEvalEntry(func::FuncOp train,
                                      const EmitterName &emitter);

/// Prints `loomEvalStepF32()` and `loomEvalStepF64()`: `loom_<eval><T>`,
/// or null when there is no evaluation entry (`eval` null) or the build
/// leaves that precision out.
void emitEvalAccessors(func::FuncOp eval, raw_ostream &os);

/// Writes an emitted program: with an empty `dir`, the first file to `os`;
/// otherwise every file into `dir` (created if needed) and their paths to
/// `os`. Errors are reported at `module`.
LogicalResult
writeProgramFiles(ModuleOp module,
                  ArrayRef<std::pair<std::string, std::string>> files,
                  StringRef dir, raw_ostream &os);

} // namespace mlir::loom::emit

#endif // LOOM_TARGET_COMMON_EMITTERSUPPORT_H

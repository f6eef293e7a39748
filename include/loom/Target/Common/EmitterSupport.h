//===- EmitterSupport.h - What the per-rank emitters share ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The host (`--emit-host`) and CUDA (`--emit-cuda`) emitters turn the same
// partitioned step into per-rank programs that run under the same harness
// (loom/Runtime/Harness/Harness.h); they differ only in how an op becomes a
// call. This file holds everything else, so that both read the entry, fold
// this rank's scalars, name values and describe the program to the harness
// identically:
//   - C++ literals of shapes, doubles, strings and axis lists;
//   - the entry function and its mesh, arguments and results (readEntry);
//   - RankEmitterBase, the walk over one rank's ops with value names, the
//     op comment before each statement group, and index scalars
//     (`dist.axis_index`, `arith.constant`/`addi`/`muli`) folded to this
//     rank's constants;
//   - the ProgramSpec and step tables the harness needs (emitProgramSpec);
//   - pipelined programs (docs/Pipeline.md, "the contract"): a rank emits
//     only the ops of its own stage (`dist.stage`), leaves the results of
//     other stages untouched, and counts its in-flight micro-batches.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_COMMON_EMITTERSUPPORT_H
#define LOOM_TARGET_COMMON_EMITTERSUPPORT_H

#include "loom/Analysis/Layout/Layout.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
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
// One rank
//===----------------------------------------------------------------------===//

/// The parts of a rank's emission that do not depend on the target. A
/// subclass prints the statements of each op (emitTargetOp) and the function
/// around them.
class RankEmitterBase {
public:
  RankEmitterBase(const EntryInfo &entry, int64_t rank, AsmState &asmState,
                  raw_ostream &os, const EmitterName &emitter)
      : entry(entry), rank(rank), asmState(asmState), os(os), emitter(emitter) {
  }
  virtual ~RankEmitterBase() = default;

protected:
  /// Prints the op as a comment, folds it when it is an index scalar, and
  /// otherwise hands it to emitTargetOp. Ops of another pipeline stage are
  /// skipped (one comment per run of them), and the first forward op and
  /// the last backward op of a micro-batch on this stage are bracketed by
  /// the in-flight counter's `pipelineInFlight().begin/end` calls.
  LogicalResult emitOp(Operation *op);
  /// Prints the comment of the run of skipped ops before the next
  /// statement (emitOp calls it; a subclass calls it before the code it
  /// prints after the last op).
  void flushSkipped();
  /// Whether this rank computes result `index` of the entry (false: a
  /// result of another stage, which the step leaves untouched).
  bool computesResult(unsigned index) const;
  /// Whether this rank runs `op` (its `dist.stage`, if any, is this rank's).
  bool runsOp(Operation *op) const;
  /// The target's statements of `op` (not an index scalar).
  virtual LogicalResult emitTargetOp(Operation *op) = 0;

  /// The C++ name of a value: its SSA name (`%12` -> `v12`, `%dx_0` ->
  /// `v_dx_0`, `%6#1` -> `v6_1`, `%arg3` -> `arg3`).
  std::string name(Value value);
  Shape shapeOf(Value value);
  std::string shape(Value value) { return shapeLiteral(shapeOf(value)); }
  int64_t numElements(Value value);
  /// The value of a scalar folded for this rank.
  FailureOr<int64_t> scalar(Operation *user, Value value);
  bool isScalar(Value value) const { return scalars.count(value) != 0; }
  /// The `axes` attribute of a collective, as a literal and as names.
  std::string axes(Operation *op);
  std::vector<std::string> axisList(Operation *op);
  /// The peer of a send/recv: the rank at `coordinate` on `axis`, this
  /// rank's coordinates elsewhere.
  FailureOr<int64_t> peer(Operation *op, StringRef axis, int64_t coordinate);
  /// "rank R: <the op, as the interpreter describes it>".
  std::string describe(Operation *op);
  /// A comment naming the group of a collective and this rank's place in it.
  void groupComment(Operation *collective);
  /// Records `value` as the scalar constant `v` and declares it.
  void defineScalar(Value value, int64_t v);
  /// Where this rank's block of `op`'s first operand lies in the global
  /// tensor, for kernels keyed by the global index (dropout): the whole
  /// tensor on one rank; in an SPMD program read from the op's
  /// `dist.layout` attribute, which it must carry (an error at the op).
  LogicalResult globalBlock(Operation *op, Shape &globalShape,
                            Shape &blockOffset);

  const EntryInfo &entry;
  int64_t rank;
  AsmState &asmState;
  raw_ostream &os;
  EmitterName emitter;

private:
  /// emitOp for an op this rank runs.
  LogicalResult emitRunOp(Operation *op);
  /// Finds this rank's first forward and last backward op of each
  /// micro-batch (once, on the first emitOp).
  void findMicroBatchBounds();

  llvm::DenseMap<Value, std::string> names;
  llvm::DenseMap<Value, int64_t> scalars;
  /// The run of skipped ops not yet commented on.
  int64_t skipped = 0;
  int64_t skippedStage = -1;
  /// Micro-batch bounds on this rank: op -> micro-batch.
  bool boundsFound = false;
  llvm::DenseMap<Operation *, int64_t> firstForward, lastBackward;
};

/// Checks the pipeline attributes of a pipelined entry's ops: `dist.stage`
/// in [0, stages) on every op that has operands, and send/recv on the
/// pipeline axis. Called by readEntry.
LogicalResult verifyPipelineOps(const EntryInfo &entry,
                                const EmitterName &emitter);

//===----------------------------------------------------------------------===//
// The program around the step functions
//===----------------------------------------------------------------------===//

/// Prints `loomProgramSpec()` (mesh, arguments, results, each rank's blocks
/// and the loop-carried pairs) and the step tables `loomStepsF32()` and
/// `loomStepsF64()`, which list `loom_<entry>_rank<r><T>` for every rank.
LogicalResult emitProgramSpec(const EntryInfo &entry, raw_ostream &os);

/// Writes an emitted program: with an empty `dir`, the first file to `os`;
/// otherwise every file into `dir` (created if needed) and their paths to
/// `os`. Errors are reported at `module`.
LogicalResult
writeProgramFiles(ModuleOp module,
                  ArrayRef<std::pair<std::string, std::string>> files,
                  StringRef dir, raw_ostream &os);

} // namespace mlir::loom::emit

#endif // LOOM_TARGET_COMMON_EMITTERSUPPORT_H

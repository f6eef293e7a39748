//===- Driver.h - The loomc compiler driver as a library --------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The driver runs Loom's phases (DESIGN.md §1) on one model graph: it loads
// the input by its extension, runs `loom-<phase>-pipeline` for each phase up
// to `compileTo`, and writes the result. `loomc`, the C API and the Python
// package all call it, so it never exits the process and reports every
// problem through the MLIR context's diagnostic engine.
//
// `CompileOptions` mirrors the stable command line of DESIGN.md §8: one
// member per row of the option table CompileOptions.def, which also makes
// `loomc`'s flags and the C API's option names. An option of a phase that
// `--compile-to` stops before (the table's phase column) is rejected by
// `compile` with an error naming the flag, so no flag is ever silently
// ignored.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DRIVER_DRIVER_H
#define LOOM_DRIVER_DRIVER_H

#include "loom/Target/ONNX/ImportOptions.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace mlir {
class MLIRContext;
class OpPassManager;
namespace loom {

/// The phases in order; `--compile-to` names one.
enum class Phase { Import, Autodiff, Sharding, Pipeline, Partition, Codegen };

/// The phase spelled `name` (`import`, `autodiff`, ...), if any.
std::optional<Phase> parsePhase(StringRef name);

/// The spelling of `phase`.
StringRef stringifyPhase(Phase phase);

/// The C++ types of the option kinds of CompileOptions.def.
namespace option_kind {
using Text = std::optional<std::string>;
using Integer = std::optional<int64_t>;
using Real = std::optional<double>;
using Switch = bool;
} // namespace option_kind

/// The phase an option belongs to (the PHASE column of CompileOptions.def):
/// the phase that first reads it, which `--compile-to` must reach.
enum class OptionPhase {
  /// Read by every phase (`--explain`).
  Any,
  Autodiff,
  Sharding,
  Pipeline,
  Partition,
  Codegen,
  /// The sharding phase with `--cluster` (the strategy search reads it),
  /// else the partition phase (the layout assignment does).
  Search
};

/// Everything `loomc` accepts (DESIGN.md §8): the input, the output and the
/// last phase, then one member per row of CompileOptions.def.
struct CompileOptions {
  /// The model graph: `.json` (graph JSON), `.mlir` (textual IR); `.onnx`
  /// is recognised and not implemented yet.
  std::string inputFile;
  /// Where the result goes; "-" is stdout.
  std::string outputFile = "-";
  /// The last phase to run.
  Phase compileTo = Phase::Import;

  /// The options of CompileOptions.def, one member per row: `Text`,
  /// `Integer` and `Real` options are unset until given, `Switch` options
  /// false.
#define LOOM_OPTION(NAME, FIELD, KIND, ...) option_kind::KIND FIELD{};
#include "loom/Driver/CompileOptions.def"

  /// Layers per stage, e.g. "3,3,2" (from a strategy file's
  /// `layer_stages`); unset for an even split. Derived by the driver, not a
  /// flag.
  std::optional<std::string> stageLayers;
  /// The pieces the batch is cut into before one rank runs one
  /// (micro-batches x data-parallel ranks), for loom-interleave-copies'
  /// divisibility check. Derived by the driver, not a flag.
  int64_t copyBatchShards = 1;

  // Where the outputs go when the driver is embedded (the C API); `loomc`
  // leaves both unset.
  /// The stream that takes `--report` and the codegen phase's summary;
  /// stdout when null.
  llvm::raw_ostream *reportStream = nullptr;
  /// When set, receives the plan JSON of the run (what `--plan-json`
  /// writes; at the sharding phase, the plan of a lowered copy), so an
  /// embedder needs no file.
  std::string *planJsonText = nullptr;

  /// The report stream: `reportStream` or stdout.
  llvm::raw_ostream &getReportStream() const;
};

/// The phase `phase` names for `options`; none for `OptionPhase::Any`.
std::optional<Phase> resolveOptionPhase(OptionPhase phase,
                                        const CompileOptions &options);

/// Reports an error for each option whose phase has not landed (or which
/// `compileTo` stops short of), naming the flag, and for each value the
/// phase would refuse (an unknown `--optimizer`, AdamW flags with SGD, ...).
/// Fails if there was any.
LogicalResult checkOptions(const CompileOptions &options, MLIRContext *context);

/// Loads `path` by its extension into a module, reporting through
/// `context`: graph JSON and ONNX (`.onnx`) through their importers, `.mlir`
/// through the parser.
/// The file's buffer is added to `sourceMgr` so that diagnostics can quote
/// the source.
/// `onnx` applies to `.onnx` input (onnxImportOptions gives it from the
/// flags).
OwningOpRef<ModuleOp> loadInput(StringRef path, MLIRContext *context,
                                llvm::SourceMgr &sourceMgr,
                                const OnnxImportOptions &onnx = {});

/// The ONNX import options `--onnx-constants` / `--onnx-parameters` give
/// (comma-separated initializer names).
OnnxImportOptions onnxImportOptions(const CompileOptions &options);

/// The formats `loadInputBuffer` reads.
enum class InputFormat { GraphJSON, MLIR, ONNX };

/// Loads a graph from `buffer` (its identifier names it in diagnostics)
/// into a module, reporting through `context`; `loadInput` without the
/// file. The buffer is added to `sourceMgr`.
OwningOpRef<ModuleOp>
loadInputBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer, InputFormat format,
                MLIRContext *context, llvm::SourceMgr &sourceMgr,
                const OnnxImportOptions &onnx = {});

/// Registers and loads every dialect Loom reads into `context`, and turns
/// off printing the whole op with each diagnostic (errors name their
/// location instead). `compile` calls it; an embedder calls it once per
/// context before loading.
void prepareContext(MLIRContext *context);

/// Appends to `pm` the phase pipelines up to `options.compileTo`, each from
/// its builder (`loom-<phase>-pipeline`), with the options the flags give,
/// and the report passes the flags ask for. This is the whole compiler:
/// `loomc --dump-pass-pipeline` prints it, and `loom-opt` with that text
/// reproduces `loomc`'s IR. `checkOptions` must have passed.
LogicalResult buildCompilerPipeline(const CompileOptions &options,
                                    OpPassManager &pm, MLIRContext *context);

/// Runs every phase up to `options.compileTo` on `module` in place (import
/// onwards; `module` as `loadInput` returned it): the pipeline
/// `buildCompilerPipeline` builds, printed first to stderr under
/// `dumpPassPipeline`. Fails after reporting the first problem.
LogicalResult runPhases(const CompileOptions &options, ModuleOp module);

/// Checks the options, loads the input and runs every phase up to
/// `options.compileTo`. Returns null after reporting the first problem.
OwningOpRef<ModuleOp> compile(const CompileOptions &options,
                              MLIRContext *context, llvm::SourceMgr &sourceMgr);

/// The codegen phase (`--emit host`): emits the per-rank host program of the
/// partitioned `module` into the directory `options.outputFile` (sources,
/// CMakeLists.txt and the partitioned IR as step.mlir), builds it with cmake
/// and ninja against this Loom's build tree at -O2, and writes
/// `launch.sh`, which runs every rank with mpirun and passes its arguments
/// to the training executable (docs/Codegen.md).
LogicalResult emitExecutable(const CompileOptions &options, ModuleOp module);

/// `compile`, then writes the IR to `options.outputFile` (through a
/// temporary file renamed into place, so a failure never leaves a partial
/// file), or with `--emit` the executable (emitExecutable). What `loomc`
/// runs.
LogicalResult compileToFile(const CompileOptions &options, MLIRContext *context,
                            llvm::SourceMgr &sourceMgr);

} // namespace loom
} // namespace mlir

#endif // LOOM_DRIVER_DRIVER_H

//===- loomc.cpp - The Loom compiler driver -------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loomc INPUT(.json|.onnx|.mlir) [options] [-o OUT]`: the command line of
// DESIGN.md §8 over the driver library (include/loom/Driver/Driver.h). This
// file only parses flags into `CompileOptions` (one flag per row of the
// option table, include/loom/Driver/CompileOptions.def, besides the input,
// `-o` and `--compile-to`) and prints diagnostics; every decision is the
// library's.
//
//===----------------------------------------------------------------------===//

#include "loom/Driver/Driver.h"
#include "loom/Support/CommandLine.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace llvm;
using namespace mlir;

namespace {
cl::OptionCategory loomcCategory("loomc options");

cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                               cl::desc("<input .json|.onnx|.mlir>"),
                               cl::cat(loomcCategory));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(loomcCategory));
cl::opt<std::string>
    compileTo("compile-to",
              cl::desc("Stop after this phase and print the IR: import, "
                       "autodiff, sharding, pipeline, partition, codegen"),
              cl::init("import"), cl::cat(loomcCategory));

/// The flag of an option of `kind` (CompileOptions.def): `cl::opt` of the
/// kind's value type.
template <typename Kind>
struct Flag;
template <>
struct Flag<mlir::loom::option_kind::Text> {
  using type = cl::opt<std::string>;
};
template <>
struct Flag<mlir::loom::option_kind::Integer> {
  using type = cl::opt<int64_t>;
};
template <>
struct Flag<mlir::loom::option_kind::Real> {
  using type = cl::opt<double>;
};
template <>
struct Flag<mlir::loom::option_kind::Switch> {
  using type = cl::opt<bool>;
};

// One flag per row of CompileOptions.def; `mlir::loom::checkOptions` rejects
// those of a phase that `--compile-to` stops before, by name.
#define LOOM_OPTION(NAME, FIELD, KIND, VALUE, PHASE, SCOPE, PASSES, HELP)      \
  Flag<mlir::loom::option_kind::KIND>::type FIELD##Flag(                       \
      NAME, cl::desc(HELP), cl::value_desc(VALUE), cl::cat(loomcCategory));
#include "loom/Driver/CompileOptions.def"

/// Sets `field` from `flag` if the user gave it.
template <typename T, typename U>
void read(const cl::opt<T> &flag, std::optional<U> &field) {
  if (flag.getNumOccurrences())
    field = static_cast<U>(flag.getValue());
}
void read(const cl::opt<bool> &flag, bool &field) { field = flag; }
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  // --help lists loomc's flags, not the hundreds LLVM's libraries register
  // (--help-hidden still shows everything).
  cl::HideUnrelatedOptions(loomcCategory);
  cl::ParseCommandLineOptions(argc, argv, "Loom compiler driver\n");
  // A flag given twice is an error, not the last one winning
  // (docs/Testing.md, "Bad input").
  if (auto repeated = ::loom::support::findRepeatedFlag()) {
    llvm::errs() << "loomc: error: " << *repeated << "\n";
    return 1;
  }

  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler sourceHandler(sourceMgr, &context);
  // Diagnostics without a source location (flags, files, JSON paths) print
  // as `loomc: error: ...` instead of `<unknown>:0: error: ...`; the rest go
  // to the source manager's handler, which quotes the offending line.
  ScopedDiagnosticHandler plainHandler(&context, [](Diagnostic &diag) {
    if (!isa<UnknownLoc>(diag.getLocation()))
      return failure();
    auto print = [](Diagnostic &d) {
      StringRef severity = "error";
      switch (d.getSeverity()) {
      case DiagnosticSeverity::Note:
        severity = "note";
        break;
      case DiagnosticSeverity::Warning:
        severity = "warning";
        break;
      case DiagnosticSeverity::Remark:
        severity = "remark";
        break;
      case DiagnosticSeverity::Error:
        break;
      }
      llvm::errs() << "loomc: " << severity << ": " << d.str() << "\n";
    };
    print(diag);
    for (Diagnostic &note : diag.getNotes())
      print(note);
    return success();
  });
  // Passes explain their decisions with remarks; the driver shows them only
  // under --explain (registered last, so it sees every diagnostic first).
  ScopedDiagnosticHandler remarkFilter(&context, [](Diagnostic &diag) {
    return success(diag.getSeverity() == DiagnosticSeverity::Remark &&
                   !explainFlag);
  });

  mlir::loom::CompileOptions options;
  options.inputFile = inputFile;
  options.outputFile = outputFile;
  std::optional<mlir::loom::Phase> phase = mlir::loom::parsePhase(compileTo);
  if (!phase) {
    emitError(UnknownLoc::get(&context))
        << "--compile-to: expected import, autodiff, sharding, pipeline, "
           "partition or codegen, found '"
        << compileTo << "'";
    return 1;
  }
  options.compileTo = *phase;
#define LOOM_OPTION(NAME, FIELD, ...) read(FIELD##Flag, options.FIELD);
#include "loom/Driver/CompileOptions.def"
  // `--emit` is the codegen phase: it runs every phase unless --compile-to
  // says otherwise (which checkOptions then rejects by name).
  if (options.emit && !compileTo.getNumOccurrences())
    options.compileTo = mlir::loom::Phase::Codegen;

  return failed(mlir::loom::compileToFile(options, &context, sourceMgr)) ? 1
                                                                         : 0;
}

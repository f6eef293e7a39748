//===- loomc.cpp - The Loom compiler driver -------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loomc INPUT(.json|.onnx|.mlir) [options] [-o OUT]`: the command line of
// DESIGN.md §8 over the driver library (include/loom/Driver/Driver.h). This
// file only parses flags into `CompileOptions` and prints diagnostics; every
// decision is the library's.
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

// Options of every phase: the driver honours those of the phases that have
// landed (import, autodiff) and rejects the others by name until theirs does.
cl::opt<std::string> cluster("cluster", cl::desc("Cluster preset or spec file"),
                             cl::value_desc("preset|file"),
                             cl::cat(loomcCategory));
cl::opt<long long> devices("devices", cl::desc("Number of devices"),
                           cl::cat(loomcCategory));
cl::opt<std::string> mesh("mesh", cl::desc("Mesh shape, e.g. dp=2,tp=4"),
                          cl::cat(loomcCategory));
cl::opt<std::string> parallelConfig("parallel-config",
                                    cl::desc("Parallel config (JSON or file)"),
                                    cl::cat(loomcCategory));
cl::opt<std::string> strategy("strategy", cl::desc("Strategy file"),
                              cl::cat(loomcCategory));
cl::opt<double> memoryLimit("memory-limit",
                            cl::desc("Memory limit per device (GiB)"),
                            cl::cat(loomcCategory));
cl::opt<long long> pipelineStages("pipeline-stages",
                                  cl::desc("Number of pipeline stages"),
                                  cl::cat(loomcCategory));
cl::opt<long long> microBatches("micro-batches",
                                cl::desc("Number of micro-batches (gradient "
                                         "accumulation in autodiff)"),
                                cl::cat(loomcCategory));
cl::opt<std::string> schedule("schedule",
                              cl::desc("Pipeline schedule: 1f1b or gpipe"),
                              cl::cat(loomcCategory));
cl::opt<std::string> optimizer("optimizer", cl::desc("Optimizer: adamw (default) or sgd"),
                               cl::cat(loomcCategory));
cl::opt<double> lr("lr", cl::desc("Learning rate"), cl::cat(loomcCategory));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay (default: torch.optim's, "
                                     "0.01 for adamw, 0 for sgd)"),
                            cl::cat(loomcCategory));
cl::opt<double> beta1("beta1", cl::desc("AdamW beta1"), cl::cat(loomcCategory));
cl::opt<double> beta2("beta2", cl::desc("AdamW beta2"), cl::cat(loomcCategory));
cl::opt<double> eps("eps", cl::desc("AdamW epsilon"), cl::cat(loomcCategory));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum"),
                         cl::cat(loomcCategory));
cl::opt<double> clipNorm("clip-norm", cl::desc("Gradient-norm clipping"),
                         cl::cat(loomcCategory));
cl::opt<std::string> emit("emit", cl::desc("Emit per-rank code: host or cuda"),
                          cl::cat(loomcCategory));
cl::opt<std::string>
    emitDtypes("emit-dtypes",
               cl::desc("Precisions the emitted step is built for: f32, f64 "
                        "or f32,f64 (default)"),
               cl::cat(loomcCategory));
cl::opt<std::string> planJson("plan-json", cl::desc("Write the plan as JSON"),
                              cl::value_desc("file"), cl::cat(loomcCategory));
cl::opt<bool> report("report", cl::desc("Print the plan report"),
                     cl::cat(loomcCategory));
cl::opt<bool> explain("explain",
                      cl::desc("Show the remarks in which passes explain their decisions"),
                      cl::cat(loomcCategory));
cl::opt<std::string> timeline("timeline", cl::desc("Write a step timeline"),
                              cl::value_desc("file"), cl::cat(loomcCategory));
cl::opt<bool> dumpPassPipeline(
    "dump-pass-pipeline",
    cl::desc("Print the pass pipeline loomc runs (as loom-opt's "
             "--pass-pipeline reads it) to stderr"),
    cl::cat(loomcCategory));

/// `opt`'s value if the user gave it.
template <typename T, typename U = T>
std::optional<U> given(const cl::opt<T> &opt) {
  if (opt.getNumOccurrences() == 0)
    return std::nullopt;
  return static_cast<U>(opt.getValue());
}
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
                   !explain);
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
  // `--emit` is the codegen phase: it runs every phase unless --compile-to
  // says otherwise (which checkOptions then rejects by name).
  if (emit.getNumOccurrences() && !compileTo.getNumOccurrences())
    options.compileTo = mlir::loom::Phase::Codegen;
  options.cluster = given(cluster);
  options.devices = given<long long, int64_t>(devices);
  options.mesh = given(mesh);
  options.parallelConfig = given(parallelConfig);
  options.strategy = given(strategy);
  options.memoryLimitGiB = given(memoryLimit);
  options.pipelineStages = given<long long, int64_t>(pipelineStages);
  options.microBatches = given<long long, int64_t>(microBatches);
  options.schedule = given(schedule);
  options.optimizer = given(optimizer);
  options.lr = given(lr);
  options.weightDecay = given(weightDecay);
  options.beta1 = given(beta1);
  options.beta2 = given(beta2);
  options.eps = given(eps);
  options.momentum = given(momentum);
  options.clipNorm = given(clipNorm);
  options.emit = given(emit);
  options.emitDtypes = given(emitDtypes);
  options.planJson = given(planJson);
  options.report = report;
  options.explain = explain;
  options.timeline = given(timeline);
  options.dumpPassPipeline = dumpPassPipeline;

  return failed(mlir::loom::compileToFile(options, &context, sourceMgr)) ? 1
                                                                         : 0;
}

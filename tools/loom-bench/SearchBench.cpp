//===- SearchBench.cpp - loom-bench search: JSON to a searched plan -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom-bench search MODEL.json --cluster PRESET|FILE --devices N
//                  [--memory-limit GIB]
//
// Runs what `loomc MODEL.json --compile-to=sharding --cluster ... --devices
// N` runs, in process and phase by phase through the driver library, and
// prints each phase's wall and process CPU time: import (context, JSON,
// import pipeline), autodiff, and the strategy search (dist-search-strategy
// over every mesh and outer choice), then the chosen plan's mesh and
// predicted step time. The numbers docs/Performance.md records under
// "Strategy search time".
//
//===----------------------------------------------------------------------===//

#include "BenchCommands.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Driver/Driver.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <ctime>

using ::mlir::loom::kPipelineAttrName;
using ::mlir::loom::kPlanAttrName;

using namespace mlir;
using namespace mlir::loom;
namespace cl = llvm::cl;

llvm::cl::SubCommand mlir::loom::bench::searchCommand(
    "search", "Time JSON -> searched plan (import, autodiff, strategy "
              "search) in process");

static cl::opt<std::string> input(cl::Positional, cl::desc("<model.json>"),
                                  cl::Required,
                                  cl::sub(mlir::loom::bench::searchCommand));
static cl::opt<std::string> cluster("cluster",
                                    cl::desc("Cluster preset or spec file"),
                                    cl::init("dgx-a100-80g"),
                                    cl::sub(mlir::loom::bench::searchCommand));
static cl::opt<int64_t> devices("devices", cl::desc("Device count"),
                                cl::init(8),
                                cl::sub(mlir::loom::bench::searchCommand));
static cl::opt<double>
    memoryLimit("memory-limit",
                cl::desc("Memory limit per device in GiB (0: the device's)"),
                cl::init(0), cl::sub(mlir::loom::bench::searchCommand));
static cl::opt<int64_t> pipelineStages(
    "pipeline-stages",
    cl::desc("Pipeline stages (0: the search chooses, the default here; 1: "
             "none)"),
    cl::init(0), cl::sub(mlir::loom::bench::searchCommand));
static cl::opt<int64_t>
    microBatches("micro-batches",
                 cl::desc("Micro-batches per step (0: the search chooses)"),
                 cl::init(0), cl::sub(mlir::loom::bench::searchCommand));

namespace {
/// Wall and process CPU time of one phase.
class PhaseTimer {
public:
  PhaseTimer()
      : wallStart(std::chrono::steady_clock::now()), cpuStart(std::clock()) {}
  void print(StringRef phase) const {
    double wall = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - wallStart)
                      .count();
    double cpu = double(std::clock() - cpuStart) / CLOCKS_PER_SEC;
    llvm::outs() << phase << "_s: " << llvm::format("%.3f", wall) << " (cpu "
                 << llvm::format("%.3f", cpu) << ")\n";
  }

private:
  std::chrono::steady_clock::time_point wallStart;
  std::clock_t cpuStart;
};
} // namespace

int mlir::loom::bench::runSearchBench() {
  if (devices <= 0) {
    llvm::errs() << "loom-bench search: error: --devices must be at least 1, "
                    "got "
                 << devices.getValue() << "\n";
    return 1;
  }
  CompileOptions options;
  options.inputFile = input;
  options.compileTo = Phase::Sharding;
  options.cluster = cluster.getValue();
  options.devices = devices.getValue();
  if (memoryLimit > 0)
    options.memoryLimitGiB = memoryLimit.getValue();

  PhaseTimer total;
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  // Passes explain their decisions with remarks, which loomc shows only
  // under --explain; a benchmark prints its numbers alone.
  ScopedDiagnosticHandler remarkFilter(&context, [](Diagnostic &diag) {
    return success(diag.getSeverity() == DiagnosticSeverity::Remark);
  });

  PhaseTimer importTimer;
  CompileOptions importOnly;
  importOnly.inputFile = input;
  importOnly.compileTo = Phase::Import;
  OwningOpRef<ModuleOp> module = compile(importOnly, &context, sourceMgr);
  if (!module)
    return 1;
  importTimer.print("import");

  PhaseTimer autodiffTimer;
  PassManager autodiff(&context);
  buildAutodiffPipeline(autodiff, AutodiffPassOptions{});
  if (failed(autodiff.run(*module)))
    return 1;
  autodiffTimer.print("autodiff");

  // The search pass itself rather than the driver's sharding phase, so
  // that the pipeline options reach it.
  PhaseTimer searchTimer;
  dist::SearchStrategyPassOptions search;
  search.cluster = cluster.getValue();
  search.devices = devices.getValue();
  if (memoryLimit > 0)
    search.memoryLimitGiB = memoryLimit.getValue();
  search.pipelineStages = pipelineStages.getValue();
  search.microBatches = microBatches.getValue();
  PassManager searchPass(&context);
  searchPass.addPass(dist::createSearchStrategyPass(search));
  if (failed(searchPass.run(*module)))
    return 1;
  searchTimer.print("search");
  total.print("total");

  for (auto mesh : module->getOps<dist::MeshOp>())
    if (dist::ValueOrError<dist::Mesh> value = mesh.getMesh())
      llvm::outs() << "mesh: " << value->toString() << "\n";
  auto plan = (*module)->getAttrOfType<dist::PlanAttr>(kPlanAttrName);
  if (plan)
    llvm::outs() << "step_time_s: " << llvm::format("%.6g", plan.getStepTime())
                 << "\n";
  // The pipeline, when the search chose one: stages, micro-batches, the
  // schedule, the stage layers, the bubble and the fullest stage's memory.
  if (auto pipeline =
          (*module)->getAttrOfType<dist::PipelineAttr>(kPipelineAttrName)) {
    llvm::outs() << "pipeline: pp=" << pipeline.getStages()
                 << " micro_batches=" << pipeline.getMicroBatches()
                 << " schedule="
                 << ::loom::pipeline::getScheduleKindName(
                        pipeline.getSchedule());
    if (pipeline.getVirtualStages() > 1)
      llvm::outs() << " virtual_stages=" << pipeline.getVirtualStages();
    llvm::outs() << " stage_layers=";
    for (auto [index, range] : llvm::enumerate(pipeline.getStageLayers()))
      llvm::outs() << (index ? "," : "") << "[" << range.first << ","
                   << range.end << ")";
    llvm::outs() << "\n";
    if (dist::PipelinePredictionAttr predicted = pipeline.getPredicted()) {
      double step = predicted.getStepTime();
      double bubble = predicted.getBubble();
      double memory = 0;
      for (int64_t bytes : predicted.getStageMemoryBytes().asArrayRef())
        memory = std::max(memory, double(bytes));
      llvm::outs() << "bubble_percent: "
                   << llvm::format("%.1f", step > 0 ? 100 * bubble / step : 0.0)
                   << "\n";
      llvm::outs() << "memory_gib_per_device: "
                   << llvm::format("%.1f", memory / double(int64_t(1) << 30))
                   << "\n";
    }
  } else if (plan) {
    llvm::outs() << "memory_gib_per_device: "
                 << llvm::format("%.1f", double(plan.getMemoryBytesPerDevice()) /
                                             double(int64_t(1) << 30))
                 << "\n";
  }
  return 0;
}

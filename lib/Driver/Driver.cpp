//===- Driver.cpp - The loomc compiler driver as a library ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// compile() is the whole driver:
//
//   1. reject options whose phase has not landed or which `--compile-to`
//      stops before (each by its flag), and values the phases would refuse;
//   2. load the input by its extension (graph JSON importer, MLIR parser);
//   3. run `loom-<phase>-pipeline` for each phase up to `compileTo`
//      (import, then autodiff with the optimizer flags, then the strategy
//      search when `--cluster` is given (`--report` prints its plan), then
//      partition with
//      the mesh, strategies and parallel config; the partition phase runs
//      in steps so that the device count is checked against the mesh and
//      the plan can be dumped before partitioning).
//
// compile() is checkOptions, prepareContext, loadInput and runPhases in
// turn; an embedder (the C API) calls the pieces itself, loading from memory
// with loadInputBuffer and capturing the report and the plan JSON through
// `CompileOptions::reportStream` and `planJsonText`.
//
// compileToFile() then writes the IR through a temporary file, or for the
// codegen phase (`--emit host|cuda`) emits, builds and wraps the per-rank
// program (EmitExecutable.cpp). Nothing here exits or prints directly: errors
// go to the context's diagnostic engine so that a C API caller can collect
// them.
//
//===----------------------------------------------------------------------===//

#include "loom/Driver/Driver.h"

#include "loom/Analysis/Cost/ClusterSpec.h"
#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Dist/Transforms/PipelineTimeline.h"
#include "loom/Dialect/Dist/Transforms/PlanJSON.h"
#include "loom/Dialect/Dist/Transforms/PlanReport.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/InitAllDialects.h"
#include "loom/Target/GraphJSON/GraphJSON.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;

llvm::raw_ostream &CompileOptions::getReportStream() const {
  return reportStream ? *reportStream : llvm::outs();
}

std::optional<Phase> mlir::loom::parsePhase(StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("import", Phase::Import)
      .Case("autodiff", Phase::Autodiff)
      .Case("sharding", Phase::Sharding)
      .Case("pipeline", Phase::Pipeline)
      .Case("partition", Phase::Partition)
      .Case("codegen", Phase::Codegen)
      .Default(std::nullopt);
}

StringRef mlir::loom::stringifyPhase(Phase phase) {
  switch (phase) {
  case Phase::Import:
    return "import";
  case Phase::Autodiff:
    return "autodiff";
  case Phase::Sharding:
    return "sharding";
  case Phase::Pipeline:
    return "pipeline";
  case Phase::Partition:
    return "partition";
  case Phase::Codegen:
    return "codegen";
  }
  return "unknown";
}

/// Whether this build implements `phase`. The sharding phase is the
/// strategy search (it runs when `--cluster` is given; user strategies alone
/// are read by the partition phase's layout assignment). The pipeline phase
/// only runs with more than one stage, so a partition without it is
/// complete.
static bool isImplemented(Phase phase) {
  return phase == Phase::Import || phase == Phase::Autodiff ||
         phase == Phase::Sharding || phase == Phase::Pipeline ||
         phase == Phase::Partition || phase == Phase::Codegen;
}

LogicalResult mlir::loom::checkOptions(const CompileOptions &options,
                                       MLIRContext *context) {
  bool ok = true;
  auto error = [&]() {
    ok = false;
    return emitError(UnknownLoc::get(context));
  };
  auto reject = [&](StringRef flag, Phase phase) {
    if (!isImplemented(phase)) {
      error() << flag << " is not implemented yet (it belongs to the "
              << stringifyPhase(phase) << " phase, which has not landed)";
      return;
    }
    // A flag of a phase that `--compile-to` stops before would do nothing.
    if (phase > options.compileTo)
      error() << flag << " belongs to the " << stringifyPhase(phase)
              << " phase, which --compile-to=" << stringifyPhase(options.compileTo)
              << " stops before";
  };
  if (!isImplemented(options.compileTo))
    error() << "--compile-to=" << stringifyPhase(options.compileTo)
            << " is not implemented yet; the phases available are: import, "
               "autodiff, sharding, pipeline, partition, codegen";
  // Each option in the phase that first reads it.
  if (options.optimizer)
    reject("--optimizer", Phase::Autodiff);
  if (options.lr)
    reject("--lr", Phase::Autodiff);
  if (options.weightDecay)
    reject("--weight-decay", Phase::Autodiff);
  if (options.beta1)
    reject("--beta1", Phase::Autodiff);
  if (options.beta2)
    reject("--beta2", Phase::Autodiff);
  if (options.eps)
    reject("--eps", Phase::Autodiff);
  if (options.momentum)
    reject("--momentum", Phase::Autodiff);
  if (options.clipNorm)
    reject("--clip-norm", Phase::Autodiff);
  // Gradient accumulation: autodiff slices the batch into micro-batches
  // (the pipeline phase will schedule the same micro-batches).
  if (options.microBatches)
    reject("--micro-batches", Phase::Autodiff);
  // With a cluster, the search reads the device and strategy options first.
  Phase searchPhase = options.cluster ? Phase::Sharding : Phase::Partition;
  if (options.cluster)
    reject("--cluster", Phase::Sharding);
  if (options.devices)
    reject("--devices", searchPhase);
  if (options.mesh)
    reject("--mesh", searchPhase);
  if (options.parallelConfig)
    reject("--parallel-config", searchPhase);
  if (options.strategy)
    reject("--strategy", searchPhase);
  if (options.memoryLimitGiB)
    reject("--memory-limit", Phase::Sharding);
  if (options.planJson)
    reject("--plan-json", Phase::Partition);
  if (options.report)
    reject("--report", Phase::Sharding);
  if (options.pipelineStages)
    reject("--pipeline-stages", Phase::Pipeline);
  if (options.schedule)
    reject("--schedule", Phase::Pipeline);
  if (options.timeline)
    reject("--timeline", Phase::Pipeline);
  if (options.emit)
    reject("--emit", Phase::Codegen);

  // Values the autodiff phase would refuse, named by their flags.
  std::string optimizer = options.optimizer.value_or("adamw");
  if (optimizer != "adamw" && optimizer != "sgd")
    error() << "--optimizer: expected adamw or sgd, found '" << optimizer
            << "'";
  if (optimizer == "adamw" && options.momentum)
    error() << "--momentum applies to --optimizer sgd, not adamw";
  if (optimizer == "sgd")
    for (auto [flag, value] :
         {std::pair{"--beta1", options.beta1},
          std::pair{"--beta2", options.beta2}, std::pair{"--eps", options.eps}})
      if (value)
        error() << flag << " applies to --optimizer adamw, not sgd";
  auto nonNegative = [&](StringRef flag, std::optional<double> value) {
    if (value && !(*value >= 0.0))
      error() << flag << ": expected a value >= 0, found " << *value;
  };
  nonNegative("--lr", options.lr);
  nonNegative("--weight-decay", options.weightDecay);
  nonNegative("--momentum", options.momentum);
  nonNegative("--clip-norm", options.clipNorm);
  if (options.eps && !(*options.eps > 0.0))
    error() << "--eps: expected a value > 0, found " << *options.eps;
  for (auto [flag, value] : {std::pair{"--beta1", options.beta1},
                             std::pair{"--beta2", options.beta2}})
    if (value && !(*value >= 0.0 && *value < 1.0))
      error() << flag << ": expected a value in [0, 1), found " << *value;
  if (options.compileTo == Phase::Sharding && !options.cluster)
    error() << "--compile-to=sharding needs --cluster (a preset or a cluster "
               "spec file) to search strategies";
  if (options.memoryLimitGiB && !options.cluster)
    error() << "--memory-limit applies to the strategy search: give --cluster";
  if (options.report && !options.cluster)
    error() << "--report prints the searched plan: give --cluster";
  if (options.memoryLimitGiB && !(*options.memoryLimitGiB > 0.0))
    error() << "--memory-limit: expected a value > 0 (GiB), found "
            << *options.memoryLimitGiB;
  if (options.cluster && options.compileTo >= Phase::Sharding &&
      !options.devices && !options.mesh && !options.parallelConfig &&
      !options.strategy)
    error() << "--cluster needs the devices: give --devices N (the search "
               "picks the mesh), --mesh, --parallel-config or --strategy";
  if (options.devices && *options.devices < 1)
    error() << "--devices: expected a value >= 1, found " << *options.devices;
  // Code generation: MPI programs of host ranks or of one GPU per rank.
  if (options.emit && *options.emit != "host" && *options.emit != "cuda")
    error() << "--emit: expected host or cuda, found '" << *options.emit << "'";
  if (options.emitDtypes) {
    if (!options.emit)
      error() << "--emit-dtypes applies to --emit: give --emit host";
    llvm::SmallVector<StringRef> dtypes;
    StringRef(*options.emitDtypes).split(dtypes, ',');
    for (StringRef dtype : dtypes)
      if (dtype != "f32" && dtype != "f64")
        error() << "--emit-dtypes: expected a list of f32 and f64, found '"
                << dtype << "'";
  }
  if (options.compileTo == Phase::Codegen && !options.emit)
    error() << "--compile-to=codegen writes an executable: give --emit host";
  if (options.emit && (options.outputFile.empty() || options.outputFile == "-"))
    error() << "--emit " << *options.emit
            << " writes sources, a build and launch.sh into a directory: give "
               "-o DIR";
  if (options.compileTo >= Phase::Partition && !options.devices &&
      !options.mesh && !options.parallelConfig && !options.strategy)
    error() << "--compile-to=" << stringifyPhase(options.compileTo)
            << " needs the devices: give --devices N (data parallel), --mesh, "
               "--parallel-config or --strategy";
  if (options.microBatches && *options.microBatches < 1)
    error() << "--micro-batches: expected a value >= 1, found "
            << *options.microBatches;
  if (options.pipelineStages && *options.pipelineStages < 0)
    error() << "--pipeline-stages: expected 0 (the search chooses) or a "
               "stage count >= 1, found "
            << *options.pipelineStages;
  if (options.pipelineStages && *options.pipelineStages == 0 &&
      !options.cluster)
    error() << "--pipeline-stages 0 lets the strategy search choose the "
               "stages: give --cluster";
  if (options.schedule && *options.schedule != "gpipe" &&
      *options.schedule != "1f1b")
    error() << "--schedule: expected gpipe or 1f1b, found '"
            << *options.schedule << "'";
  return success(ok);
}

OwningOpRef<ModuleOp> mlir::loom::loadInput(StringRef path,
                                            MLIRContext *context,
                                            llvm::SourceMgr &sourceMgr) {
  StringRef extension = llvm::sys::path::extension(path);
  bool isJson = extension == ".json";
  bool isMlir = extension == ".mlir";
  if (extension == ".onnx") {
    emitError(UnknownLoc::get(context))
        << "input '" << path << "': ONNX import is not implemented yet";
    return {};
  }
  if (!isJson && !isMlir) {
    emitError(UnknownLoc::get(context))
        << "input '" << path << "': unsupported extension '" << extension
        << "', expected .json (graph JSON) or .mlir (textual IR)";
    return {};
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (std::error_code error = file.getError()) {
    emitError(UnknownLoc::get(context))
        << "cannot read input '" << path << "': " << error.message();
    return {};
  }
  return loadInputBuffer(std::move(*file),
                         isJson ? InputFormat::GraphJSON : InputFormat::MLIR,
                         context, sourceMgr);
}

OwningOpRef<ModuleOp>
mlir::loom::loadInputBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                            InputFormat format, MLIRContext *context,
                            llvm::SourceMgr &sourceMgr) {
  std::string name = buffer->getBufferIdentifier().str();
  unsigned bufferId = sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
  if (format == InputFormat::GraphJSON)
    return importGraphJson(sourceMgr.getMemoryBuffer(bufferId)->getBuffer(),
                           name, context);
  if (bufferId == sourceMgr.getMainFileID())
    return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context));
  // A later buffer (an embedder loading again into the same source
  // manager): parse it alone.
  return parseSourceString<ModuleOp>(
      sourceMgr.getMemoryBuffer(bufferId)->getBuffer(), ParserConfig(context),
      name);
}

/// The mesh option of dist-insert-reshards: --mesh, or pure data parallel
/// over --devices when nothing else describes the devices.
static std::string getMeshSpec(const CompileOptions &options) {
  if (options.mesh)
    return *options.mesh;
  // The strategy search created the mesh.
  if (options.cluster)
    return "";
  if (options.devices && !options.parallelConfig && !options.strategy)
    return "dp=" + std::to_string(*options.devices);
  return "";
}

/// Checks that --devices, when given, is the mesh's device count.
static LogicalResult checkDeviceCount(const CompileOptions &options,
                                      ModuleOp module) {
  if (!options.devices)
    return success();
  for (auto meshOp : module.getOps<dist::MeshOp>()) {
    dist::ValueOrError<dist::Mesh> mesh = meshOp.getMesh();
    if (!mesh)
      return meshOp.emitError(mesh.error());
    if (mesh->getNumDevices() == *options.devices)
      continue;
    std::string product;
    for (const dist::Mesh::Axis &axis : mesh->getAxes())
      product += (product.empty() ? "" : " x ") + axis.name + "=" +
                 std::to_string(axis.size);
    return emitError(UnknownLoc::get(module.getContext()))
           << "--devices " << *options.devices
           << " does not equal the number of devices of mesh @"
           << meshOp.getSymName() << " (" << product << " = "
           << mesh->getNumDevices() << ")";
  }
  return success();
}

LogicalResult mlir::loom::runShardingPhase(const CompileOptions &options,
                                           ModuleOp module) {
  dist::SearchStrategyPassOptions search;
  search.cluster = *options.cluster;
  if (options.devices)
    search.devices = *options.devices;
  if (options.mesh)
    search.meshSpec = *options.mesh;
  if (options.memoryLimitGiB)
    search.memoryLimitGiB = *options.memoryLimitGiB;
  if (options.parallelConfig)
    search.parallelConfig = *options.parallelConfig;
  if (options.strategy)
    search.strategyFile = *options.strategy;
  search.explain = options.explain;
  // The stages: 0 lets the search choose, S fixes them (the search then
  // plans one stage's mesh over the devices / S it is given in total).
  search.pipelineStages = options.pipelineStages.value_or(1);
  if (options.microBatches)
    search.microBatches = *options.microBatches;
  if (options.schedule)
    search.schedule = *options.schedule;
  PassManager pm(module.getContext());
  pm.addPass(dist::createSearchStrategyPass(search));
  return pm.run(module);
}

/// The pipeline stages of a partitioned module: each stage's ranks hold
/// their own stage's values (docs/Pipeline.md); {nullopt} without a
/// pipeline.
static SmallVector<std::optional<int64_t>> getStages(ModuleOp module) {
  SmallVector<std::optional<int64_t>> stages;
  auto pipeline = module->getAttrOfType<DictionaryAttr>("dist.pipeline");
  auto count = pipeline ? pipeline.getAs<IntegerAttr>("stages") : nullptr;
  if (!count || count.getInt() <= 1)
    return {std::nullopt};
  for (int64_t s = 0; s < count.getInt(); ++s)
    stages.push_back(s);
  return stages;
}

/// The largest peak live bytes of the functions of a partitioned module,
/// over its pipeline stages.
static int64_t getPartitionedPeak(ModuleOp module) {
  int64_t peak = 0;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      for (std::optional<int64_t> stage : getStages(module))
        peak = std::max(peak, dist::analyzeMemory(func, stage).getPeak());
  return peak;
}

/// What calibrateMemoryLimit settled on: the options to search with, and how
/// many searches it ran (1 when the first plan fit by liveness analysis).
struct CalibratedLimit {
  CompileOptions options;
  int rounds = 0;
  bool fits = false;
};

/// The search prices memory per op (parameters, gradients, optimizer
/// states, activations kept at the layouts the backward reads them in,
/// the transients of the ops outside the layers; docs/Search.md, "Memory"),
/// an additive model of a liveness peak. So before a partition the plan is
/// checked by the liveness analysis of the per-rank program it yields;
/// while that exceeds the limit, the search runs again (quietly) with its
/// limit scaled by limit / peak, a few rounds at most, and the first plan
/// that fits is taken. The model is not exact, so this can fail: then the
/// unscaled plan is kept and a warning gives both numbers.
static FailureOr<CalibratedLimit>
calibrateMemoryLimit(const CompileOptions &options, ModuleOp module) {
  dist::ValueOrError<dist::ClusterSpec> spec =
      dist::loadClusterSpec(*options.cluster);
  if (!spec)
    return emitError(module.getLoc()) << spec.error();
  constexpr double kGiB = double(int64_t(1) << 30);
  double limit = options.memoryLimitGiB && *options.memoryLimitGiB > 0
                     ? *options.memoryLimitGiB
                     : double(spec->device.memoryBytes) / kGiB;
  CompileOptions quiet = options;
  quiet.report = false;
  quiet.explain = false;
  quiet.planJson.reset();
  quiet.planJsonText = nullptr;
  quiet.memoryLimitGiB = limit;
  constexpr int kRounds = 4;
  double firstPeakGiB = 0;
  int round = 0;
  for (; round < kRounds; ++round) {
    OwningOpRef<ModuleOp> trial = module.clone();
    LogicalResult ran = success();
    {
      // The first trial's errors are the user's (bad flags, nothing fits
      // even by the search's model): let them through. Later trials run
      // under a limit the user never gave; silence them.
      std::optional<ScopedDiagnosticHandler> silence;
      if (round > 0)
        silence.emplace(module.getContext(),
                        [](Diagnostic &) { return success(); });
      ran = succeeded(runShardingPhase(quiet, *trial)) &&
                    succeeded(runPartitionPhase(quiet, *trial))
                ? success()
                : failure();
    }
    if (failed(ran)) {
      if (round == 0)
        return failure();
      break;
    }
    double peakGiB = double(getPartitionedPeak(*trial)) / kGiB;
    if (round == 0)
      firstPeakGiB = peakGiB;
    if (peakGiB <= limit) {
      CalibratedLimit result{options, round + 1, true};
      result.options.memoryLimitGiB = quiet.memoryLimitGiB;
      return result;
    }
    *quiet.memoryLimitGiB *= limit / peakGiB;
  }
  emitWarning(module.getLoc()) << llvm::formatv(
      "the per-rank program needs {0:F3} GiB per device by liveness "
      "analysis, over the {1:F3} GiB limit the search's memory model "
      "respects (docs/Search.md, \"Memory\"); no searched plan was found "
      "under the limit by both",
      firstPeakGiB, limit);
  CalibratedLimit kept{options, round, false};
  kept.options.memoryLimitGiB = limit; // The same search as the first round.
  return kept;
}

/// Prints the peak live bytes of the partitioned entry function, by
/// category (docs/CostModel.md, "Memory"), per pipeline stage.
static void printPartitionedMemory(ModuleOp module, raw_ostream &os) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    for (std::optional<int64_t> stage : getStages(module)) {
      dist::MemoryBreakdown memory = dist::analyzeMemory(func, stage);
      auto gib = [](int64_t bytes) { return double(bytes) / double(1 << 30); };
      std::string which =
          stage ? " (stage " + std::to_string(*stage) + ")" : std::string();
      os << llvm::formatv(
          "Liveness of the per-rank program{6}: peak {0:F2} GiB per device "
          "(parameters {1:F2}, gradients {2:F2}, optimizer states {3:F2}, "
          "activations {4:F2}, other {5:F2} GiB)\n",
          gib(memory.getPeak()), gib(memory.parameters),
          gib(memory.gradients), gib(memory.optimizerStates),
          gib(memory.activations), gib(memory.other), which);
    }
  }
}

/// Prints the report of `module` (searched; lowered or not) to the report
/// stream under `--report`, and stores its plan JSON in
/// `options.planJsonText` when that is set. An unlowered module is lowered
/// in a copy so that the collectives show.
static LogicalResult printReport(const CompileOptions &options,
                                 ModuleOp module, bool lowered) {
  dist::ValueOrError<dist::ClusterSpec> cluster =
      dist::loadClusterSpec(*options.cluster);
  if (!cluster)
    return emitError(UnknownLoc::get(module.getContext())) << cluster.error();
  OwningOpRef<ModuleOp> copy;
  if (!lowered) {
    copy = module.clone();
    dist::InsertReshardsPassOptions assignment;
    if (options.strategy)
      assignment.strategyFile = *options.strategy;
    if (options.parallelConfig)
      assignment.parallelConfig = *options.parallelConfig;
    PassManager pm(module.getContext());
    pm.addPass(dist::createInsertReshardsPass(assignment));
    pm.addPass(dist::createLowerReshardsPass());
    if (failed(pm.run(*copy)))
      return failure();
    module = *copy;
  }
  if (options.planJsonText && !lowered) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (failed(dist::writePlanJSON(module, os)))
      return failure();
    *options.planJsonText = std::move(text);
  }
  if (!options.report)
    return success();
  return dist::writePlanReport(module, *cluster, options.getReportStream());
}

/// The options the phases after autodiff see: the pipeline stages and
/// micro-batches resolved from the flags and the parallel config (they must
/// agree), and with S stages the device count of one stage (devices / S),
/// which the search, the mesh and the device check then use.
static FailureOr<CompileOptions>
applyPipelineRequest(const CompileOptions &options, MLIRContext *context) {
  CompileOptions staged = options;
  dist::RequestedPipeline requested;
  if (options.parallelConfig || options.strategy)
    requested = dist::getRequestedPipeline(options.strategy.value_or(""),
                                           options.parallelConfig.value_or(""));
  auto merge = [&](std::optional<int64_t> &flag, int64_t fromConfig,
                   StringRef flagName, StringRef key) -> LogicalResult {
    if (fromConfig == 1)
      return success();
    if (flag && *flag != fromConfig)
      return emitError(UnknownLoc::get(context))
             << flagName << " " << *flag << " disagrees with the parallel "
             << "config's " << key << " = " << fromConfig;
    flag = fromConfig;
    return success();
  };
  if (failed(merge(staged.pipelineStages, requested.stages,
                   "--pipeline-stages", "pipeline_stage")) ||
      failed(merge(staged.microBatches, requested.microBatches,
                   "--micro-batches", "micro_batch_num")))
    return failure();
  if (!requested.stageLayerCounts.empty()) {
    std::string counts;
    for (int64_t count : requested.stageLayerCounts)
      counts += (counts.empty() ? "" : ",") + std::to_string(count);
    staged.stageLayers = counts;
  }
  int64_t stages = staged.pipelineStages.value_or(1);
  if (stages != 1 && options.compileTo < Phase::Pipeline)
    return emitError(UnknownLoc::get(context))
           << "--pipeline-stages belongs to the pipeline phase, which "
              "--compile-to="
           << stringifyPhase(options.compileTo) << " stops before";
  if (stages > 1 && staged.devices && !options.cluster) {
    if (*staged.devices % stages != 0)
      return emitError(UnknownLoc::get(context))
             << "--devices " << *staged.devices << " does not split into "
             << stages << " pipeline stages of equal size";
    staged.devices = *staged.devices / stages;
  }
  return staged;
}

/// The autodiff pass options the flags give (the optimizer, its
/// hyperparameters, the micro-batches).
static AutodiffPassOptions getAutodiffOptions(const CompileOptions &options) {
  AutodiffPassOptions autodiff;
  autodiff.optimizer = options.optimizer.value_or("adamw");
  if (options.lr)
    autodiff.lr = *options.lr;
  if (options.beta1)
    autodiff.beta1 = *options.beta1;
  if (options.beta2)
    autodiff.beta2 = *options.beta2;
  if (options.eps)
    autodiff.eps = *options.eps;
  if (options.weightDecay)
    autodiff.weightDecay = *options.weightDecay;
  if (options.momentum)
    autodiff.momentum = *options.momentum;
  if (options.clipNorm)
    autodiff.clipNorm = *options.clipNorm;
  if (options.microBatches)
    autodiff.microBatches = *options.microBatches;
  return autodiff;
}

/// The sharding phase when pipelines may be searched: runs the search over
/// all the devices (`--pipeline-stages 0` lets it choose the stages and,
/// without `--micro-batches`, their count; `S` fixes the stages). When the
/// plan's micro-batches differ from those autodiff built, autodiff runs
/// again with them and the search plans that step under the chosen stages.
/// Then `staged` gets the plan's stages and one stage's devices.
static LogicalResult runSearchedPipeline(const CompileOptions &options,
                                         CompileOptions &staged,
                                         ModuleOp module) {
  CompileOptions search = staged;
  search.devices = options.devices;
  if (failed(runShardingPhase(search, module)))
    return failure();
  FailureOr<std::optional<dist::PipelineInfo>> plan =
      dist::getPipelineInfo(module);
  if (failed(plan))
    return failure();
  if (!*plan || (*plan)->stages <= 1) {
    if (staged.pipelineStages && *staged.pipelineStages == 0)
      staged.pipelineStages = 1;
    return success();
  }
  int64_t stages = (*plan)->stages, micro = (*plan)->microBatches;
  if (micro != staged.microBatches.value_or(1)) {
    // The step the plan was priced for has `micro` micro-batches.
    if (auto step = module.lookupSymbol<func::FuncOp>("train_step"))
      step.erase();
    staged.microBatches = micro;
    AutodiffPassOptions autodiff = getAutodiffOptions(staged);
    PassManager pm(module.getContext());
    buildAutodiffPipeline(pm, autodiff);
    search.microBatches = micro;
    search.pipelineStages = stages;
    if (failed(pm.run(module)) || failed(runShardingPhase(search, module)))
      return failure();
  }
  staged.pipelineStages = stages;
  if (options.devices)
    staged.devices = *options.devices / stages;
  return success();
}

/// `--timeline FILE`: the Chrome trace of the pipelined step's predicted
/// schedule (docs/Pipeline.md, "Predicted timeline").
static LogicalResult writeTimeline(const CompileOptions &options,
                                   ModuleOp module) {
  if (!module->hasAttr("dist.pipeline"))
    return emitError(UnknownLoc::get(module.getContext()))
           << "--timeline draws a pipeline's schedule: give "
              "--pipeline-stages S > 1 (or 0 with --cluster to let the "
              "search choose)";
  dist::ValueOrError<dist::ClusterSpec> cluster =
      dist::loadClusterSpec(options.cluster.value_or("host"));
  if (!cluster)
    return emitError(UnknownLoc::get(module.getContext())) << cluster.error();
  return dist::writePipelineTimeline(module, *cluster, *options.timeline);
}

LogicalResult mlir::loom::runPipelinePhase(const CompileOptions &options,
                                           ModuleOp module) {
  int64_t stages = options.pipelineStages.value_or(1);
  // Without a requested pipeline the phase only follows a searched one.
  if (stages <= 1 && !module->hasAttr("dist.pipeline"))
    return success();
  dist::AssignStagesPassOptions assign;
  assign.stages = stages > 1 ? stages : 0;
  if (options.schedule)
    assign.schedule = *options.schedule;
  if (options.stageLayers)
    assign.stageLayers = *options.stageLayers;
  PassManager pm(module.getContext());
  pm.addPass(dist::createAssignStagesPass(assign));
  return pm.run(module);
}

LogicalResult mlir::loom::runPartitionPhase(const CompileOptions &options,
                                            ModuleOp module) {
  MLIRContext *context = module.getContext();
  // Layout assignment first, so that the device count is checked against
  // the mesh it settled on before any communication is planned.
  dist::InsertReshardsPassOptions assignment;
  assignment.meshSpec = getMeshSpec(options);
  if (options.strategy)
    assignment.strategyFile = *options.strategy;
  if (options.parallelConfig)
    assignment.parallelConfig = *options.parallelConfig;
  PassManager assign(context);
  // `recompute: true` in the parallel config, or the search's choice
  // (`dist.plan`): the backward reads recomputed values, which need layouts
  // like any other, so it runs first.
  bool searchRecomputes = false;
  if (auto plan = module->getAttrOfType<DictionaryAttr>("dist.plan"))
    if (auto recompute = plan.getAs<BoolAttr>("recompute"))
      searchRecomputes = recompute.getValue();
  if (searchRecomputes ||
      dist::requestsRecompute(assignment.strategyFile,
                              assignment.parallelConfig)) {
    RecomputePassOptions recompute;
    recompute.layers = "all";
    assign.addPass(createRecomputePass(recompute));
  }
  assign.addPass(dist::createInsertReshardsPass(assignment));
  if (failed(assign.run(module)) || failed(checkDeviceCount(options, module)))
    return failure();

  PassManager lower(context);
  dist::LowerReshardsPassOptions lowering;
  lowering.explain = options.explain;
  lower.addPass(dist::createLowerReshardsPass(lowering));
  if (failed(lower.run(module)))
    return failure();
  if (options.report && failed(printReport(options, module, true)))
    return failure();
  // The plan after lowering lists every collective with its bytes.
  std::string text;
  if (options.planJson || options.planJsonText) {
    llvm::raw_string_ostream os(text);
    if (failed(dist::writePlanJSON(module, os)))
      return failure();
    if (options.planJsonText)
      *options.planJsonText = text;
  }
  if (options.planJson) {
    llvm::Error error = llvm::writeToOutput(
        *options.planJson, [&](raw_ostream &out) {
          out << text;
          return llvm::Error::success();
        });
    if (error) {
      return emitError(UnknownLoc::get(context))
             << "cannot write '" << *options.planJson
             << "': " << llvm::toString(std::move(error));
    }
  }

  PassManager partition(context);
  partition.addPass(dist::createPartitionSPMDPass());
  // A pipelined module becomes one program per stage (a no-op otherwise).
  partition.addPass(dist::createPartitionStagesPass());
  partition.addPass(dist::createVerifyPartitionedPass());
  if (failed(partition.run(module)))
    return failure();
  // The report's memory comes from the search's per-op model; the liveness
  // analysis of the per-rank program is the check on it.
  if (options.report)
    printPartitionedMemory(module, options.getReportStream());
  return success();
}

OwningOpRef<ModuleOp> mlir::loom::compile(const CompileOptions &options,
                                          MLIRContext *context,
                                          llvm::SourceMgr &sourceMgr) {
  if (failed(checkOptions(options, context)))
    return {};
  prepareContext(context);
  OwningOpRef<ModuleOp> module =
      loadInput(options.inputFile, context, sourceMgr);
  if (!module || failed(runPhases(options, *module)))
    return {};
  return module;
}

void mlir::loom::prepareContext(MLIRContext *context) {
  // Errors name their location; printing the whole module after each (the
  // default) would bury them.
  context->printOpOnDiagnostic(false);
  DialectRegistry registry;
  registerAllDialects(registry);
  context->appendDialectRegistry(registry);
  context->loadAllAvailableDialects();
}

LogicalResult mlir::loom::runPhases(const CompileOptions &options,
                                    ModuleOp module) {
  MLIRContext *context = module.getContext();
  // The pipeline the flags or the parallel config ask for; every phase
  // after autodiff then works on one stage's devices (docs/Pipeline.md).
  FailureOr<CompileOptions> staged = applyPipelineRequest(options, context);
  if (failed(staged))
    return failure();

  // One pipeline per phase, in order, up to the requested one.
  PassManager pm(context);
  buildImportPipeline(pm);
  if (options.compileTo >= Phase::Autodiff) {
    AutodiffPassOptions autodiff = getAutodiffOptions(*staged);
    buildAutodiffPipeline(pm, autodiff);
  }
  if (failed(pm.run(module)))
    return failure();
  // The search runs whenever a cluster is given; with every strategy fixed
  // by the user it only prices them. Before a partition, its limit is
  // calibrated so that the per-rank program fits by liveness analysis
  // (without pipelines: a pipelined plan is taken as the search's model
  // prices it, docs/Pipeline.md).
  bool pipelined = options.pipelineStages && *options.pipelineStages != 1;
  std::optional<CalibratedLimit> calibration;
  if (options.compileTo >= Phase::Partition && options.cluster &&
      !pipelined) {
    FailureOr<CalibratedLimit> calibrated =
        calibrateMemoryLimit(*staged, module);
    if (failed(calibrated) ||
        failed(runShardingPhase(calibrated->options, module)))
      return failure();
    calibration = *calibrated;
  } else if (options.compileTo >= Phase::Sharding && options.cluster &&
             failed(runSearchedPipeline(options, *staged, module))) {
    return failure();
  }
  if (options.compileTo == Phase::Sharding && options.cluster &&
      (options.report || options.planJsonText) &&
      failed(printReport(*staged, module, false)))
    return failure();
  if (options.compileTo >= Phase::Pipeline &&
      failed(runPipelinePhase(*staged, module)))
    return failure();
  if (options.compileTo >= Phase::Partition &&
      failed(runPartitionPhase(*staged, module)))
    return failure();
  if (options.timeline && failed(writeTimeline(options, module)))
    return failure();
  // How many searches the memory limit took (after the liveness line).
  if (options.report && calibration)
    options.getReportStream() << llvm::formatv(
        "Memory calibration: {0} search round(s), search limit {1:F2} GiB; "
        "{2}\n",
        calibration->rounds, calibration->options.memoryLimitGiB.value_or(0),
        calibration->fits ? "the per-rank program fits"
                          : "no round fit, the first plan is kept");
  return success();
}

LogicalResult mlir::loom::compileToFile(const CompileOptions &options,
                                        MLIRContext *context,
                                        llvm::SourceMgr &sourceMgr) {
  OwningOpRef<ModuleOp> module = compile(options, context, sourceMgr);
  if (!module)
    return failure();
  if (options.compileTo == Phase::Codegen)
    return emitExecutable(options, *module);
  // writeToOutput goes through a temporary file renamed into place.
  llvm::Error error =
      llvm::writeToOutput(options.outputFile, [&](raw_ostream &os) {
        module->print(os);
        return llvm::Error::success();
      });
  if (error) {
    emitError(UnknownLoc::get(context))
        << "cannot write '" << options.outputFile
        << "': " << llvm::toString(std::move(error));
    return failure();
  }
  return success();
}

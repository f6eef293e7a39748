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
//   3. build one pass manager from the phase pipeline builders
//      (buildCompilerPipeline: `loom-<phase>-pipeline` for each phase up to
//      `compileTo`, with the options the flags give, and the report passes
//      the flags ask for), print it under `--dump-pass-pipeline`, and run
//      it once. Nothing that changes the IR happens outside it, so
//      `loom-opt --pass-pipeline` with the printed text reproduces loomc.

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
#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/InitAllDialects.h"
#include "loom/Support/InputFile.h"
#include "loom/Support/InputLimits.h"
#include "loom/Target/GraphJSON/GraphJSON.h"
#include "loom/Target/ONNX/ONNX.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::loom;

/// A flag's real value as a user would type it: inf and nan spelled so.
static std::string formatReal(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

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

std::optional<Phase>
mlir::loom::resolveOptionPhase(OptionPhase phase,
                               const CompileOptions &options) {
  switch (phase) {
  case OptionPhase::Any:
    return std::nullopt;
  case OptionPhase::Autodiff:
    return Phase::Autodiff;
  case OptionPhase::Sharding:
    return Phase::Sharding;
  case OptionPhase::Pipeline:
    return Phase::Pipeline;
  case OptionPhase::Partition:
    return Phase::Partition;
  case OptionPhase::Codegen:
    return Phase::Codegen;
  case OptionPhase::Search:
    // With a cluster, the search reads the device and strategy options
    // first; without, the partition phase's layout assignment does.
    return options.cluster ? Phase::Sharding : Phase::Partition;
  }
  return std::nullopt;
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
  // Each option in the phase that first reads it (the PHASE column of
  // CompileOptions.def).
  auto isGiven = [](const auto &value) { return static_cast<bool>(value); };
#define LOOM_OPTION(NAME, FIELD, KIND, VALUE, PHASE, ...)                      \
  if (isGiven(options.FIELD))                                                  \
    if (std::optional<Phase> phase =                                           \
            resolveOptionPhase(OptionPhase::PHASE, options))                   \
      reject("--" NAME, *phase);
#include "loom/Driver/CompileOptions.def"

  // The ONNX import options name initializers of an ONNX input.
  if ((options.onnxConstants || options.onnxParameters) &&
      !StringRef(options.inputFile).ends_with(".onnx") &&
      !options.inputFile.empty())
    error() << (options.onnxConstants ? "--onnx-constants"
                                      : "--onnx-parameters")
            << " applies to an ONNX input (.onnx), found '" << options.inputFile
            << "'";

  // Values the autodiff phase would refuse, named by their flags.
  std::string precision = options.precision.value_or("f32");
  if (precision != "f32" && precision != "bf16-mixed" &&
      precision != "fp16-mixed")
    error() << "--precision: expected f32, bf16-mixed or fp16-mixed, found '"
            << precision << "'";
  if (options.gradReduceDtype && *options.gradReduceDtype != "f32" &&
      *options.gradReduceDtype != "bf16" && *options.gradReduceDtype != "f16")
    error() << "--grad-reduce-dtype: expected f32, bf16 or f16, found '"
            << *options.gradReduceDtype << "'";
  if (options.lossScale && !isValidLossScale(*options.lossScale))
    error() << "--loss-scale: expected dynamic, none or a finite number > 0, "
               "found '"
            << *options.lossScale << "'";
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
  // Every real-valued flag is finite: `inf` would reach the program as a
  // constant and turn the first step's weights into NaN.
  auto nonNegative = [&](StringRef flag, std::optional<double> value) {
    if (value && !(std::isfinite(*value) && *value >= 0.0))
      error() << flag << ": expected a finite value >= 0, found "
              << formatReal(*value);
  };
  nonNegative("--lr", options.lr);
  nonNegative("--weight-decay", options.weightDecay);
  nonNegative("--momentum", options.momentum);
  nonNegative("--clip-norm", options.clipNorm);
  if (options.eps && !(std::isfinite(*options.eps) && *options.eps > 0.0))
    error() << "--eps: expected a finite value > 0, found "
            << formatReal(*options.eps);
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
  if (options.memoryLimitGiB && !(std::isfinite(*options.memoryLimitGiB) &&
                                  *options.memoryLimitGiB > 0.0))
    error() << "--memory-limit: expected a finite value > 0 (GiB), found "
            << formatReal(*options.memoryLimitGiB);
  if (options.bucketCapMB && !(std::isfinite(*options.bucketCapMB) &&
                               *options.bucketCapMB >= 0.0))
    error() << "--bucket-cap-mb: expected a finite value >= 0 (MiB; 0 "
               "reduces gradients blocking), found "
            << formatReal(*options.bucketCapMB);
  if (options.cluster && options.compileTo >= Phase::Sharding &&
      !options.devices && !options.mesh && !options.parallelConfig &&
      !options.strategy)
    error() << "--cluster needs the devices: give --devices N (the search "
               "picks the mesh), --mesh, --parallel-config or --strategy";
  // A mesh holds at most Mesh::kMaxDevices; beyond it the search would
  // only spend minutes finding that no mesh exists.
  if (options.devices &&
      (*options.devices < 1 || *options.devices > dist::Mesh::kMaxDevices))
    error() << "--devices: expected a value in [1, " << dist::Mesh::kMaxDevices
            << "], found " << *options.devices;
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
  if (options.fineGrainInterleave && *options.fineGrainInterleave < 1)
    error() << "--fine-grain-interleave: expected a copy count >= 1, found "
            << *options.fineGrainInterleave;
  if (options.pipelineStages && *options.pipelineStages < 0)
    error() << "--pipeline-stages: expected 0 (the search chooses) or a "
               "stage count >= 1, found "
            << *options.pipelineStages;
  if (options.pipelineStages && *options.pipelineStages == 0 &&
      !options.cluster)
    error() << "--pipeline-stages 0 lets the strategy search choose the "
               "stages: give --cluster";
  if (options.schedule && *options.schedule != "gpipe" &&
      *options.schedule != "1f1b" && *options.schedule != "interleaved-1f1b")
    error() << "--schedule: expected gpipe, 1f1b or interleaved-1f1b, found '"
            << *options.schedule << "'";
  if (options.virtualStages && *options.virtualStages < 0)
    error() << "--virtual-stages: expected 0 (the search chooses) or a chunk "
               "count >= 1, found "
            << *options.virtualStages;
  if (options.virtualStages && *options.virtualStages == 0 && !options.cluster)
    error() << "--virtual-stages 0 lets the strategy search choose the "
               "chunks per stage: give --cluster";
  if (options.virtualStages && *options.virtualStages > 1 && options.schedule &&
      *options.schedule != "interleaved-1f1b")
    error() << "--virtual-stages " << *options.virtualStages
            << " needs --schedule interleaved-1f1b, found '"
            << *options.schedule << "'";
  return success(ok);
}

OnnxImportOptions mlir::loom::onnxImportOptions(const CompileOptions &options) {
  auto names = [](const std::optional<std::string> &list) {
    std::vector<std::string> out;
    if (!list)
      return out;
    SmallVector<StringRef> parts;
    StringRef(*list).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef part : parts)
      if (!part.trim().empty())
        out.push_back(part.trim().str());
    return out;
  };
  return {names(options.onnxConstants), names(options.onnxParameters)};
}

OwningOpRef<ModuleOp> mlir::loom::loadInput(StringRef path,
                                            MLIRContext *context,
                                            llvm::SourceMgr &sourceMgr,
                                            const OnnxImportOptions &onnx) {
  StringRef extension = llvm::sys::path::extension(path);
  bool isJson = extension == ".json";
  bool isMlir = extension == ".mlir";
  bool isOnnx = extension == ".onnx";
  if (!isJson && !isMlir && !isOnnx) {
    emitError(UnknownLoc::get(context))
        << "input '" << path << "': unsupported extension '" << extension
        << "', expected .json (graph JSON), .onnx (ONNX) or .mlir (textual "
           "IR)";
    return {};
  }
  if (auto error = ::loom::support::checkRegularFile(path.str())) {
    emitError(UnknownLoc::get(context)) << "input: " << *error;
    return {};
  }
  // An ONNX model is binary protobuf.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/!isOnnx);
  if (std::error_code error = file.getError()) {
    emitError(UnknownLoc::get(context))
        << "cannot read input '" << path << "': " << error.message();
    return {};
  }
  return loadInputBuffer(std::move(*file),
                         isJson   ? InputFormat::GraphJSON
                         : isOnnx ? InputFormat::ONNX
                                  : InputFormat::MLIR,
                         context, sourceMgr, onnx);
}

OwningOpRef<ModuleOp>
mlir::loom::loadInputBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                            InputFormat format, MLIRContext *context,
                            llvm::SourceMgr &sourceMgr,
                            const OnnxImportOptions &onnx) {
  std::string name = buffer->getBufferIdentifier().str();
  unsigned bufferId = sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
  if (format == InputFormat::GraphJSON)
    return importGraphJson(sourceMgr.getMemoryBuffer(bufferId)->getBuffer(),
                           name, context);
  if (format == InputFormat::ONNX)
    return importOnnx(sourceMgr.getMemoryBuffer(bufferId)->getBuffer(), name,
                      context, onnx);
  // The MLIR parser recurses once per nested bracket and overflows the
  // stack on deep input, and a string that is not UTF-8 aborts the JSON
  // writers later: a cheap scan refuses both first (docs/Testing.md, "Bad
  // input").
  StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  if (std::optional<::loom::support::TextProblem> problem =
          ::loom::support::checkIRText(
              std::string_view(text.data(), text.size()))) {
    emitError(FileLineColLoc::get(context, name, problem->position.line,
                                  problem->position.column))
        << problem->message;
    return {};
  }
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

/// The name of the low type of a mixed precision (`bf16`, `f16`); empty for
/// f32.
static StringRef getLowTypeName(StringRef precision) {
  return precision == "bf16-mixed"   ? "bf16"
         : precision == "fp16-mixed" ? "f16"
                                     : "";
}

/// Merges the parallel config's `precision` key into `staged.precision`
/// (`--precision` and the key are one setting: given both, they must
/// agree) and checks what depends on the precision: the gradient reduction
/// type, and a cluster that can price the low type.
static LogicalResult resolvePrecision(const CompileOptions &options,
                                      CompileOptions &staged,
                                      MLIRContext *context) {
  if (options.parallelConfig || options.strategy) {
    std::string fromConfig = dist::getRequestedPrecision(
        options.strategy.value_or(""), options.parallelConfig.value_or(""));
    if (!fromConfig.empty()) {
      if (options.precision && *options.precision != fromConfig)
        return emitError(UnknownLoc::get(context))
               << "--precision " << *options.precision
               << " disagrees with the parallel config's precision = "
               << fromConfig;
      staged.precision = fromConfig;
    }
  }
  std::string precision = staged.precision.value_or("f32");
  StringRef low = getLowTypeName(precision);
  // The gradient reduction type is a choice of a mixed-precision step: f32
  // or its own low type.
  if (options.gradReduceDtype) {
    if (low.empty())
      return emitError(UnknownLoc::get(context))
             << "--grad-reduce-dtype applies to a mixed-precision step: give "
                "--precision bf16-mixed or fp16-mixed (with --precision f32 "
                "every gradient is f32)";
    if (*options.gradReduceDtype != "f32" && *options.gradReduceDtype != low)
      return emitError(UnknownLoc::get(context))
             << "--grad-reduce-dtype " << *options.gradReduceDtype
             << " with --precision " << precision << ": expected f32 or " << low
             << " (the step's low type)";
  }
  // Loss scaling belongs to fp16-mixed (GradScaler): dynamic unless the
  // user fixes the scale; f16 gradients without it underflow, so turning it
  // off is refused rather than taken.
  if (precision == "fp16-mixed") {
    if (!staged.lossScale)
      staged.lossScale = "dynamic";
    else if (*staged.lossScale == "none")
      return emitError(UnknownLoc::get(context))
             << "--loss-scale none with --precision fp16-mixed: f16 "
                "gradients underflow without loss scaling; give --loss-scale "
                "dynamic (the default) or a fixed scale N, or train in "
                "bf16-mixed";
  } else if (options.lossScale && *options.lossScale != "none") {
    return emitError(UnknownLoc::get(context))
           << "--loss-scale applies to --precision fp16-mixed, not "
           << precision << " (bf16 and f32 gradients need no loss scaling)";
  }
  // A mixed-precision step runs its GEMMs at the low type's peak: a device
  // without one cannot price it (Volta has no bf16), which the flag's error
  // says rather than the cost model's about some op. A cluster that cannot
  // be read is the search's to report.
  if (options.cluster && options.compileTo >= Phase::Sharding && !low.empty()) {
    dist::ValueOrError<dist::ClusterSpec> cluster =
        dist::loadClusterSpec(*options.cluster);
    if (cluster && !cluster->device.peakFlopsPerSecond.count(low.str())) {
      std::string known;
      for (const auto &entry : cluster->device.peakFlopsPerSecond)
        known += (known.empty() ? "" : ", ") + entry.first;
      return emitError(UnknownLoc::get(context))
             << "--precision " << precision << ": device `"
             << cluster->device.name << "` of cluster `" << cluster->name
             << "` has no " << low << " peak FLOP/s (it has " << known
             << "); choose another precision or cluster";
    }
  }
  return success();
}

/// The options the phases see after the flags are merged with the parallel
/// config: the precision policy (resolvePrecision), the pipeline stages and
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
  if (failed(merge(staged.pipelineStages, requested.stages, "--pipeline-stages",
                   "pipeline_stage")) ||
      failed(merge(staged.microBatches, requested.microBatches,
                   "--micro-batches", "micro_batch_num")) ||
      failed(merge(staged.virtualStages, requested.virtualStages,
                   "--virtual-stages", "pp_interleave_num")) ||
      failed(merge(staged.fineGrainInterleave, requested.copies,
                   "--fine-grain-interleave", "fine_grain_interleave")))
    return failure();
  // The config refuses its own fine_grain_interleave without
  // use_seq_parallel; the flag needs the config to turn SP on as well.
  if (staged.fineGrainInterleave && *staged.fineGrainInterleave > 1 &&
      requested.copies == 1) {
    if (!requested.sequenceParallel)
      return emitError(UnknownLoc::get(context))
             << "--fine-grain-interleave " << *staged.fineGrainInterleave
             << " needs sequence parallelism: give --parallel-config with "
                "use_seq_parallel = true (multi-copy interleave overlaps one "
                "copy's sequence-parallel collectives with another copy's "
                "compute)";
  }
  // A rank's share of one micro-batch is what the copies split.
  staged.copyBatchShards =
      staged.microBatches.value_or(1) * requested.dataParallel;
  if (failed(resolvePrecision(options, staged, context)))
    return failure();
  // Chunks per stage are the interleaved schedule's (`pp_interleave_num`
  // turns it on, as in MindFormers).
  if (staged.virtualStages && *staged.virtualStages > 1) {
    if (staged.schedule && *staged.schedule != "interleaved-1f1b")
      return emitError(UnknownLoc::get(context))
             << "--schedule " << *staged.schedule << " disagrees with "
             << *staged.virtualStages
             << " virtual stages (pp_interleave_num / --virtual-stages): "
                "they need interleaved-1f1b";
    staged.schedule = "interleaved-1f1b";
  }
  if (staged.schedule == "interleaved-1f1b" && !staged.virtualStages) {
    if (!options.cluster)
      return emitError(UnknownLoc::get(context))
             << "--schedule interleaved-1f1b needs the chunks per stage: "
                "give --virtual-stages V (or pp_interleave_num), or --cluster "
                "to let the search choose";
    staged.virtualStages = 0;
  }
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

/// The options structs buildCompilerPipeline fills with applyTableOptions:
/// a PASS column naming another struct would never be applied.
template <typename T>
constexpr bool isAppliedPassOptions =
    std::is_same_v<T, MixedPrecisionPassOptions> ||
    std::is_same_v<T, AutodiffPassOptions> ||
    std::is_same_v<T, SliceMicroBatchesPassOptions> ||
    std::is_same_v<T, InterleaveCopiesPassOptions> ||
    std::is_same_v<T, dist::SearchStrategyPassOptions> ||
    std::is_same_v<T, dist::AssignStagesPassOptions> ||
    std::is_same_v<T, dist::PartitionPipelineOptions> ||
    std::is_same_v<T, dist::BucketGradientReductionsPassOptions>;

/// Sets `passOptions.*member` to `value` when the user gave it: the value of
/// a `Text`, `Integer` or `Real` option, `true` for a `Switch`.
template <typename Target, typename PassOptions, typename Member,
          typename Value>
static void setPassOption(PassOptions &passOptions, Member Target::*member,
                          const Value &value) {
  static_assert(isAppliedPassOptions<Target>,
                "CompileOptions.def: PASS(...) names an options struct that "
                "buildCompilerPipeline does not fill");
  if constexpr (std::is_same_v<Target, PassOptions>) {
    if constexpr (std::is_same_v<Value, bool>) {
      if (value)
        passOptions.*member = true;
    } else if (value) {
      passOptions.*member = *value;
    }
  }
}

/// Fills the members of `passOptions` that the PASSES column of
/// CompileOptions.def maps the given options to, and leaves the others
/// (the pass's defaults, or what the caller derives itself).
template <typename PassOptions>
static void applyTableOptions(const CompileOptions &options,
                              PassOptions &passOptions) {
#define PASS(STRUCT, MEMBER) setPassOption(passOptions, &STRUCT::MEMBER, value);
#define LOOM_OPTION(NAME, FIELD, KIND, VALUE, PHASE, SCOPE, PASSES, HELP)      \
  {                                                                            \
    [[maybe_unused]] const auto &value = options.FIELD;                        \
    PASSES                                                                     \
  }
#include "loom/Driver/CompileOptions.def"
#undef PASS
}

/// The autodiff pass options the flags give (the optimizer and its
/// hyperparameters).
static AutodiffPassOptions getAutodiffOptions(const CompileOptions &options) {
  AutodiffPassOptions autodiff;
  applyTableOptions(options, autodiff);
  // The effective value, so that --dump-pass-pipeline shows it:
  // torch.optim's default unless given.
  if (!options.weightDecay)
    autodiff.weightDecay = getDefaultWeightDecay(autodiff.optimizer);
  return autodiff;
}

/// `--parallel-config` as a pass option value. Inline JSON gets a leading
/// space: MLIR prints a string option that starts with `{` as it is and
/// reads `{...}` back as a quoted value, so the braces would be lost on the
/// way through `--dump-pass-pipeline`; with the space the printer quotes
/// it, and the config reader skips the space.
static std::string getParallelConfigOption(const CompileOptions &options) {
  std::string config = options.parallelConfig.value_or("");
  if (StringRef(config).ltrim().starts_with("{"))
    config.insert(config.begin(), ' ');
  return config;
}

/// The micro-batches the autodiff phase splits the step into: the count the
/// flags or the parallel config fix (one the search chooses splits it in the
/// sharding phase).
static SliceMicroBatchesPassOptions
getSlicingOptions(const CompileOptions &options) {
  SliceMicroBatchesPassOptions slicing;
  applyTableOptions(options, slicing);
  return slicing;
}

/// Whether the parallel config or the strategy file fixes the mesh (a
/// mesh given is the mesh over all the devices: no pipeline unless asked).
static bool hasConfiguredMesh(const CompileOptions &options) {
  if (!options.parallelConfig && !options.strategy)
    return false;
  dist::ShardingSpec spec;
  std::string error = dist::loadShardingSpec(
      options.strategy.value_or(""), options.parallelConfig.value_or(""),
      spec);
  // A bad config is the search's to report, with its own message.
  return !error.empty() || !spec.mesh.empty();
}

/// The options of `dist-search-strategy` the flags give. Its follow-ups
/// (DESIGN.md §4): before a partition without pipelines the limit is fitted
/// by the liveness of the per-rank program; with `--pipeline-stages`, a plan
/// that pipelines the step splits it into the micro-batches the search
/// chose (loom-slice-micro-batches, run by the search pass).
static dist::SearchStrategyPassOptions
getSearchOptions(const CompileOptions &options, const CompileOptions &staged) {
  dist::SearchStrategyPassOptions search;
  // All the devices (with pipelines the search splits them into stages),
  // the stages (0 lets the search choose, S fixes them) and micro-batches
  // as merged with the parallel config.
  applyTableOptions(staged, search);
  search.parallelConfig = getParallelConfigOption(options);
  // The whole plan space by default (docs/Search.md, "The plan space"):
  // with the devices and nothing that fixes the stages or the mesh, the
  // search chooses the pipeline stages and micro-batches too.
  if (!staged.pipelineStages && options.devices && !options.mesh &&
      !hasConfiguredMesh(options))
    search.pipelineStages = 0;
  // The report names the closest Megatron-style hand config.
  search.handConfigs = options.report;
  // A pipelined plan is taken as the search's model prices it
  // (docs/Pipeline.md); the others are checked by liveness first (under
  // the whole space the search measures only a plan without a pipeline).
  bool pipelined = staged.pipelineStages && *staged.pipelineStages != 1;
  search.fitLiveness = options.compileTo >= Phase::Partition && !pipelined;
  return search;
}

LogicalResult mlir::loom::buildCompilerPipeline(const CompileOptions &options,
                                                OpPassManager &pm,
                                                MLIRContext *context) {
  // The pipeline the flags or the parallel config ask for; every phase
  // after autodiff then works on one stage's devices (docs/Pipeline.md).
  FailureOr<CompileOptions> staged = applyPipelineRequest(options, context);
  if (failed(staged))
    return failure();
  dist::ReportSinks sinks{options.reportStream, options.planJsonText};
  bool reports = options.report || options.planJson || options.planJsonText;

  buildImportPipeline(pm);
  if (options.compileTo >= Phase::Autodiff) {
    MixedPrecisionPassOptions precision;
    applyTableOptions(*staged, precision);
    InterleaveCopiesPassOptions copies;
    applyTableOptions(*staged, copies);
    copies.batchShards = staged->copyBatchShards;
    buildAutodiffPipeline(pm, getAutodiffOptions(*staged),
                          getSlicingOptions(*staged), precision,
                          staged->gradReduceDtype.value_or("f32"), copies);
  }
  // The search runs whenever a cluster is given; with every strategy fixed
  // by the user it only prices them.
  if (options.compileTo >= Phase::Sharding && options.cluster) {
    dist::ExportPlanPassOptions exportPlan;
    exportPlan.cluster = *options.cluster;
    exportPlan.report = options.report;
    exportPlan.planJson = options.planJson.value_or("");
    exportPlan.lowerCopy = true;
    exportPlan.strategyFile = options.strategy.value_or("");
    exportPlan.parallelConfig = getParallelConfigOption(options);
    // Stopping before the partition phase, the plan comes from a lowered
    // copy here (the partition phase exports its own).
    bool exportHere = options.compileTo < Phase::Partition && reports;
    dist::buildShardingPipeline(pm, getSearchOptions(options, *staged),
                                exportHere ? &exportPlan : nullptr, sinks);
  }
  if (options.compileTo >= Phase::Pipeline) {
    dist::AssignStagesPassOptions assign;
    int64_t stages = staged->pipelineStages.value_or(1);
    assign.stages = stages > 1 ? stages : 0;
    applyTableOptions(*staged, assign);
    assign.stageLayers = staged->stageLayers.value_or("");
    dist::buildPipelinePipeline(pm, assign);
  }
  if (options.compileTo >= Phase::Partition) {
    dist::PartitionPipelineOptions partition;
    partition.assignment.meshSpec = getMeshSpec(*staged);
    partition.assignment.strategyFile = options.strategy.value_or("");
    partition.assignment.parallelConfig = getParallelConfigOption(options);
    partition.assignment.devices = options.devices.value_or(0);
    applyTableOptions(*staged, partition);
    if (options.report || options.planJson || options.planJsonText) {
      dist::ExportPlanPassOptions exportPlan;
      exportPlan.cluster = options.cluster.value_or("");
      exportPlan.report = options.report;
      exportPlan.planJson = options.planJson.value_or("");
      partition.exportPlan = exportPlan;
    }
    partition.reportMemory = options.report;
    partition.sinks = sinks;
    dist::buildPartitionPipeline(pm, partition);
  }
  // The emitted program evaluates with a forward-only entry cut out of the
  // partitioned step (docs/Codegen.md, "Evaluation").
  if (options.compileTo >= Phase::Codegen) {
    dist::BucketGradientReductionsPassOptions buckets;
    applyTableOptions(options, buckets);
    dist::buildCodegenPipeline(pm, buckets);
  }
  if (options.timeline) {
    dist::WriteTimelinePassOptions timeline;
    timeline.cluster = options.cluster.value_or("host");
    timeline.file = *options.timeline;
    pm.addPass(dist::createWriteTimelinePass(timeline));
  }
  return success();
}

OwningOpRef<ModuleOp> mlir::loom::compile(const CompileOptions &options,
                                          MLIRContext *context,
                                          llvm::SourceMgr &sourceMgr) {
  if (failed(checkOptions(options, context)))
    return {};
  prepareContext(context);
  OwningOpRef<ModuleOp> module = loadInput(
      options.inputFile, context, sourceMgr, onnxImportOptions(options));
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
  PassManager pm(context);
  if (failed(buildCompilerPipeline(options, pm, context)))
    return failure();
  if (options.dumpPassPipeline) {
    pm.printAsTextualPipeline(llvm::errs());
    llvm::errs() << "\n";
  }
  return pm.run(module);
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
        // With the final newline, as loom-opt prints a module.
        module->print(os);
        os << "\n";
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

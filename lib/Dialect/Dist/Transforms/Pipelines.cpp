//===- Pipelines.cpp - The partition phase pipeline -----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The phase pipelines of the dist dialect: `loom-sharding-pipeline` (the
// strategy search), `loom-pipeline-pipeline` (stages),
// `loom-partition-pipeline` (the global training step, with strategies,
// into the per-rank program) and `loom-codegen-pipeline` (what the
// emitters need beside it: the evaluation step). `loomc` builds its pass
// manager from these builders alone (lib/Driver), so `loom-opt` with the
// text `loomc --dump-pass-pipeline` prints reproduces it.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::loom::dist;

void mlir::loom::dist::buildShardingPipeline(
    OpPassManager &pm, const SearchStrategyPassOptions &options,
    const ExportPlanPassOptions *exportPlan, ReportSinks sinks) {
  // The mesh, every forward op's strategy, ZeRO, recompute and the
  // pipeline (fitting the memory limit by liveness, and rebuilding the step
  // for the chosen micro-batches, when the options ask).
  pm.addPass(createSearchStrategyPass(options));
  // The contract the partition phase relies on.
  VerifyShardingPassOptions verify;
  verify.entryName = options.entryName;
  pm.addPass(createVerifyShardingPass(verify));
  // The plan as the phase leaves it, for people and tools.
  if (exportPlan)
    pm.addPass(createExportPlanPass(*exportPlan, sinks));
}

void mlir::loom::dist::buildPipelinePipeline(
    OpPassManager &pm, const AssignStagesPassOptions &options) {
  // Every op's stage, from the options or the search's `dist.pipeline`;
  // the pass checks its own result (each layer on one stage, stages in
  // order) and does nothing without a pipeline.
  pm.addPass(createAssignStagesPass(options));
  // The phase's contract: stages on every op of an id, rising along the
  // forward.
  VerifyPipelinePassOptions verify;
  verify.entryName = options.entryName;
  pm.addPass(createVerifyPipelinePass(verify));
}

void mlir::loom::dist::buildPartitionPipeline(
    OpPassManager &pm, const PartitionPipelineOptions &options) {
  const InsertReshardsPassOptions &assignment = options.assignment;
  // Recompute changes which values the backward reads, so it comes before
  // any of them gets a layout: every layer when the parallel config asks,
  // else the layers the search chose (none without a search).
  loom::RecomputePassOptions recompute;
  recompute.entryName = assignment.entryName;
  recompute.layers =
      requestsRecompute(assignment.strategyFile, assignment.parallelConfig)
          ? "all"
          : "plan";
  pm.addPass(loom::createRecomputePass(recompute));
  // A layout on every value, and a reshard wherever one must change; the
  // mesh it settles on is checked against the device count.
  pm.addPass(createInsertReshardsPass(assignment));
  // Each reshard becomes the cheapest chain of collectives.
  LowerReshardsPassOptions lowering;
  lowering.explain = options.explain;
  pm.addPass(createLowerReshardsPass(lowering));
  // The plan is complete here: every collective is known, with its bytes.
  if (options.exportPlan)
    pm.addPass(createExportPlanPass(*options.exportPlan, options.sinks));
  // Global shapes become each rank's local shapes.
  pm.addPass(createPartitionSPMDPass());
  // A pipelined module becomes one program per stage (a no-op otherwise).
  PartitionStagesPassOptions stages;
  stages.entryName = assignment.entryName;
  pm.addPass(createPartitionStagesPass(stages));
  // The per-rank program's liveness, the check on the search's memory model.
  if (options.reportMemory)
    pm.addPass(createReportMemoryPass(options.sinks));
  // The contract the code generators rely on.
  pm.addPass(createVerifyPartitionedPass());
}

void mlir::loom::dist::buildCodegenPipeline(
    OpPassManager &pm, const BucketGradientReductionsPassOptions &buckets) {
  // The forward-only entry the trainer evaluates with, cut out of the
  // partitioned step so that it reads the training state where it is.
  pm.addPass(createDeriveEvalStepPass());
  // DDP's gradient buckets, so that targets overlap their reductions with
  // the rest of the backward (after the eval step is cut: it has none).
  pm.addPass(createBucketGradientReductionsPass(buckets));
  // The emitters' contract holds for the new entry too.
  pm.addPass(createVerifyPartitionedPass());
}

namespace {
/// The options of `loom-sharding-pipeline`, those of `dist-search-strategy`.
struct ShardingPipelineFlags
    : public PassPipelineOptions<ShardingPipelineFlags> {
  Option<std::string> entry{*this, "entry",
                            llvm::cl::desc("Function to search"),
                            llvm::cl::init("train_step")};
  Option<std::string> cluster{
      *this, "cluster",
      llvm::cl::desc("Cluster preset or spec file (JSON)"), llvm::cl::init("")};
  Option<int64_t> devices{*this, "devices",
                          llvm::cl::desc("Number of devices"),
                          llvm::cl::init(0)};
  Option<std::string> mesh{*this, "mesh",
                           llvm::cl::desc("Search only this mesh"),
                           llvm::cl::init("")};
  Option<loom::ExactDouble> memoryLimit{
      *this, "memory-limit",
      llvm::cl::desc("Memory limit per device in GiB (0: the capacity)"),
      llvm::cl::init(0)};
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("Strategy file (JSON)"),
                               llvm::cl::init("")};
  Option<std::string> parallelConfig{
      *this, "parallel-config",
      llvm::cl::desc("Parallel config: inline JSON or a file"),
      llvm::cl::init("")};
  Option<int64_t> pipelineStages{
      *this, "pipeline-stages",
      llvm::cl::desc("Pipeline stages: 0 lets the search choose, 1 none"),
      llvm::cl::init(1)};
  Option<int64_t> microBatches{
      *this, "micro-batches",
      llvm::cl::desc("Micro-batches under a pipeline (0: the search's)"),
      llvm::cl::init(0)};
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("1f1b or gpipe"),
                               llvm::cl::init("1f1b")};
};

/// The options of `loom-pipeline-pipeline`, those of `dist-assign-stages`.
struct PipelinePipelineFlags
    : public PassPipelineOptions<PipelinePipelineFlags> {
  Option<int64_t> stages{
      *this, "stages",
      llvm::cl::desc("Pipeline stages (0: the module's `dist.pipeline`)"),
      llvm::cl::init(0)};
  Option<std::string> stageLayers{
      *this, "stage-layers",
      llvm::cl::desc("Layers per stage, e.g. 3,3,2"), llvm::cl::init("")};
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("gpipe or 1f1b"),
                               llvm::cl::init("")};
};

/// The options of `loom-partition-pipeline`, those of `dist-insert-reshards`.
struct PartitionPipelineFlags
    : public PassPipelineOptions<PartitionPipelineFlags> {
  Option<std::string> entry{*this, "entry",
                            llvm::cl::desc("Function to partition"),
                            llvm::cl::init("train_step")};
  Option<std::string> mesh{*this, "mesh",
                           llvm::cl::desc("Mesh to create, e.g. dp=2,tp=2"),
                           llvm::cl::init("")};
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("Strategy file (JSON)"),
                               llvm::cl::init("")};
  Option<std::string> parallelConfig{
      *this, "parallel-config",
      llvm::cl::desc("Parallel config: inline JSON or a file"),
      llvm::cl::init("")};
  Option<int64_t> devices{
      *this, "devices",
      llvm::cl::desc("Device count to check the mesh against (0: none)"),
      llvm::cl::init(0)};
};
} // namespace

void mlir::loom::dist::registerDistPipelines() {
  PassPipelineRegistration<ShardingPipelineFlags>(
      "loom-sharding-pipeline",
      "Search every forward op's strategy on a cluster (ends the sharding "
      "phase)",
      [](OpPassManager &pm, const ShardingPipelineFlags &options) {
        SearchStrategyPassOptions passOptions;
        passOptions.entryName = options.entry;
        passOptions.cluster = options.cluster;
        passOptions.devices = options.devices;
        passOptions.meshSpec = options.mesh;
        passOptions.memoryLimitGiB = options.memoryLimit;
        passOptions.strategyFile = options.strategy;
        passOptions.parallelConfig = options.parallelConfig;
        passOptions.pipelineStages = options.pipelineStages;
        passOptions.microBatches = options.microBatches;
        passOptions.schedule = options.schedule;
        buildShardingPipeline(pm, passOptions);
      });
  PassPipelineRegistration<PipelinePipelineFlags>(
      "loom-pipeline-pipeline",
      "Assign every op a pipeline stage (ends the pipeline phase)",
      [](OpPassManager &pm, const PipelinePipelineFlags &options) {
        AssignStagesPassOptions passOptions;
        passOptions.stages = options.stages;
        passOptions.stageLayers = options.stageLayers;
        passOptions.schedule = options.schedule;
        buildPipelinePipeline(pm, passOptions);
      });
  PassPipelineRegistration<PartitionPipelineFlags>(
      "loom-partition-pipeline",
      "Partition the global training step into the per-rank program (ends "
      "the partition phase)",
      [](OpPassManager &pm, const PartitionPipelineFlags &options) {
        PartitionPipelineOptions passOptions;
        passOptions.assignment.entryName = options.entry;
        passOptions.assignment.meshSpec = options.mesh;
        passOptions.assignment.strategyFile = options.strategy;
        passOptions.assignment.parallelConfig = options.parallelConfig;
        passOptions.assignment.devices = options.devices;
        buildPartitionPipeline(pm, passOptions);
      });
  PassPipelineRegistration<>(
      "loom-codegen-pipeline",
      "Derive the forward-only evaluation step from the partitioned step "
      "(the IR part of the codegen phase)",
      [](OpPassManager &pm) { buildCodegenPipeline(pm); });
}

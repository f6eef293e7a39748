//===- Pipelines.cpp - The partition phase pipeline -----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loom-partition-pipeline` turns the global training step, with strategies,
// into the per-rank program; `loomc --compile-to=partition` runs the same list.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/LayoutAssignment.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::loom::dist;

void mlir::loom::dist::buildPartitionPipeline(
    OpPassManager &pm, const InsertReshardsPassOptions &options) {
  // `recompute: true` changes which values the backward reads, so it comes
  // before any of them gets a layout.
  if (requestsRecompute(options.strategyFile, options.parallelConfig)) {
    loom::RecomputePassOptions recompute;
    recompute.entryName = options.entryName;
    recompute.layers = "all";
    pm.addPass(loom::createRecomputePass(recompute));
  }
  // A layout on every value, and a reshard wherever one must change.
  pm.addPass(createInsertReshardsPass(options));
  // Each reshard becomes the cheapest chain of collectives.
  pm.addPass(createLowerReshardsPass());
  // Global shapes become each rank's local shapes.
  pm.addPass(createPartitionSPMDPass());
  // The contract the code generators rely on.
  pm.addPass(createVerifyPartitionedPass());
}

void mlir::loom::dist::buildShardingPipeline(
    OpPassManager &pm, const SearchStrategyPassOptions &options) {
  // The mesh, every forward op's strategy, ZeRO and recompute.
  pm.addPass(createSearchStrategyPass(options));
  // The contract the partition phase relies on.
  VerifyShardingOptions verify;
  verify.entryName = options.entryName;
  pm.addPass(createVerifySharding(verify));
}

namespace {
/// The options of `loom-sharding-pipeline`, those of `dist-search-strategy`.
struct ShardingPipelineOptions
    : public PassPipelineOptions<ShardingPipelineOptions> {
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
  Option<double> memoryLimit{
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
};

/// The options of `loom-partition-pipeline`, those of `dist-insert-reshards`.
struct PartitionPipelineOptions
    : public PassPipelineOptions<PartitionPipelineOptions> {
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
};
} // namespace

void mlir::loom::dist::registerDistPipelines() {
  PassPipelineRegistration<ShardingPipelineOptions>(
      "loom-sharding-pipeline",
      "Search every forward op's strategy on a cluster (ends the sharding "
      "phase)",
      [](OpPassManager &pm, const ShardingPipelineOptions &options) {
        SearchStrategyPassOptions passOptions;
        passOptions.entryName = options.entry;
        passOptions.cluster = options.cluster;
        passOptions.devices = options.devices;
        passOptions.meshSpec = options.mesh;
        passOptions.memoryLimitGiB = options.memoryLimit;
        passOptions.strategyFile = options.strategy;
        passOptions.parallelConfig = options.parallelConfig;
        buildShardingPipeline(pm, passOptions);
      });
  PassPipelineRegistration<PartitionPipelineOptions>(
      "loom-partition-pipeline",
      "Partition the global training step into the per-rank program (ends "
      "the partition phase)",
      [](OpPassManager &pm, const PartitionPipelineOptions &options) {
        InsertReshardsPassOptions passOptions;
        passOptions.entryName = options.entry;
        passOptions.meshSpec = options.mesh;
        passOptions.strategyFile = options.strategy;
        passOptions.parallelConfig = options.parallelConfig;
        buildPartitionPipeline(pm, passOptions);
      });
}

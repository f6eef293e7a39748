//===- Pipelines.cpp - Phase pipelines of the loom dialect ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each phase of Loom is a named pass pipeline that ends in a contract-verifier
// pass; `loom-opt -loom-<phase>-pipeline` and the driver run the same list.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::loom;

void mlir::loom::buildImportPipeline(OpPassManager &pm) {
  // An imported fused projection (q, k, v split from one weight) held as
  // the builders hold it, so tensor parallelism splits its heads directly.
  pm.addPass(createViewFusedProjectionsPass());
  // Then check the graph satisfies the contract every later phase assumes.
  pm.addPass(createVerifyImportPass());
}

void mlir::loom::buildAutodiffPipeline(
    OpPassManager &pm, const AutodiffPassOptions &options,
    const SliceMicroBatchesPassOptions &slicing,
    const MixedPrecisionPassOptions &precision, StringRef gradReduceDtype,
    const InterleaveCopiesPassOptions &copies) {
  // The precision policy's casts go into @forward, so the backward follows
  // them (docs/MixedPrecision.md).
  if (precision.precision != "f32")
    pm.addPass(createMixedPrecisionPass(precision));
  // Fine-grained multi-copy interleave splits the layers' batch in
  // @forward, so reverse mode interleaves the backward the same way.
  if (copies.copies != 1)
    pm.addPass(createInterleaveCopiesPass(copies));
  // Reverse mode and the optimizer in one pass (the forward op ids it
  // records must survive), then the contract the search relies on.
  pm.addPass(createAutodiffPass(options));
  // Megatron's f32 gradient accumulation: no parameter gradient's sum is
  // rounded to the low type, so data-parallel reductions run in f32.
  if (precision.precision != "f32" && gradReduceDtype == "f32")
    pm.addPass(createWidenParamGradsPass());
  // A micro-batch count the user fixed splits the step now (gradient
  // accumulation, a fixed pipeline); one the search chooses, later.
  if (slicing.microBatches != 1)
    pm.addPass(createSliceMicroBatchesPass(slicing));
  pm.addPass(createVerifyTrainStepPass());
}

namespace {
/// The options of `loom-autodiff-pipeline`: those of `loom-autodiff` and
/// `loom-slice-micro-batches`.
struct AutodiffPipelineOptions
    : public PassPipelineOptions<AutodiffPipelineOptions> {
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("adamw, sgd or none"),
                                llvm::cl::init("adamw")};
  Option<ExactDouble> lr{*this, "lr", llvm::cl::desc("Learning rate"),
                    llvm::cl::init(1.0e-3)};
  Option<ExactDouble> beta1{*this, "beta1", llvm::cl::init(0.9)};
  Option<ExactDouble> beta2{*this, "beta2", llvm::cl::init(0.999)};
  Option<ExactDouble> eps{*this, "eps", llvm::cl::init(1.0e-8)};
  // -1: the optimizer's torch.optim default (getDefaultWeightDecay).
  Option<ExactDouble> weightDecay{*this, "weight-decay", llvm::cl::init(-1.0)};
  Option<ExactDouble> momentum{*this, "momentum", llvm::cl::init(0.0)};
  Option<ExactDouble> clipNorm{*this, "clip-norm", llvm::cl::init(0.0)};
  Option<int64_t> microBatches{*this, "micro-batches", llvm::cl::init(1)};
  Option<int64_t> fineGrainInterleave{
      *this, "fine-grain-interleave",
      llvm::cl::desc("Copies of the batch interleaved through the layers "
                     "(loom-interleave-copies)"),
      llvm::cl::init(1)};
  Option<int64_t> batchShards{
      *this, "batch-shards",
      llvm::cl::desc("Micro-batches x data-parallel ranks, which the copies "
                     "must divide the batch's rows after"),
      llvm::cl::init(1)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("f32, bf16-mixed or fp16-mixed (docs/MixedPrecision.md)"),
      llvm::cl::init("f32")};
  Option<std::string> gradReduceDtype{
      *this, "grad-reduce-dtype",
      llvm::cl::desc("The type a mixed-precision step's parameter gradients "
                     "are summed and reduced in: f32 (default) or the low "
                     "type (bf16, f16)"),
      llvm::cl::init("f32")};
  Option<std::string> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("Loss scaling: dynamic, a fixed scale N or none; unset: "
                     "dynamic for fp16-mixed, none otherwise"),
      llvm::cl::init("")};
};
} // namespace

void mlir::loom::registerLoomPipelines() {
  PassPipelineRegistration<>(
      "loom-import-pipeline",
      "Check a freshly imported model graph (ends the import phase)",
      buildImportPipeline);
  PassPipelineRegistration<AutodiffPipelineOptions>(
      "loom-autodiff-pipeline",
      "Build @train_step from @forward (ends the autodiff phase)",
      [](OpPassManager &pm, const AutodiffPipelineOptions &options) {
        AutodiffPassOptions passOptions;
        passOptions.optimizer = options.optimizer;
        passOptions.lr = options.lr;
        passOptions.beta1 = options.beta1;
        passOptions.beta2 = options.beta2;
        passOptions.eps = options.eps;
        passOptions.weightDecay = options.weightDecay;
        passOptions.momentum = options.momentum;
        passOptions.clipNorm = options.clipNorm;
        // GradScaler's dynamic scale is fp16-mixed's default, as in loomc.
        if (!options.lossScale.empty())
          passOptions.lossScale = options.lossScale.getValue();
        else
          passOptions.lossScale =
              options.precision == "fp16-mixed" ? "dynamic" : "none";
        SliceMicroBatchesPassOptions slicing;
        slicing.microBatches = options.microBatches;
        MixedPrecisionPassOptions precision;
        precision.precision = options.precision;
        InterleaveCopiesPassOptions copies;
        copies.copies = options.fineGrainInterleave;
        copies.batchShards = options.batchShards;
        buildAutodiffPipeline(pm, passOptions, slicing, precision,
                              options.gradReduceDtype, copies);
      });
}

//===- Passes.h - dist dialect passes ---------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The partition phase's passes and the `loom-partition-pipeline`.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_DIST_TRANSFORMS_PASSES_H

#include "loom/Dialect/Dist/IR/DistDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "loom/Dialect/ExactDouble.h"
#include "mlir/Pass/Pass.h"

#include <optional>
#include <string>

namespace mlir {
class OpPassManager;
namespace loom::dist {

#define GEN_PASS_DECL
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"

/// Where the reports of the phases go when the compiler is embedded (the C
/// API): `report` takes what stdout would (the plan report, the liveness
/// lines), `planJsonText` receives the plan JSON. Unset members keep the
/// defaults (stdout; no copy of the plan).
struct ReportSinks {
  llvm::raw_ostream *report = nullptr;
  std::string *planJsonText = nullptr;
};

/// `dist-export-plan` and `dist-report-memory` writing to `sinks`.
std::unique_ptr<Pass> createExportPlanPass(const ExportPlanPassOptions &options,
                                           ReportSinks sinks);
std::unique_ptr<Pass> createReportMemoryPass(ReportSinks sinks);

/// The sharding phase: dist-search-strategy with `options`, then
/// dist-verify-sharding. With `exportPlan`, the plan is reported after the
/// verifier (on a lowered copy).
void buildShardingPipeline(OpPassManager &pm,
                           const SearchStrategyPassOptions &options,
                           const ExportPlanPassOptions *exportPlan = nullptr,
                           ReportSinks sinks = {});

/// The pipeline phase: dist-assign-stages with `options` (which does
/// nothing without stages to assign).
void buildPipelinePipeline(OpPassManager &pm,
                           const AssignStagesPassOptions &options = {});

/// What the partition phase needs besides the layout assignment's options.
struct PartitionPipelineOptions {
  /// dist-insert-reshards: entry, mesh, strategy file, parallel config and
  /// the device count to check.
  InsertReshardsPassOptions assignment;
  /// Remarks per reshard (dist-lower-reshards).
  bool explain = false;
  /// When set, dist-export-plan runs after the reshards are lowered.
  std::optional<ExportPlanPassOptions> exportPlan;
  /// Print the liveness of the per-rank program (dist-report-memory).
  bool reportMemory = false;
  ReportSinks sinks;
};

/// The partition phase: recompute (what the parallel config asks for, else
/// what the search chose), dist-insert-reshards, dist-lower-reshards,
/// dist-partition-spmd, dist-partition-stages and dist-verify-partitioned,
/// with the reports `options` asks for.
void buildPartitionPipeline(OpPassManager &pm,
                            const PartitionPipelineOptions &options = {});

/// The codegen phase's IR step: dist-derive-eval-step (the forward-only
/// `@eval_step` the emitted trainer evaluates with),
/// dist-bucket-gradient-reductions with `buckets`, then
/// dist-verify-partitioned on the module that now holds both.
void buildCodegenPipeline(OpPassManager &pm,
                          const BucketGradientReductionsPassOptions &buckets =
                              {});

/// Registers `loom-sharding-pipeline`, `loom-pipeline-pipeline`,
/// `loom-partition-pipeline` and `loom-codegen-pipeline` with the global
/// pass registry.
void registerDistPipelines();
} // namespace loom::dist
} // namespace mlir

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PASSES_H

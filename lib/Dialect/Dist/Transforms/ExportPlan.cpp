//===- ExportPlan.cpp - dist-export-plan ----------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The plan as people and tools read it, written by a pass so that `loomc`
// and `loom-opt` produce it from the same pipeline:
//
//   1. with `lower-copy` (a searched module, not yet partitioned), insert and
//      lower the reshards on a copy nested in the module, so that the
//      collectives and their bytes show, and read that copy;
//   2. write the plan JSON (PlanJSON.cpp) to `plan-json` and to the
//      embedder's string;
//   3. with `report`, print the plan report (PlanReport.cpp), priced on
//      `cluster`;
//   4. erase the copy. The module itself never changes.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Dist/Transforms/PlanJSON.h"
#include "loom/Dialect/Dist/Transforms/PlanReport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"

namespace mlir::loom::dist {
#define GEN_PASS_DEF_EXPORTPLANPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

namespace {
struct ExportPlanPass
    : mlir::loom::dist::impl::ExportPlanPassBase<ExportPlanPass> {
  using ExportPlanPassBase::ExportPlanPassBase;

  ExportPlanPass(const ExportPlanPassOptions &options, ReportSinks sinks)
      : ExportPlanPassBase(options), sinks(sinks) {}

  void runOnOperation() override;

private:
  LogicalResult exportPlan(ModuleOp module);

  ReportSinks sinks;
};
} // namespace

void ExportPlanPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (report && cluster.empty()) {
    module.emitError() << "dist-export-plan: `report` prices the plan on a "
                          "cluster: give `cluster`";
    return signalPassFailure();
  }
  if (!lowerCopy) {
    if (failed(exportPlan(module)))
      signalPassFailure();
    return;
  }
  // 1. The copy lives inside the module while the nested pipeline runs (a
  // dynamic pipeline may only run on what the pass owns).
  OpBuilder builder(module.getBodyRegion());
  builder.setInsertionPointToEnd(module.getBody());
  auto copy = cast<ModuleOp>(builder.clone(*module));
  OpPassManager lower(ModuleOp::getOperationName());
  InsertReshardsPassOptions assignment;
  assignment.strategyFile = strategyFile;
  assignment.parallelConfig = parallelConfig;
  lower.addPass(createInsertReshardsPass(assignment));
  lower.addPass(createLowerReshardsPass());
  LogicalResult result = runPipeline(lower, copy);
  if (succeeded(result))
    result = exportPlan(copy);
  copy.erase();
  if (failed(result))
    signalPassFailure();
}

LogicalResult ExportPlanPass::exportPlan(ModuleOp module) {
  // 2. The plan JSON.
  if (!planJson.empty() || sinks.planJsonText) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (failed(writePlanJSON(module, os)))
      return failure();
    if (!planJson.empty()) {
      // Through a temporary file renamed into place: never half a plan.
      llvm::Error error =
          llvm::writeToOutput(planJson, [&](llvm::raw_ostream &out) {
            out << text;
            return llvm::Error::success();
          });
      if (error)
        return emitError(UnknownLoc::get(module.getContext()))
               << "cannot write '" << planJson
               << "': " << llvm::toString(std::move(error));
    }
    // Moved, not copied: GPT-3 175B's plan is 111 MB.
    if (sinks.planJsonText)
      *sinks.planJsonText = std::move(text);
  }
  if (!report)
    return success();
  // 3. The report.
  ValueOrError<ClusterSpec> spec = loadClusterSpec(cluster);
  if (!spec)
    return emitError(UnknownLoc::get(module.getContext())) << spec.error();
  return writePlanReport(module, *spec,
                         sinks.report ? *sinks.report : llvm::outs());
}

std::unique_ptr<Pass>
mlir::loom::dist::createExportPlanPass(const ExportPlanPassOptions &options,
                                       ReportSinks sinks) {
  return std::make_unique<ExportPlanPass>(options, sinks);
}

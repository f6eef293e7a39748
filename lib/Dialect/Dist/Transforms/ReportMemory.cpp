//===- ReportMemory.cpp - dist-report-memory ------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The check on the search's memory model, printed for people:
//
//   1. for each function of the partitioned module and each pipeline stage,
//      the peak live bytes of the per-rank program by category
//      (dist::analyzeMemory, docs/CostModel.md, "Memory");
//   2. when the search fitted its limit by liveness (`dist.memory_fit`), how
//      many rounds that took and the limit it settled on.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"

using ::mlir::loom::kMemoryFitAttrName;

namespace mlir::loom::dist {
#define GEN_PASS_DEF_REPORTMEMORYPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

namespace {
struct ReportMemoryPass
    : mlir::loom::dist::impl::ReportMemoryPassBase<ReportMemoryPass> {
  using ReportMemoryPassBase::ReportMemoryPassBase;

  explicit ReportMemoryPass(ReportSinks sinks) : sinks(sinks) {}

  void runOnOperation() override;

private:
  ReportSinks sinks;
};
} // namespace

void ReportMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  llvm::raw_ostream &os = sinks.report ? *sinks.report : llvm::outs();
  // Each stage's ranks hold their own stage's values (docs/Pipeline.md).
  FailureOr<SmallVector<std::optional<int64_t>>> stages = getStageList(module);
  if (failed(stages))
    return signalPassFailure();
  auto gib = [](int64_t bytes) { return double(bytes) / double(1 << 30); };
  // 1. The liveness peaks.
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    for (std::optional<int64_t> stage : *stages) {
      MemoryBreakdown memory = analyzeMemory(func, stage);
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
  // 2. The search's fitting.
  auto fit = module->getAttrOfType<DictionaryAttr>(kMemoryFitAttrName);
  if (!fit)
    return;
  auto rounds = fit.getAs<IntegerAttr>("rounds");
  auto limit = fit.getAs<FloatAttr>("limit_gib");
  auto fits = fit.getAs<BoolAttr>("fits");
  if (!rounds || !limit || !fits) {
    module.emitError() << "dist.memory_fit: expected {rounds, limit_gib, "
                          "fits}, found "
                       << fit;
    return signalPassFailure();
  }
  os << llvm::formatv("Memory calibration: {0} search round(s), search limit "
                      "{1:F2} GiB; {2}\n",
                      rounds.getInt(), limit.getValueAsDouble(),
                      fits.getValue() ? "the per-rank program fits"
                                      : "no round fit, the first plan is kept");
}

std::unique_ptr<Pass>
mlir::loom::dist::createReportMemoryPass(ReportSinks sinks) {
  return std::make_unique<ReportMemoryPass>(sinks);
}

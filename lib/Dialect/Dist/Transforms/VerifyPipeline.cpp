//===- VerifyPipeline.cpp - dist-verify-pipeline --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Ends the pipeline phase by checking what dist-partition-stages and the
// runtimes rely on after dist-assign-stages (docs/Pipeline.md), reporting
// every violation before failing:
//
//   1. without a pipeline (no `dist.pipeline`, or one stage) no op carries
//      a `dist.stage`;
//   2. `dist.pipeline` is well formed (getPipelineInfo);
//   3. every op of the entry function with operands and a `loom.fwd` id
//      carries a stage in [0, S), and all ops of one id share it;
//   4. the stage never falls as the id rises: ids number the forward ops
//      in order, so activations flow only forward and gradients back, and
//      the schedule cannot deadlock.
//
// The pass changes nothing.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/PipelineInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

using ::mlir::loom::kFwdAttrName;

namespace mlir::loom::dist {
#define GEN_PASS_DEF_VERIFYPIPELINEPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

struct VerifyPipelinePass
    : public dist::impl::VerifyPipelinePassBase<VerifyPipelinePass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void VerifyPipelinePass::runOnOperation() {
  ModuleOp module = getOperation();
  // 2.
  FailureOr<std::optional<PipelineInfo>> info = getPipelineInfo(module);
  if (failed(info))
    return signalPassFailure();
  bool ok = true;
  // 1.
  if (!*info || (*info)->stages <= 1) {
    module.walk([&](Operation *op) {
      if (op->hasAttr(kStageAttrName)) {
        op->emitOpError() << "pipeline contract: carries a `" << kStageAttrName
                          << "`, but the module has no pipeline";
        ok = false;
      }
    });
    if (!ok)
      signalPassFailure();
    return;
  }
  int64_t stages = (*info)->stages;
  auto func = module.lookupSymbol<func::FuncOp>(entryName);
  if (!func || func.isExternal()) {
    module.emitError() << "pipeline contract: no function @" << entryName
                       << " with a body";
    return signalPassFailure();
  }

  // 3. Each id's stage, from the first of its ops; the others must agree.
  std::map<int64_t, std::pair<int64_t, Operation *>> idStage;
  func.walk([&](Operation *op) {
    auto id = op->getAttrOfType<IntegerAttr>(kFwdAttrName);
    std::optional<int64_t> stage = getOpStage(op);
    if (stage && (*stage < 0 || *stage >= stages)) {
      op->emitOpError() << "pipeline contract: stage " << *stage
                        << " is outside the " << stages << " stages";
      ok = false;
      return;
    }
    if (!id || op->getNumOperands() == 0)
      return;
    if (!stage) {
      op->emitOpError() << "pipeline contract: an op of forward id "
                        << id.getInt() << " has no `" << kStageAttrName << "`";
      ok = false;
      return;
    }
    auto [it, inserted] = idStage.try_emplace(id.getInt(), *stage, op);
    if (!inserted && it->second.first != *stage) {
      op->emitOpError() << "pipeline contract: on stage " << *stage
                        << ", but the ops of forward id " << id.getInt()
                        << " run on stage " << it->second.first;
      ok = false;
    }
  });

  // 4. Stages rise with the ids.
  std::optional<std::pair<int64_t, int64_t>> previous; // (id, stage)
  for (auto &[id, entry] : idStage) {
    auto [stage, op] = entry;
    if (previous && stage < previous->second) {
      op->emitOpError() << "pipeline contract: forward id " << id
                        << " runs on stage " << stage << " after forward id "
                        << previous->first << " on stage " << previous->second
                        << "; stages must not fall along the forward";
      ok = false;
    }
    previous = {id, stage};
  }
  if (!ok)
    signalPassFailure();
}

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
//      carries a stage in [0, S) (and a `dist.chunk` in [0, V) under
//      interleaved 1F1B), and all ops of one id share them;
//   4. the stage (with chunks: the global chunk v * S + s) never falls as
//      the id rises: ids number the forward ops in order, so activations
//      flow only forward and gradients back, and the schedule cannot
//      deadlock.
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
  int64_t chunks = (*info)->virtualStages;
  // An op's place along the forward: its global chunk (its stage without
  // virtual stages).
  auto describe = [&](int64_t place) {
    if (chunks == 1)
      return "stage " + std::to_string(place);
    return "chunk " + std::to_string(place) + " (stage " +
           std::to_string(place % stages) + ")";
  };
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
    int64_t chunk = getOpChunk(op);
    if (chunk < 0 || chunk >= chunks) {
      op->emitOpError() << "pipeline contract: chunk " << chunk
                        << " is outside the " << chunks
                        << " chunk(s) per stage";
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
    int64_t place = chunk * stages + *stage;
    auto [it, inserted] = idStage.try_emplace(id.getInt(), place, op);
    if (!inserted && it->second.first != place) {
      op->emitOpError() << "pipeline contract: on " << describe(place)
                        << ", but the ops of forward id " << id.getInt()
                        << " run on " << describe(it->second.first);
      ok = false;
    }
  });

  // 4. Stages (global chunks) rise with the ids.
  std::optional<std::pair<int64_t, int64_t>> previous; // (id, place)
  for (auto &[id, entry] : idStage) {
    auto [place, op] = entry;
    if (previous && place < previous->second) {
      op->emitOpError() << "pipeline contract: forward id " << id << " runs on "
                        << describe(place) << " after forward id "
                        << previous->first << " on "
                        << describe(previous->second) << "; "
                        << (chunks == 1 ? "stages" : "chunks")
                        << " must not fall along the forward";
      ok = false;
    }
    previous = {id, place};
  }
  if (!ok)
    signalPassFailure();
}

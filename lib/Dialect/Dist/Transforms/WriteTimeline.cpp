//===- WriteTimeline.cpp - dist-write-timeline ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loomc --timeline FILE` as a pass: the Chrome/Perfetto trace of a pipelined
// step's predicted schedule (PipelineTimeline.cpp, docs/Pipeline.md,
// "Predicted timeline"), priced on `cluster`. Changes nothing.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/Transforms/PipelineTimeline.h"

#include "mlir/IR/BuiltinOps.h"

using ::mlir::loom::kPipelineAttrName;

namespace mlir::loom::dist {
#define GEN_PASS_DEF_WRITETIMELINEPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

namespace {
struct WriteTimelinePass
    : mlir::loom::dist::impl::WriteTimelinePassBase<WriteTimelinePass> {
  using WriteTimelinePassBase::WriteTimelinePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module->hasAttr(kPipelineAttrName)) {
      emitError(UnknownLoc::get(&getContext()))
          << "--timeline draws a pipeline's schedule: give "
             "--pipeline-stages S > 1 (or 0 with --cluster to let the "
             "search choose)";
      return signalPassFailure();
    }
    ValueOrError<ClusterSpec> spec = loadClusterSpec(cluster);
    if (!spec) {
      emitError(UnknownLoc::get(&getContext())) << spec.error();
      return signalPassFailure();
    }
    if (failed(writePipelineTimeline(module, *spec, file)))
      signalPassFailure();
  }
};
} // namespace

//===- PipelineTimeline.h - `loomc --timeline` ------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The predicted schedule of a pipelined module as a Chrome-trace (Perfetto)
// file for every rank. The unit times come from the search's prediction
// (`dist.pipeline`'s `predicted` stage times) when present, so the trace's
// bubble is the plan's; otherwise they are estimated from the pipelined IR
// (docs/Pipeline.md's contract): every op tagged `dist.stage = s` and
// `loom.micro_batch` is priced by the cluster cost model at its (local)
// shapes, summed per stage into forward and backward (`loom.backward`), and
// averaged over the micro-batches. Either way `simulatePipeline` plays the
// schedule.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_PIPELINETIMELINE_H
#define LOOM_DIALECT_DIST_TRANSFORMS_PIPELINETIMELINE_H

#include "loom/Analysis/Cost/ClusterSpec.h"
#include "loom/Analysis/Pipeline/Schedule.h"

#include "mlir/IR/BuiltinOps.h"

#include <vector>

namespace mlir::loom::dist {

/// The plain-C++ pipeline library (Analysis/Pipeline), by its short name.
namespace pipeline = ::loom::pipeline;

/// What the timeline simulates.
struct PipelineTimelineInput {
  pipeline::ScheduleKind schedule = pipeline::ScheduleKind::OneFOneB;
  int64_t microBatches = 1;
  int64_t ranksPerStage = 1;
  /// Chunks per stage (interleaved 1F1B; 1 otherwise).
  int64_t virtualStages = 1;
  /// Per chunk (per stage without virtual stages; chunk c on stage
  /// c mod S), one micro-batch's forward and backward seconds.
  std::vector<pipeline::StageTimes> stages;
  double p2pSeconds = 0.0;
  /// True when the times are the search's prediction, false when estimated
  /// from the IR.
  bool predicted = false;
};

/// Reads `dist.pipeline` (an error on the module when absent or malformed)
/// and the unit times, as described above.
FailureOr<PipelineTimelineInput>
getPipelineTimelineInput(ModuleOp module, const ClusterSpec &cluster);

/// Writes the Chrome-trace JSON of `module`'s predicted pipelined step to
/// `path` ("-" for stdout). Errors (no pipeline, an unpriceable op, a file
/// that cannot be written) are emitted on the module.
LogicalResult writePipelineTimeline(ModuleOp module, const ClusterSpec &cluster,
                                    StringRef path);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PIPELINETIMELINE_H

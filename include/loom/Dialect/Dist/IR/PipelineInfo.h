//===- PipelineInfo.h - The dist.pipeline module attribute ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The names of the pipeline attributes (docs/Pipeline.md, "the contract")
// and the module attribute `dist.pipeline` (a `#dist.pipeline`) as a plain
// struct to edit: which mesh axis is the pipeline, how many stages and
// micro-batches, the schedule, the layers of each stage and the search's
// prediction. The stage passes, the search, the interpreter and the
// backends all read it through these helpers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_PIPELINEINFO_H
#define LOOM_DIALECT_DIST_IR_PIPELINEINFO_H

#include "loom/Analysis/Pipeline/Schedule.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::loom::dist {

/// On an op: the pipeline stage that runs it. On a result: the stage that
/// computes it.
using ::mlir::loom::kStageAttrName;
/// On an op of an interleaved pipeline: which of its stage's chunks
/// (virtual stages, 0 .. V-1) it belongs to; absent means chunk 0.
inline constexpr llvm::StringLiteral kChunkAttrName = "dist.chunk";
/// On the module: the pipeline (`PipelineInfo`).
using ::mlir::loom::kPipelineAttrName;
/// On an op: the micro-batch it belongs to (set by loom-autodiff).
using ::mlir::loom::kMicroBatchAttrName;
/// On an op of a micro-batch: part of its backward.
using ::mlir::loom::kBackwardAttrName;

struct PipelineInfo {
  /// The mesh axis whose coordinate is the stage.
  std::string axis = "pp";
  int64_t stages = 1;
  int64_t microBatches = 1;
  ::loom::pipeline::ScheduleKind schedule =
      ::loom::pipeline::ScheduleKind::OneFOneB;
  /// Chunks per stage (interleaved 1F1B's virtual stages; 1 otherwise).
  int64_t virtualStages = 1;
  /// Per chunk (global chunk c = v * stages + s runs on stage s), its
  /// half-open range of layer ordinals (transformer layers in forward
  /// order); empty when not known.
  std::vector<LayerRange> stageLayers;
  /// What the search predicted for this pipeline; null when it did not
  /// choose it (or when the stages changed since).
  PipelinePredictionAttr predicted;

  /// The fields of `attr`.
  static PipelineInfo get(PipelineAttr attr);
  /// The attribute of these fields (which must satisfy its constraints).
  PipelineAttr toAttr(MLIRContext *context) const;
};

/// Reads `dist.pipeline` of `module`: nullopt when absent; an error naming
/// the attribute (emitted on the module) when it is not a `#dist.pipeline`.
FailureOr<std::optional<PipelineInfo>> getPipelineInfo(ModuleOp module);

/// The stages whose ranks hold different values, for per-stage analyses
/// (dist::analyzeMemory): 0 .. S-1 for a pipeline of S > 1 stages, else
/// {nullopt} (every rank holds every value). Fails as getPipelineInfo does.
FailureOr<SmallVector<std::optional<int64_t>>> getStageList(ModuleOp module);

/// The stage of `op` (its `dist.stage`), or nullopt when it runs on every
/// stage.
std::optional<int64_t> getOpStage(Operation *op);

/// The chunk of `op` on its stage (its `dist.chunk`, else 0).
int64_t getOpChunk(Operation *op);

/// The key under which the interpreter and the emitted code count `op`'s
/// micro-batch in flight: one per (chunk, micro-batch), since a chunk's
/// activations live from its forward to its backward. Nullopt for an op of
/// no micro-batch.
std::optional<int64_t> getInFlightKey(Operation *op);

/// The ops of `body` that compute activations: they read a block argument
/// other than a data input (`isDataInput(argument number)`: token ids,
/// labels) or a value received from another stage, directly or through
/// such ops. A micro-batch is in flight from its first forward op among
/// them to its last backward op; the interpreter and the emitted code count
/// it this way, so batch slices and label counts a stage prepares ahead do
/// not count.
llvm::DenseSet<Operation *>
getActivationOps(Block &body, llvm::function_ref<bool(unsigned)> isDataInput);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_IR_PIPELINEINFO_H

//===- AttributeNames.h - Loom's discardable attribute names ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Every discardable attribute the phases read or write, named once. The
// passes, analyses, interpreter, emitters and importers spell them through
// these constants, never as string literals, so a name cannot drift between
// the writer and a reader. (Op names are never compared as strings: ops are
// told apart by class, trait or interface.)
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_ATTRIBUTENAMES_H
#define LOOM_DIALECT_ATTRIBUTENAMES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::loom {

//===----------------------------------------------------------------------===//
// The model graph (import, autodiff, recompute)
//===----------------------------------------------------------------------===//

/// `#loom.param` on a trained argument of @forward / @train_step.
inline constexpr llvm::StringLiteral kParamAttrName = "loom.param";
/// `#loom.input` on a data argument (its role: tokens, labels, ...).
inline constexpr llvm::StringLiteral kInputAttrName = "loom.input";
/// The ecosystem name of a @train_step argument or result.
inline constexpr llvm::StringLiteral kNameAttrName = "loom.name";
/// The shape a tensor has in its ecosystem's files (a state dict, a
/// checkpoint) where the IR holds it as a row-major view of another shape:
/// GPT-2's fused `c_attn.weight` is [3H, H] in nanoGPT's files and
/// [3, 1, H, H] in the IR, so that tensor parallelism can split q, k and v
/// each over heads (docs/Models.md). Same elements in the same order; tools
/// that read or write files by name convert between the two shapes.
inline constexpr llvm::StringLiteral kFileShapeAttrName = "loom.file_shape";
/// The index of the @forward op a @train_step op computes, differentiates
/// or updates the parameters of (set by autodiff).
inline constexpr llvm::StringLiteral kFwdAttrName = "loom.fwd";
/// The micro-batch an op belongs to (autodiff, with several).
inline constexpr llvm::StringLiteral kMicroBatchAttrName = "loom.micro_batch";
/// Marks an op of the backward (autodiff; recomputed clones count).
inline constexpr llvm::StringLiteral kBackwardAttrName = "loom.backward";
/// Marks a clone made by `loom-recompute`.
inline constexpr llvm::StringLiteral kRecomputeAttrName = "loom.recompute";
/// The copy of its layer's batch an op computes (`loom-interleave-copies`,
/// fine-grained multi-copy interleave).
inline constexpr llvm::StringLiteral kCopyAttrName = "loom.copy";

//===----------------------------------------------------------------------===//
// The plan (sharding, pipeline, partition)
//===----------------------------------------------------------------------===//

/// `#dist.strategy` on a forward op.
inline constexpr llvm::StringLiteral kStrategyAttrName = "dist.strategy";
/// `#dist.layout` on arguments, results, casts and block-dependent ops.
inline constexpr llvm::StringLiteral kLayoutAttrName = "dist.layout";
/// `#dist.plan` on the module: the search's outer choices (`zero`,
/// `recompute`) and predictions (step time, compute, comm, bubble, memory).
inline constexpr llvm::StringLiteral kPlanAttrName = "dist.plan";
/// The search's memory breakdown, for reports.
inline constexpr llvm::StringLiteral kMemoryAttrName = "dist.memory";
/// The plan's data-parallel gradient reductions against the backward that
/// hides them (`sync_s`, `exposed_s`, `buckets`, `bucket_cap_mb`;
/// docs/CostModel.md, "Overlapped gradient reduction"), for reports.
inline constexpr llvm::StringLiteral kCommOverlapAttrName = "dist.comm_overlap";
/// How the search fitted its memory limit by liveness (`fit-liveness`).
inline constexpr llvm::StringLiteral kMemoryFitAttrName = "dist.memory_fit";
/// The Megatron-style hand config closest to the searched plan
/// (`hand-configs`), for the report.
inline constexpr llvm::StringLiteral kHandConfigAttrName = "dist.hand_config";
/// What the multi-copy interleave's copies could hide (`copies`,
/// `layer_compute_s`, `layer_comm_s`, `hidden_comm_s`), when the step has
/// copies; for reports (docs/Partitioning.md, "Multi-copy interleave").
inline constexpr llvm::StringLiteral kMultiCopyAttrName = "dist.multi_copy";
/// The cluster spec the search priced with, as JSON.
inline constexpr llvm::StringLiteral kClusterAttrName = "dist.cluster";
/// The pipeline (stages, micro-batches, schedule), on the module.
inline constexpr llvm::StringLiteral kPipelineAttrName = "dist.pipeline";
/// The pipeline stage of an op or result.
inline constexpr llvm::StringLiteral kStageAttrName = "dist.stage";
/// On a data-parallel gradient `dist.all_reduce`: the bucket it belongs to
/// (`dist-bucket-gradient-reductions`). A target may start the reduction
/// without blocking where the op stands (after the bucket's last gradient).
inline constexpr llvm::StringLiteral kBucketAttrName = "dist.bucket";
/// On the first op that reads a result of a bucket: the buckets (an i64
/// array) whose reductions must be complete before it runs.
inline constexpr llvm::StringLiteral kWaitBucketsAttrName = "dist.wait_buckets";

//===----------------------------------------------------------------------===//
// Argument names of @train_step (values of `loom.name`)
//===----------------------------------------------------------------------===//

/// The rank-0 float factor of the learning rate that every optimizer update
/// of the step reads (`lr * lr_scale`): the step input through which the
/// trainer's schedule sets each step's rate. It starts at 1 where no data
/// gives it (loom-run, the harness), which is the compiled rate.
inline constexpr llvm::StringLiteral kLrScaleArgName = "lr_scale";

/// The fp16-mixed step's loss-scaling state (docs/MixedPrecision.md, "fp16
/// loss scaling"): the rank-0 scale and its growth tracker, arguments and
/// loop-carried results of `@train_step`, so the trainer carries and
/// checkpoints them with the optimizer state; and the result holding the
/// number of non-finite gradient elements (0: the update was applied).
inline constexpr llvm::StringLiteral kLossScaleArgName = "loss_scale";
inline constexpr llvm::StringLiteral kLossScaleTrackerArgName =
    "loss_scale.growth_tracker";
inline constexpr llvm::StringLiteral kFoundInfResultName = "found_inf";
/// A test hook: a rank-0 step input added to the gradients' unscale factor
/// (0 changes nothing; the trainer's `--inject-nonfinite-at-step` sets inf
/// for one step, so every gradient of that step is non-finite).
inline constexpr llvm::StringLiteral kInjectNonfiniteArgName =
    "inject_nonfinite";
/// The value a named state argument starts at where no data gives it
/// (f64; zero without it): the loss scale's initial value.
inline constexpr llvm::StringLiteral kInitialValueAttrName =
    "loom.initial_value";

} // namespace mlir::loom

#endif // LOOM_DIALECT_ATTRIBUTENAMES_H

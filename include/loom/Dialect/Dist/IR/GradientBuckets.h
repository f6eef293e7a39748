//===- GradientBuckets.h - Data-parallel gradient buckets -------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The IR contract between `dist-bucket-gradient-reductions` and the targets
// (docs/Codegen.md, "Overlap"): the gradient reductions (sum all-reduces
// under DDP, reduce-scatters into the rank's shard under ZeRO-1/2/3) of one
// bucket carry
// `dist.bucket = b` and stand together right after the bucket's last
// gradient, and the first op that reads one of their results carries b in
// `dist.wait_buckets`. A target may start each bucketed reduction where it
// stands and complete it just before that op; one that ignores the
// attributes runs them blocking, with the same results. The pass, the
// verifier (dist-verify-partitioned) and the emitters read the buckets
// through these helpers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_GRADIENTBUCKETS_H
#define LOOM_DIALECT_DIST_IR_GRADIENTBUCKETS_H

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <map>
#include <optional>

namespace mlir::loom::dist {

/// One bucket: its reductions (`dist.all_reduce` or `dist.reduce_scatter`
/// ops) in program order and the op that waits for them (null only in IR
/// the verifier rejects).
struct GradientBucket {
  llvm::SmallVector<Operation *> reductions;
  Operation *waiter = nullptr;
};

/// Whether `op` is a data-parallel gradient reduction:
///   - a sum all-reduce that is read, and only by optimizer updates (the
///     gradients DDP buckets), or
///   - a reduce-scatter (ZeRO's gradient shards) whose result reaches
///     optimizer updates only, directly or through the `loom.add`s that
///     accumulate a parameter's gradient shards (over micro-batches, or
///     over the uses of a tied parameter).
bool isGradientReduction(Operation *op);

/// The bucket `op` (a gradient reduction) is marked with, if any.
std::optional<int64_t> getBucket(Operation *op);

/// The gradient a reduction of a bucket reduces: its operand.
Value getReducedGradient(Operation *reduction);

/// The buckets `op` waits for (`dist.wait_buckets`), empty if none.
llvm::SmallVector<int64_t> getWaitedBuckets(Operation *op);

/// The buckets marked in `func`'s body, by bucket number.
std::map<int64_t, GradientBucket> collectGradientBuckets(func::FuncOp func);

/// Checks the contract above on `func`, reporting each violation:
///   B1. a bucket's reductions stand in the function's body, over one mesh
///       and axis list, in one pipeline stage, and are sums (all-reduces of
///       kind sum or reduce-scatters; one bucket may hold both);
///   B2. each stands after the producer of every operand of its bucket (a
///       reduction must not start before its bucket's last gradient);
///   B3. exactly one op waits for each bucket; it follows every reduction
///       of the bucket, is or precedes the first reader of each, and runs on
///       the bucket's stage; no op waits for a bucket that does not exist.
LogicalResult verifyGradientBuckets(func::FuncOp func);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_IR_GRADIENTBUCKETS_H

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
#include "mlir/Pass/Pass.h"

namespace mlir {
class OpPassManager;
namespace loom::dist {

#define GEN_PASS_DECL
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"

/// The partition phase: dist-insert-reshards with `options`, then
/// dist-lower-reshards, dist-partition-spmd and dist-verify-partitioned.
void buildPartitionPipeline(OpPassManager &pm,
                            const InsertReshardsPassOptions &options = {});

/// The sharding phase: dist-search-strategy with `options`, then
/// dist-verify-sharding.
void buildShardingPipeline(OpPassManager &pm,
                           const SearchStrategyPassOptions &options);

/// Registers `loom-sharding-pipeline` and `loom-partition-pipeline` with the
/// global pass registry.
void registerDistPipelines();

} // namespace loom::dist
} // namespace mlir

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PASSES_H

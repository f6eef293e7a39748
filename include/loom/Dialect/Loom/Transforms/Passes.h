//===- Passes.h - loom dialect passes ---------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Passes over the `loom` dialect and the pipelines built from them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "loom/Dialect/ExactDouble.h"
#include "mlir/Pass/Pass.h"

#include <optional>

namespace mlir {
class OpPassManager;
namespace loom {

#define GEN_PASS_DECL
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"

/// The weight decay `torch.optim` applies by default with `optimizer`
/// (`torch.optim.AdamW`: 0.01, `torch.optim.SGD`: 0; `none` applies none):
/// what loom-autodiff's `weight-decay` means when it is left at -1.
/// test/python/test_optimizer_defaults.py reads them from torch.optim.
double getDefaultWeightDecay(llvm::StringRef optimizer);

/// GradScaler's defaults (torch.cuda.amp.GradScaler): the dynamic loss
/// scale starts at 2^16, doubles after 2000 consecutive clean steps and
/// halves on a step with a non-finite gradient.
inline constexpr double kDefaultInitLossScale = 65536.0;
inline constexpr double kLossScaleGrowthFactor = 2.0;
inline constexpr double kLossScaleBackoffFactor = 0.5;
inline constexpr int64_t kLossScaleGrowthInterval = 2000;

/// Whether `text` is a value of loom-autodiff's `loss-scale` (and loomc's
/// `--loss-scale`): `none`, `dynamic`, or a fixed scale, a finite number
/// > 0.
bool isValidLossScale(llvm::StringRef text);

/// The number of micro-batches `step` is split into: one more than the
/// largest `loom.micro_batch` of its ops, 1 when none has one.
int64_t getMicroBatchCount(func::FuncOp step);

/// The index of `step`'s step counter, the rank-0 i64 argument named
/// `step` that every step loom-autodiff builds has (none: not such a step).
std::optional<unsigned> getStepCounterIndex(func::FuncOp step);

/// Builds the import phase: loom-view-fused-projections (fused q/k/v
/// weights held as the builders hold them), then loom-verify-import, which
/// checks the module against the contract the later phases rely on.
void buildImportPipeline(OpPassManager &pm);

/// The autodiff phase: loom-mixed-precision unless `precision` asks for
/// f32, loom-autodiff with `options`, loom-widen-param-grads when the
/// precision is mixed and `gradReduceDtype` is f32, then, unless `slicing`
/// asks for one micro-batch, loom-slice-micro-batches, then
/// loom-verify-train-step. `gradReduceDtype` is `f32` (Megatron's default)
/// or the low type's name (`bf16`, `f16`: the gradients are summed and
/// reduced in it).
void buildAutodiffPipeline(OpPassManager &pm,
                           const AutodiffPassOptions &options = {},
                           const SliceMicroBatchesPassOptions &slicing = {},
                           const MixedPrecisionPassOptions &precision = {},
                           llvm::StringRef gradReduceDtype = "f32",
                           const InterleaveCopiesPassOptions &copies = {});

/// Registers `loom-import-pipeline` with the global pass registry.
void registerLoomPipelines();

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_H

//===- MixedPrecision.h - The mixed-precision policy table ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The one table that says, for every op kind of `@forward`, in which element
// type `loom-mixed-precision` makes it compute. The pass reads it, and so do
// the tests that check that every `loom` op has a rule (a new op without one
// fails them, and fails the pass where it appears, instead of being cast
// silently wrong). docs/MixedPrecision.md gives the table with its reasons.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_MIXEDPRECISION_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_MIXEDPRECISION_H

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace mlir::loom {

/// Where an op computes under a mixed-precision policy.
enum class PrecisionRule {
  /// In the low type (bf16/f16): f32 float operands are cast down. The ops
  /// of autocast's lower-precision list (GEMMs, attention) and the
  /// embedding lookup.
  Low,
  /// In f32: low-type operands are cast up. The ops of autocast's fp32 list
  /// (normalizations, softmax, losses, sums and means, exp/log/rsqrt).
  F32,
  /// In the type of its inputs; when they mix f32 and the low type, the low
  /// type wins and the f32 operands are cast down.
  Follow,
  /// Unchanged: the op states its result type (`loom.cast`,
  /// `arith.constant`).
  AsWritten,
  /// Not allowed in `@forward`: a backward or optimizer op, built by
  /// `loom-autodiff` after the policy has been applied.
  AfterAutodiff,
};

/// The rule of op kind `name`, or nullopt when the policy has none (the
/// pass then fails naming the op).
std::optional<PrecisionRule> lookupPrecisionRule(OperationName name);

/// `low`, `f32`, `follow`, `as-written` or `after-autodiff`.
llvm::StringRef stringifyPrecisionRule(PrecisionRule rule);

/// The low element type of a policy name: bf16 for `bf16-mixed`, f16 for
/// `fp16-mixed`, a null type for `f32`; nullopt for an unknown name.
std::optional<Type> getLowPrecisionType(MLIRContext *context,
                                        llvm::StringRef precision);

} // namespace mlir::loom

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_MIXEDPRECISION_H

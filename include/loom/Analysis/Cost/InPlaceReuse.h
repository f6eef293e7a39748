//===- InPlaceReuse.h - The in-place rule of a training step ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The in-place rule of a training step (docs/CostModel.md, "In place"): a
// value the step carries into one of its arguments (the new parameter, the
// new optimizer state) is computed in that argument's storage when the old
// value is dead there, so the step holds one copy of its state rather than
// the old and the new side by side. The rule is defined once, here, and
// followed by the three places that count or place a step's memory: the
// reference interpreter (its values really take the storage, and its
// measured peak counts one copy), dist::analyzeMemory (the predicted
// liveness peak) and the emitters' arena plan (emit::StepArena), so the
// prediction stays the interpreter's measured peak to the byte and the
// emitted programs stay close to it.
//
// Value `r`, result of op `k` of the entry block, takes the storage of
// argument `a` when
//   1. the entry returns `r` as the result carried into `a` (the result's
//      `loom.name` is `a`'s name) and `r` has `a`'s type, so the same bytes;
//   2. `k` computes `r` into storage of its own (not a reshape, annotation,
//      reshard or constant, which name another value's storage);
//   3. no op after `k` (the return included) reads `a` or a value that names
//      its storage (reshape, annotation, reshard results), and
//   4. either no op reads it at `k` either, or `k` is an optimizer update
//      (loom.adamw_update, loom.sgd_update) whose only read of `a` is the
//      operand `r` is the update of (param -> new_param, exp_avg ->
//      new_exp_avg, ...): the update kernels read each element before they
//      write it, host and CUDA alike, so writing over the old state as it
//      goes is safe.
// Each argument gives its storage to at most one value. No other op writes
// over an operand: an elementwise result could take the storage of an
// operand that dies at its op, but the emitters give every such result an
// arena buffer of its own, and the rule describes what the emitted programs
// do (the prediction would otherwise be below them).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_INPLACEREUSE_H
#define LOOM_ANALYSIS_COST_INPLACEREUSE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::loom::dist {

/// The in-place rule's decisions for one entry function.
class InPlaceReuse {
public:
  /// Applies the rule to every value of `entry`'s block.
  explicit InPlaceReuse(func::FuncOp entry);

  /// The argument whose storage `value` takes, if the rule lets it.
  std::optional<BlockArgument> getDonor(Value value) const;
  /// Whether the op defining `value` reads its donor while it writes
  /// `value` (an optimizer update in place), rather than finding the
  /// donor dead already.
  bool readsDonor(Value value) const;

  /// Every value that takes an argument's storage, with that argument.
  const llvm::DenseMap<Value, BlockArgument> &getDonors() const {
    return donors;
  }

private:
  llvm::DenseMap<Value, BlockArgument> donors;
};

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_COST_INPLACEREUSE_H

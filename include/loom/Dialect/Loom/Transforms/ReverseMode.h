//===- ReverseMode.h - Reverse-mode accumulation over a clone ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The backward of one straight-line clone of a loss function, built from the
// ops' `DifferentiableOpInterface` VJPs: `loom-autodiff` runs it over its one
// clone of `@forward`, `loom-slice-micro-batches` over each micro-batch's
// clone of the step's forward. The gradients of parameters (block
// arguments) are kept in parts, one per forward op that reads them, summed
// across clones (micro-batches) as they come and over the parts once at the
// end (docs/Autodiff.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_REVERSEMODE_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_REVERSEMODE_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdint>
#include <map>

namespace mlir::loom {

/// Reverse mode over clones of a forward whose ops carry `loom.fwd`, with
/// the builder inserting at the end of the clones' block. Ops the VJPs
/// build get the `loom.fwd` of the forward op they differentiate.
class ReverseMode {
public:
  /// `params`: the block arguments whose gradients are wanted.
  explicit ReverseMode(const llvm::DenseSet<Value> &params) : params(params) {}

  /// Builds the backward of `ops` (one clone, in forward order) from
  /// `loss`, whose gradient is `seed`, and adds each parameter's gradient
  /// to its parts.
  LogicalResult backward(OpBuilder &builder, ArrayRef<Operation *> ops,
                         Value loss, Value seed);

  /// The parts of `param`'s gradient by the `loom.fwd` id of the forward op
  /// they differentiate, in id order (empty when no gradient reaches it).
  const std::map<int64_t, Value> &getParamParts(Value param) const;

  /// The gradient of `param` (null if none reaches it): its parts summed in
  /// id order, the sums tagged `loom.fwd = owner`.
  Value buildParamGrad(OpBuilder &builder, Location loc, Value param,
                       int64_t owner) const;

private:
  /// Adds `grad` to the gradient of `value`, building the sum with `id`.
  /// A parameter's gradient is accumulated per forward op that reads it
  /// (across clones too) and the parts are summed once, after the last
  /// clone: a tied embedding's head part then stays with the head (its
  /// pipeline stage) until that one final sum.
  void accumulate(OpBuilder &builder, Location loc, Value value, Value grad,
                  int64_t id);

  llvm::DenseSet<Value> params;
  llvm::DenseMap<Value, Value> grads;
  llvm::DenseMap<Value, std::map<int64_t, Value>> paramParts;
};

} // namespace mlir::loom

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_REVERSEMODE_H

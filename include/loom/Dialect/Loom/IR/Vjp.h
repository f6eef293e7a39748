//===- Vjp.h - Helpers shared by the VJPs of loom ops -----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The building blocks every family's `buildVjp` uses: constants, undoing a
// broadcast (sum over the broadcast dims, then reshape), redoing one (add to
// zeros of the target shape), and the diagnostic of ops that have no VJP.
// Everything is built from loom ops and `arith.constant` splats, so the
// backward graph stays in the dialect the rest of Loom understands.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_VJP_H
#define LOOM_DIALECT_LOOM_IR_VJP_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::loom {

/// A splat `arith.constant` of `value` with `shape` (rank 0 by default),
/// whose element type is `elementType`.
Value buildSplat(OpBuilder &builder, Location loc, Type elementType,
                 double value, ArrayRef<int64_t> shape = {});

/// Undoes a numpy broadcast for a gradient: sums `grad` over the dims that
/// `target` lacks or has as 1 where `grad` does not, then reshapes it to
/// `target`. Returns `grad` itself when the shapes already agree.
Value sumToShape(OpBuilder &builder, Location loc, Value grad,
                 RankedTensorType target);

/// Broadcasts `value` (broadcast-compatible with `target`) to `target` by
/// adding it to zeros of that shape.
Value broadcastTo(OpBuilder &builder, Location loc, Value value,
                  RankedTensorType target);

/// Whether `value` is a floating-point tensor (integer operands get no
/// gradient).
bool isFloatTensor(Value value);

/// The diagnostic of backward and optimizer ops: Loom has no second order.
LogicalResult emitNoSecondOrder(Operation *op);

} // namespace mlir::loom

#endif // LOOM_DIALECT_LOOM_IR_VJP_H

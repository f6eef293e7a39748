//===- ResultTypes.h - Re-derive an op's result types -----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Passes that change an op's operand types in place (micro-batch slices,
// mixed-precision casts) re-derive its result types through the op's own
// type inference; each pass then handles, its own way, the ops that state
// their result type (cast, reshape).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_RESULTTYPES_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_RESULTTYPES_H

#include "mlir/IR/Operation.h"

namespace mlir::loom {

/// Sets `op`'s result types to what its InferTypeOpInterface gives for its
/// current operands: true when it did, false when `op` has no inference,
/// failure (diagnosed by the op) when inference refuses the operands.
FailureOr<bool> reinferResultTypes(Operation *op);

} // namespace mlir::loom

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_RESULTTYPES_H

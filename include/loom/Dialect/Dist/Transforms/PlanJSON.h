//===- PlanJSON.h - The partition plan as JSON ------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Dumps what layout assignment decided, for people and tools to inspect
// (`loomc --plan-json FILE`, `dist-insert-reshards{plan-json=FILE}`): the
// mesh, every op's strategy, every argument's, result's and op result's
// layout, every `dist.reshard` with an estimate of the bytes it moves, and,
// once reshards are lowered, every collective with its local bytes. The
// format is documented in docs/Partitioning.md, "Plan JSON".
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_PLANJSON_H
#define LOOM_DIALECT_DIST_TRANSFORMS_PLANJSON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::loom::dist {

/// Writes the plan of `module` (after dist-insert-reshards, optionally after
/// dist-lower-reshards) to `os` as one JSON object. Fails, with an error on
/// the module, when it has no single mesh or no function.
LogicalResult writePlanJSON(ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PLANJSON_H

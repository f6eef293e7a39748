//===- DistOps.h - dist dialect operations ----------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Declares the ops of the `dist` dialect, generated from DistOps.td, and the
// mesh lookup every op naming a mesh shares.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_DISTOPS_H
#define LOOM_DIALECT_DIST_IR_DISTOPS_H

#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/IR/DistDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "loom/Dialect/Dist/IR/DistOps.h.inc"

namespace mlir::loom::dist {

/// Resolves `name`, seen from `from`, to a `dist.mesh` and returns its mesh.
/// Reports an error on `from` when `name` is not a valid `dist.mesh`.
FailureOr<Mesh> lookupMesh(Operation *from, FlatSymbolRefAttr name,
                           SymbolTableCollection &symbolTables);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_IR_DISTOPS_H

//===- MeshChecks.h - Checks shared by ops that name a mesh -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Internal to the dist dialect library: the constraints every op naming a
// mesh shares (the mesh resolves; the axes it names exist), so that each op's
// verifier states only what is particular to it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_DIST_IR_OPS_MESHCHECKS_H
#define LOOM_LIB_DIALECT_DIST_IR_OPS_MESHCHECKS_H

#include "loom/Dialect/Dist/IR/DistOps.h"

#include <string>
#include <vector>

namespace mlir::loom::dist {

/// The strings of an array of string attributes.
std::vector<std::string> getAxisNames(ArrayAttr names);

/// Checks that `mesh` names a `dist.mesh` and that `axes` is a valid group of
/// its axes (non-empty, existing, distinct); returns the group size.
FailureOr<int64_t> verifyMeshGroup(Operation *op, FlatSymbolRefAttr mesh,
                                   ArrayAttr axes,
                                   SymbolTableCollection &symbolTables);

/// Checks that `mesh` names a `dist.mesh` with an axis `axis`; returns the
/// axis size.
FailureOr<int64_t> verifyMeshAxis(Operation *op, FlatSymbolRefAttr mesh,
                                  StringRef axis,
                                  SymbolTableCollection &symbolTables);

} // namespace mlir::loom::dist

#endif // LOOM_LIB_DIALECT_DIST_IR_OPS_MESHCHECKS_H

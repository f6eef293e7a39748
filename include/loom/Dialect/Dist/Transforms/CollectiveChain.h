//===- CollectiveChain.h - Redistribution plans as dist ops -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Turns a redistribution plan (loom/Analysis/Layout/Redistribution.h) into
// `dist` collectives on a local tensor. `dist-lower-reshards` uses it between
// the casts it puts around each reshard; tests use it on already-local
// functions, which the interpreter runs over simulated ranks.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_COLLECTIVECHAIN_H
#define LOOM_DIALECT_DIST_TRANSFORMS_COLLECTIVECHAIN_H

#include "loom/Analysis/Layout/Redistribution.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

namespace mlir::loom::dist {

/// Builds `plan`'s collectives, in order, on `local`: one rank's tensor in
/// the plan's source layout, a ranked tensor of static shape. `mesh` is the
/// mesh `meshName` declares. Returns the last result (`local` itself for an
/// empty plan), whose type is the local type of the plan's destination
/// layout. The plan must come from the planner for this tensor's global
/// shape, so every op it builds verifies.
Value buildCollectiveChain(OpBuilder &builder, Location loc, Value local,
                           const Mesh &mesh, FlatSymbolRefAttr meshName,
                           const RedistributionPlan &plan);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_COLLECTIVECHAIN_H

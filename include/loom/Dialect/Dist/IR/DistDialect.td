//===- DistDialect.td - The dist dialect -------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The `dist` dialect says where data lives and how it moves: device meshes,
// tensor layouts over them, and the collectives and point-to-point transfers
// that change layouts. The layout algebra itself is plain C++
// (loom/Analysis/Layout/Layout.h); this dialect gives it an IR form.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_DISTDIALECT_TD
#define LOOM_DIALECT_DIST_IR_DISTDIALECT_TD

include "mlir/IR/OpBase.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::mlir::loom::dist";
  let summary = "Device meshes, tensor layouts and communication";
  let description = [{
    A `dist.mesh` names a logical grid of devices with named axes; a device's
    rank is the row-major index of its mesh coordinates (last axis fastest).
    A `#dist.layout` says how a global tensor is spread over a mesh: for each
    tensor dim, the mesh axes splitting it (major to minor), plus the
    `partial` axes over which the value is a pending sum. Axes used nowhere
    are replicated.

    Before partitioning, `dist.annotate` and `dist.reshard` act on global
    tensors. After it, the collectives act on the local tensor of every
    device, each over the group of devices that differ only in the mesh axes
    it names; each collective's effect on a layout is exact, so a chain of
    them can be checked. Ops that name a mesh verify against it through
    `SymbolUserOpInterface`. Constraints are numbered (C1, C2, ...) in each
    op's description, and `test/Dialect/Dist/invalid.mlir` has one case per
    constraint.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Adds the attributes; defined next to them, where their storage types
    /// are complete.
    void registerAttributes();
  }];
}

#endif // LOOM_DIALECT_DIST_IR_DISTDIALECT_TD

//===- DistAttrs.td - dist dialect attributes --------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The layout attribute and the reduction kinds of the `dist` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_DISTATTRS_TD
#define LOOM_DIALECT_DIST_IR_DISTATTRS_TD

include "loom/Dialect/Dist/IR/DistDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Reduction kinds
//===----------------------------------------------------------------------===//

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "how an all_reduce combines the group's values", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">
    ]> {
  let cppNamespace = "::mlir::loom::dist";
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

def Dist_LayoutAttr : AttrDef<Dist_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "how a global tensor is spread over a mesh";
  let description = [{
    `#dist.layout<@mesh, [dim axes...], partial = [axes]>` lists, for each
    dim of a tensor, the axes of `@mesh` that split it, major to minor, and
    the axes over which the value is a pending sum. An axis used nowhere is
    replicated; `partial = []` is omitted.

    ```mlir
    // A [batch, seq, hidden] activation: batch split over `dp`, hidden over
    // `tp`, and a pending sum over `x`.
    #dist.layout<@m, [["dp"], [], ["tp"]], partial = ["x"]>
    ```

    On mesh `{dp:2, tp:4}`, device (dp, tp) holds, in a dim split
    `["dp", "tp"]`, block `dp * 4 + tp` of 8. The attribute only names its
    mesh, so checks that need the mesh (axes exist, sizes divide, partial
    axes in mesh order) are made by the ops that carry it.

    Constraints:
    - C1: every axis name is a non-empty string.
    - C2: no axis appears twice (across dims and `partial`).
  }];

  let parameters = (ins
    AttrParameter<"::mlir::FlatSymbolRefAttr", "the mesh">:$mesh,
    AttrParameter<"::mlir::ArrayAttr",
                  "for each dim, an array of axis names">:$dims,
    AttrParameter<"::mlir::ArrayAttr", "the partial axis names">:$partial
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;

  let extraClassDeclaration = [{
    /// The rank of the tensors this layout fits.
    size_t getRank() const { return getDims().size(); }

    /// The axes splitting dim `dim`, major first.
    ::llvm::SmallVector<::llvm::StringRef> getDimAxes(size_t dim) const;

    /// The axes the value is a pending sum over.
    ::llvm::SmallVector<::llvm::StringRef> getPartialAxes() const;

    /// The layout as the layout library sees it, checked against `mesh`
    /// (which must be the mesh this attribute names).
    ValueOrError<Layout> toLayout(const Mesh &mesh) const;

    /// The attribute for `layout` on the mesh named `mesh`.
    static LayoutAttr get(::mlir::FlatSymbolRefAttr mesh,
                          const Layout &layout);
  }];
}

#endif // LOOM_DIALECT_DIST_IR_DISTATTRS_TD

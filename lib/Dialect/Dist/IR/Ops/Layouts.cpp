//===- Layouts.cpp - dist.annotate and dist.reshard -----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The ops that carry layouts of global values. A `#dist.layout` only names
// its mesh, so the checks that need the mesh's axes (C1 to C5 of annotate)
// run here, once symbols resolve.
//
//===----------------------------------------------------------------------===//

#include "MeshChecks.h"

using namespace mlir;
using namespace mlir::loom::dist;

/// `["dp", "tp"]`, for messages.
static std::string printNames(ArrayRef<StringRef> names) {
  std::string result = "[";
  for (auto [i, name] : llvm::enumerate(names))
    result += (i ? ", \"" : "\"") + name.str() + "\"";
  return result + "]";
}

/// Checks constraints C1 to C5 of `dist.annotate` for `layout` on a global
/// tensor of type `type`. `role` names the layout in messages.
static LogicalResult verifyLayoutOf(Operation *op, LayoutAttr layout, Type type,
                                    StringRef role,
                                    SymbolTableCollection &symbolTables) {
  // C1.
  FailureOr<Mesh> mesh = lookupMesh(op, layout.getMesh(), symbolTables);
  if (failed(mesh))
    return failure();
  // C2 (that no axis is used twice is the attribute's own C2).
  ValueOrError<Layout> converted = layout.toLayout(*mesh);
  if (!converted)
    return op->emitOpError() << role << ": " << converted.error();
  // C3: Layout::get sorts partial axes into mesh order.
  SmallVector<StringRef> written = layout.getPartialAxes();
  SmallVector<StringRef> canonical;
  for (const std::string &axis : converted->getPartialAxes())
    canonical.push_back(axis);
  if (written != canonical)
    return op->emitOpError()
           << role << ": expects partial axes in mesh order "
           << printNames(canonical) << ", got " << printNames(written);
  // C4 and C5. The ODS constraint makes `type` a static tensor, but this
  // runs even when that check failed.
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || !tensorType.hasStaticShape())
    return success();
  if (std::optional<std::string> error =
          converted->verifyShape(*mesh, tensorType.getShape().vec()))
    return op->emitOpError() << role << ": " << *error;
  return success();
}

//===----------------------------------------------------------------------===//
// AnnotateOp
//===----------------------------------------------------------------------===//

LogicalResult AnnotateOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLayoutOf(*this, getLayout(), getType(), "layout", tables);
}

//===----------------------------------------------------------------------===//
// ReshardOp
//===----------------------------------------------------------------------===//

LogicalResult ReshardOp::verifySymbolUses(SymbolTableCollection &tables) {
  // C6: a reshard moves data within one set of devices; moving between
  // meshes (pipeline stages) is send/recv.
  if (getFrom().getMesh() != getTo().getMesh())
    return emitOpError() << "expects `from` and `to` on one mesh, got "
                         << getFrom().getMesh() << " and " << getTo().getMesh();
  // C1 to C5, for each layout.
  if (failed(verifyLayoutOf(*this, getFrom(), getType(), "`from`", tables)))
    return failure();
  return verifyLayoutOf(*this, getTo(), getType(), "`to`", tables);
}

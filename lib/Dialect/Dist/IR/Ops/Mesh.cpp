//===- Mesh.cpp - dist.mesh, dist.axis_index and mesh lookup --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The mesh op, the one op that reads a device's mesh coordinate, and the
// lookup and axis checks every op naming a mesh shares. Messages about axes
// come from the layout library, so the IR and the C++ API report alike.
//
//===----------------------------------------------------------------------===//

#include "MeshChecks.h"

using namespace mlir;
using namespace mlir::loom::dist;

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  // C1.
  if (getShape().size() != getAxes().size())
    return emitOpError() << "expects one axis name per size, got "
                         << getShape().size() << " sizes and "
                         << getAxes().size() << " names";
  // C2 and C3.
  ValueOrError<Mesh> mesh = getMesh();
  if (!mesh)
    return emitOpError() << mesh.error();
  return success();
}

ValueOrError<Mesh> MeshOp::getMesh() {
  if (getShape().size() != getAxes().size())
    return ValueOrError<Mesh>::failure("mesh sizes and names differ in count");
  std::vector<Mesh::Axis> axes;
  for (auto [name, size] :
       llvm::zip_equal(getAxes().getAsValueRange<StringAttr>(), getShape()))
    axes.push_back({name.str(), size});
  return Mesh::get(std::move(axes));
}

FailureOr<Mesh>
mlir::loom::dist::lookupMesh(Operation *from, FlatSymbolRefAttr name,
                             SymbolTableCollection &symbolTables) {
  auto meshOp = symbolTables.lookupNearestSymbolFrom<MeshOp>(from, name);
  if (!meshOp)
    return from->emitOpError() << name << " does not name a dist.mesh";
  ValueOrError<Mesh> mesh = meshOp.getMesh();
  // The mesh's own verifier reports the details.
  if (!mesh)
    return from->emitOpError() << name << " is not a valid dist.mesh";
  return *mesh;
}

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

FailureOr<int64_t>
mlir::loom::dist::verifyMeshGroup(Operation *op, FlatSymbolRefAttr meshName,
                                  ArrayAttr axes,
                                  SymbolTableCollection &symbolTables) {
  FailureOr<Mesh> mesh = lookupMesh(op, meshName, symbolTables);
  if (failed(mesh))
    return failure();
  std::vector<std::string> names = getAxisNames(axes);
  if (std::optional<std::string> error = mesh->verifyGroupAxes(names))
    return op->emitOpError() << *error;
  return mesh->getGroupSize(names);
}

FailureOr<int64_t>
mlir::loom::dist::verifyMeshAxis(Operation *op, FlatSymbolRefAttr meshName,
                                 StringRef axis,
                                 SymbolTableCollection &symbolTables) {
  FailureOr<Mesh> mesh = lookupMesh(op, meshName, symbolTables);
  if (failed(mesh))
    return failure();
  if (std::optional<std::string> error = mesh->verifyAxis(axis))
    return op->emitOpError() << *error;
  return mesh->getAxis(*mesh->findAxis(axis)).size;
}

//===----------------------------------------------------------------------===//
// AxisIndexOp
//===----------------------------------------------------------------------===//

LogicalResult
AxisIndexOp::verifySymbolUses(SymbolTableCollection &symbolTables) {
  // C1 and C2.
  return verifyMeshAxis(*this, getMeshAttr(), getAxis(), symbolTables);
}

//===- DeviceMesh.cpp - A device mesh as the runtime sees it --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/MPI/DeviceMesh.h"

namespace loom::runtime::mpi {

using ::mlir::loom::dist::ValueOrError;

DeviceMesh::DeviceMesh() : Mesh(*Mesh::get({})) {}

Status DeviceMesh::create(std::vector<Axis> axes, DeviceMesh &out) {
  ValueOrError<Mesh> mesh = Mesh::get(std::move(axes));
  if (!mesh)
    return Status::failure(mesh.error());
  out = DeviceMesh(*mesh);
  return Status::success();
}

Status DeviceMesh::parse(std::string_view text, DeviceMesh &out) {
  ValueOrError<Mesh> mesh = Mesh::parse(text);
  if (!mesh)
    return Status::failure(mesh.error());
  out = DeviceMesh(*mesh);
  return Status::success();
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string formatAxes(const AxisList &axisNames) {
  std::string text = "[";
  for (size_t i = 0; i < axisNames.size(); ++i)
    text += (i ? ", \"" : "\"") + axisNames[i] + "\"";
  return text + "]";
}

} // namespace loom::runtime::mpi

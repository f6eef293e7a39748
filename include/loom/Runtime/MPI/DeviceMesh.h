//===- DeviceMesh.h - A device mesh as the runtime sees it ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's `dist.mesh` is the compiler's: `mlir::loom::dist::Mesh`
// (include/loom/Analysis/Layout/Layout.h, the LoomLayout library, plain
// C++17 with no MLIR), so rank numbering, groups and group indices have one
// definition that the partitioner, the interpreter and emitted programs all
// use. DeviceMesh only adds what the runtime's callers want on top: a default
// (one device) so it can be a member, and construction that reports through
// the runtime's Status.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_MPI_DEVICEMESH_H
#define LOOM_RUNTIME_MPI_DEVICEMESH_H

#include "loom/Analysis/Layout/Layout.h"
#include "loom/Runtime/Host/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::runtime::mpi {

using Status = host::Status;

/// An ordered list of mesh axis names, as a collective's `axes` attribute.
using AxisList = std::vector<std::string>;

/// A logical device mesh: dist::Mesh with Status-returning construction.
class DeviceMesh : public ::mlir::loom::dist::Mesh {
public:
  /// The mesh with no axes: one device.
  DeviceMesh();
  DeviceMesh(const ::mlir::loom::dist::Mesh &mesh) : Mesh(mesh) {}

  /// Builds a mesh as dist::Mesh::get.
  static Status create(std::vector<Axis> axes, DeviceMesh &out);

  /// Parses "dp=2,tp=4" as dist::Mesh::parse.
  static Status parse(std::string_view text, DeviceMesh &out);
};

/// "[2, 3, 4]".
std::string formatShape(const std::vector<int64_t> &shape);
/// "[\"dp\", \"tp\"]".
std::string formatAxes(const AxisList &axisNames);

} // namespace loom::runtime::mpi

#endif // LOOM_RUNTIME_MPI_DEVICEMESH_H

//===- DeviceMesh.h - A device mesh as the runtime sees it ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's own description of a `dist.mesh`: ordered axis names and
// sizes, the rank <-> coordinates map and the groups a collective runs in.
// It restates, in plain C++17, the definitions of `mlir::loom::dist::Mesh`
// (include/loom/Analysis/Layout/Layout.h) so that emitted per-rank programs
// link only runtime libraries; test/Unit/Runtime/MPI/DeviceMeshTest.cpp
// checks that the two agree on every rank and axis list of several meshes.
//
//   - rank = row-major index of the coordinates, the last axis fastest;
//   - the group of a rank over an ordered axis list = the ranks that differ
//     from it only in those axes, ordered by group index;
//   - group index = the mixed-radix number of the coordinates on the listed
//     axes, the first listed axis most significant.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_MPI_DEVICEMESH_H
#define LOOM_RUNTIME_MPI_DEVICEMESH_H

#include "loom/Runtime/Host/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom::runtime::mpi {

using Status = host::Status;

/// An ordered list of mesh axis names, as a collective's `axes` attribute.
using AxisList = std::vector<std::string>;

/// A logical device mesh: named axes with sizes.
class DeviceMesh {
public:
  /// One axis of the mesh.
  struct Axis {
    std::string name;
    int64_t size;
  };

  /// The most devices a mesh may have (as dist::Mesh::kMaxDevices): ranks
  /// must fit MPI's int.
  static constexpr int64_t kMaxDevices = int64_t(1) << 30;

  DeviceMesh() = default;

  /// Builds a mesh, checking that names are non-empty and distinct, sizes
  /// positive and the device count at most kMaxDevices (a mesh with no axes
  /// is one device).
  static Status create(std::vector<Axis> axes, DeviceMesh &out);

  /// Parses "dp=2,tp=4" (the spelling of `loomc --mesh`).
  static Status parse(std::string_view text, DeviceMesh &out);

  const std::vector<Axis> &getAxes() const { return axes; }
  /// The product of the axis sizes.
  int64_t getNumDevices() const;
  /// The position of axis `name`, if the mesh has it.
  std::optional<size_t> findAxis(std::string_view name) const;

  /// Checks that every name of `axisNames` is an axis of the mesh and none
  /// repeats; the message names the offending axis and the mesh.
  Status checkAxes(const AxisList &axisNames) const;

  /// The rest of the queries require valid ranks and axis lists (checkAxes).
  std::vector<int64_t> getCoordinates(int64_t rank) const;
  int64_t getRank(const std::vector<int64_t> &coordinates) const;
  /// The product of the sizes of `axisNames` (1 for an empty list).
  int64_t getGroupSize(const AxisList &axisNames) const;
  /// The position of `rank` in its group over `axisNames`.
  int64_t getGroupIndex(int64_t rank, const AxisList &axisNames) const;
  /// The group of `rank` over `axisNames`, ordered by group index.
  std::vector<int64_t> getGroup(int64_t rank, const AxisList &axisNames) const;
  /// The rank with coordinate `coordinate` on axis `axis` and the
  /// coordinates of `rank` elsewhere (the peer of a `dist.send`/`recv`).
  int64_t getPeer(int64_t rank, size_t axis, int64_t coordinate) const;

  /// "{dp:2, tp:4}", as `dist::Mesh::toString`.
  std::string toString() const;

private:
  std::vector<Axis> axes;
};

/// "[2, 3, 4]".
std::string formatShape(const std::vector<int64_t> &shape);
/// "[\"dp\", \"tp\"]".
std::string formatAxes(const AxisList &axisNames);

} // namespace loom::runtime::mpi

#endif // LOOM_RUNTIME_MPI_DEVICEMESH_H

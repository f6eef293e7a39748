//===- Placements.cpp - Each rank's blocks, computed from layouts ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Harness/Placements.h"
#include "loom/Runtime/Harness/Harness.h"

namespace loom::runtime::harness {

using host::Status;

Status parseTensorLayout(const TensorSpec &tensor, const mpi::DeviceMesh &mesh,
                         layout::BlockLayout &out) {
  if (tensor.layout.empty()) {
    out = layout::BlockLayout::replicated(tensor.globalShape.size());
    return Status::success();
  }
  if (Status status = layout::BlockLayout::parse(tensor.layout, mesh, out);
      !status)
    return Status::failure("`" + tensor.name + "`: " + status.message());
  if (Status status = out.verifyShape(mesh, tensor.globalShape); !status)
    return Status::failure("`" + tensor.name + "`: " + status.message());
  return Status::success();
}

Status Placements::create(const ProgramSpec &spec, const mpi::DeviceMesh &mesh,
                          Placements &out) {
  out.spec = &spec;
  out.mesh = mesh;
  out.arguments.assign(spec.arguments.size(), {});
  out.results.assign(spec.results.size(), {});
  for (size_t i = 0; i < spec.arguments.size(); ++i)
    if (Status status =
            parseTensorLayout(spec.arguments[i], mesh, out.arguments[i]);
        !status)
      return status;
  for (size_t i = 0; i < spec.results.size(); ++i)
    if (Status status =
            parseTensorLayout(spec.results[i], mesh, out.results[i]);
        !status)
      return status;
  return Status::success();
}

Placement Placements::argument(int64_t rank, size_t index) const {
  const layout::BlockLayout &layout = arguments[index];
  Placement placement;
  placement.offset =
      layout.getBlockOffset(mesh, spec->arguments[index].globalShape, rank);
  // A pending sum: the first member of each partial group holds it.
  placement.holds = mesh.getGroupIndex(rank, layout.getPartialAxes()) == 0;
  placement.canonicalRank = 0;
  return placement;
}

Placement Placements::result(int64_t rank, size_t index) const {
  const TensorSpec &tensor = spec->results[index];
  const layout::BlockLayout &layout = results[index];
  Placement placement;
  placement.offset = layout.getBlockOffset(mesh, tensor.globalShape, rank);
  if (tensor.stage >= 0 && spec->stageOf(rank) != tensor.stage) {
    // Computed on another stage: this rank's block is not part of it.
    placement.holds = false;
    placement.canonicalRank = -1;
    return placement;
  }
  // Axes the layout does not use hold replicas (within its stage).
  mpi::AxisList replicated;
  for (const auto &axis : mesh.getAxes())
    if (!layout.uses(axis.name) &&
        !(tensor.stage >= 0 && axis.name == spec->pipelineAxis))
      replicated.push_back(axis.name);
  placement.holds = mesh.getGroupIndex(rank, replicated) == 0;
  // The first member of the group: this rank with coordinate 0 on each of
  // those axes.
  std::vector<int64_t> coordinates = mesh.getCoordinates(rank);
  for (const std::string &axis : replicated)
    coordinates[*mesh.findAxis(axis)] = 0;
  placement.canonicalRank = mesh.getRank(coordinates);
  return placement;
}

Status blockOffset(const mpi::DeviceMesh &mesh, int64_t rank,
                   const char *layoutText, const Shape &globalShape,
                   Shape &offset) {
  layout::BlockLayout layout;
  if (Status status = layout::BlockLayout::parse(layoutText, mesh, layout);
      !status)
    return status;
  if (Status status = layout.verifyShape(mesh, globalShape); !status)
    return status;
  offset = layout.getBlockOffset(mesh, globalShape, rank);
  return Status::success();
}

} // namespace loom::runtime::harness

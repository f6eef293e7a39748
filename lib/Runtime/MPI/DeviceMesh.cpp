//===- DeviceMesh.cpp - A device mesh as the runtime sees it --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Mesh arithmetic for the MPI runtime. Each definition mirrors the one of
// the same name in lib/Analysis/Layout/Layout.cpp; DeviceMeshTest compares
// them exhaustively.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/MPI/DeviceMesh.h"

#include <charconv>

namespace loom::runtime::mpi {

Status DeviceMesh::create(std::vector<Axis> axes, DeviceMesh &out) {
  int64_t devices = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].name.empty())
      return Status::failure("mesh axis #" + std::to_string(i) +
                             " has an empty name");
    if (axes[i].size <= 0)
      return Status::failure("mesh axis `" + axes[i].name + "` has size " +
                             std::to_string(axes[i].size) +
                             ", expected a positive size");
    for (size_t j = 0; j < i; ++j)
      if (axes[j].name == axes[i].name)
        return Status::failure("mesh axis `" + axes[i].name +
                               "` is named twice");
    // Ranks are MPI ints; the limit is dist::Mesh::kMaxDevices.
    if (devices > kMaxDevices / axes[i].size)
      return Status::failure("mesh has more than " +
                             std::to_string(kMaxDevices) + " devices");
    devices *= axes[i].size;
  }
  out.axes = std::move(axes);
  return Status::success();
}

Status DeviceMesh::parse(std::string_view text, DeviceMesh &out) {
  std::vector<Axis> axes;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    size_t equals = item.find('=');
    int64_t size = 0;
    if (equals == std::string_view::npos)
      return Status::failure("mesh `" + std::string(text) +
                             "`: expected "
                             "NAME=SIZE, got `" +
                             std::string(item) + "`");
    std::string_view digits = item.substr(equals + 1);
    auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), size);
    if (error != std::errc() || end != digits.data() + digits.size())
      return Status::failure("mesh `" + std::string(text) + "`: axis `" +
                             std::string(item.substr(0, equals)) +
                             "` has size `" + std::string(digits) +
                             "`, expected an integer");
    axes.push_back({std::string(item.substr(0, equals)), size});
  }
  return create(std::move(axes), out);
}

int64_t DeviceMesh::getNumDevices() const {
  int64_t devices = 1;
  for (const Axis &axis : axes)
    devices *= axis.size;
  return devices;
}

std::optional<size_t> DeviceMesh::findAxis(std::string_view name) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name)
      return i;
  return std::nullopt;
}

Status DeviceMesh::checkAxes(const AxisList &axisNames) const {
  for (size_t i = 0; i < axisNames.size(); ++i) {
    if (!findAxis(axisNames[i]))
      return Status::failure("axis `" + axisNames[i] +
                             "` is not an axis of mesh " + toString());
    for (size_t j = 0; j < i; ++j)
      if (axisNames[j] == axisNames[i])
        return Status::failure("axis `" + axisNames[i] +
                               "` is listed twice in " + formatAxes(axisNames));
  }
  return Status::success();
}

std::vector<int64_t> DeviceMesh::getCoordinates(int64_t rank) const {
  std::vector<int64_t> coordinates(axes.size());
  for (size_t i = axes.size(); i-- > 0;) {
    coordinates[i] = rank % axes[i].size;
    rank /= axes[i].size;
  }
  return coordinates;
}

int64_t DeviceMesh::getRank(const std::vector<int64_t> &coordinates) const {
  int64_t rank = 0;
  for (size_t i = 0; i < axes.size(); ++i)
    rank = rank * axes[i].size + coordinates[i];
  return rank;
}

int64_t DeviceMesh::getGroupSize(const AxisList &axisNames) const {
  int64_t size = 1;
  for (const std::string &name : axisNames)
    size *= axes[*findAxis(name)].size;
  return size;
}

int64_t DeviceMesh::getGroupIndex(int64_t rank,
                                  const AxisList &axisNames) const {
  std::vector<int64_t> coordinates = getCoordinates(rank);
  int64_t index = 0;
  for (const std::string &name : axisNames) {
    size_t axis = *findAxis(name);
    index = index * axes[axis].size + coordinates[axis];
  }
  return index;
}

std::vector<int64_t> DeviceMesh::getGroup(int64_t rank,
                                          const AxisList &axisNames) const {
  std::vector<size_t> positions;
  for (const std::string &name : axisNames)
    positions.push_back(*findAxis(name));
  int64_t size = getGroupSize(axisNames);
  std::vector<int64_t> coordinates = getCoordinates(rank);
  std::vector<int64_t> group;
  group.reserve(size);
  // Decode each group index into coordinates on the listed axes, the last
  // listed axis least significant.
  for (int64_t index = 0; index < size; ++index) {
    int64_t rest = index;
    for (size_t i = positions.size(); i-- > 0;) {
      coordinates[positions[i]] = rest % axes[positions[i]].size;
      rest /= axes[positions[i]].size;
    }
    group.push_back(getRank(coordinates));
  }
  return group;
}

int64_t DeviceMesh::getPeer(int64_t rank, size_t axis,
                            int64_t coordinate) const {
  std::vector<int64_t> coordinates = getCoordinates(rank);
  coordinates[axis] = coordinate;
  return getRank(coordinates);
}

std::string DeviceMesh::toString() const {
  std::string text = "{";
  for (size_t i = 0; i < axes.size(); ++i)
    text += (i ? ", " : "") + axes[i].name + ":" + std::to_string(axes[i].size);
  return text + "}";
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

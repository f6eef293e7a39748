//===- CollectiveContract.cpp - What a communicator call may be -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Where the MPI and NCCL communicators used to check the same arguments with
// different rules, these take the stricter one: shapes, peers and tags are
// checked on both (MPI checked them, NCCL did not); tags are bounded by the
// dialect's kMaxTag on both (MPI allowed up to its MPI_TAG_UB); a collective
// needs at least one mesh axis (the dialect's rule; both took an empty list
// as a group of one).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Layout/CollectiveContract.h"

#include <cstring>
#include <optional>

namespace loom::runtime {

using mpi::formatAxes;
using mpi::formatShape;

#define LOOM_RETURN_IF_FAILED(expr)                                            \
  do {                                                                         \
    if (Status status_ = (expr); !status_.ok())                                \
      return status_;                                                          \
  } while (false)

std::string CollectiveContract::describe(const char *op, const AxisList &axes) {
  return std::string(op) + " over " + formatAxes(axes);
}

std::string CollectiveContract::describe(ReduceKind kind,
                                         const AxisList &axes) {
  return describe(kind == ReduceKind::Sum ? "all_reduce sum" : "all_reduce max",
                  axes);
}

std::string CollectiveContract::describeSend(int64_t to, Tag tag) {
  return "send to rank " + std::to_string(to) + " (tag " + std::to_string(tag) +
         ")";
}

std::string CollectiveContract::describeRecv(int64_t from, Tag tag) {
  return "recv from rank " + std::to_string(from) + " (tag " +
         std::to_string(tag) + ")";
}

/// Step 1: what every member can check alike about its operand.
static Status checkShape(const std::string &what, const Shape &shape,
                         int64_t maxCount) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0)
      return Status::failure(what + ": shape " + formatShape(shape) +
                             " has a negative dim " + std::to_string(d));
  // An overflow-safe product bound.
  int64_t count = 1;
  for (int64_t size : shape) {
    if (size != 0 && count > maxCount / size)
      return Status::failure(what + ": shape " + formatShape(shape) +
                             " has more elements than a count holds (" +
                             std::to_string(maxCount) + ")");
    count *= size;
  }
  return Status::success();
}

static int64_t countOf(const Shape &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

Status CollectiveContract::checkGroupCall(
    const std::string &what, const Shape &shape, const AxisList &axes,
    const std::vector<std::pair<const char *, int64_t>> &dims) const {
  LOOM_RETURN_IF_FAILED(checkShape(what, shape, maxCount));
  for (auto [name, dim] : dims)
    if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
      return Status::failure(what + ": " + name + " " + std::to_string(dim) +
                             " is out of range for shape " +
                             formatShape(shape));
  if (std::optional<std::string> error = mesh.verifyGroupAxes(axes))
    return Status::failure(what + ": " + *error);
  return Status::success();
}

Status CollectiveContract::checkDivisible(const std::string &what,
                                          const Shape &shape,
                                          const AxisList &axes,
                                          int64_t dim) const {
  int64_t n = mesh.getGroupSize(axes);
  if (shape[dim] % n != 0)
    return Status::failure(what + ": the group size " + std::to_string(n) +
                           " does not divide dim " + std::to_string(dim) +
                           " (size " + std::to_string(shape[dim]) +
                           ") of shape " + formatShape(shape));
  return Status::success();
}

Status CollectiveContract::allGather(const Shape &shape, const AxisList &axes,
                                     int64_t dim) const {
  std::string what = describe("all_gather", axes);
  LOOM_RETURN_IF_FAILED(checkGroupCall(what, shape, axes, {{"dim", dim}}));
  // The result is n operands long: it must fit a count too.
  int64_t n = mesh.getGroupSize(axes);
  if (countOf(shape) > maxCount / n)
    return Status::failure(what +
                           ": the gathered tensor has more elements "
                           "than a count holds (" +
                           std::to_string(maxCount) + ")");
  return Status::success();
}

Status CollectiveContract::allSlice(const Shape &shape, const AxisList &axes,
                                    int64_t dim) const {
  std::string what = describe("all_slice", axes);
  LOOM_RETURN_IF_FAILED(checkGroupCall(what, shape, axes, {{"dim", dim}}));
  return checkDivisible(what, shape, axes, dim);
}

Status CollectiveContract::allReduce(const Shape &shape, const AxisList &axes,
                                     ReduceKind kind) const {
  return checkGroupCall(describe(kind, axes), shape, axes, {});
}

Status CollectiveContract::reduceScatter(const Shape &shape,
                                         const AxisList &axes,
                                         int64_t dim) const {
  std::string what = describe("reduce_scatter", axes);
  LOOM_RETURN_IF_FAILED(checkGroupCall(what, shape, axes, {{"dim", dim}}));
  return checkDivisible(what, shape, axes, dim);
}

Status CollectiveContract::allToAll(const Shape &shape, const AxisList &axes,
                                    int64_t splitDim, int64_t concatDim) const {
  std::string what = describe("all_to_all", axes);
  LOOM_RETURN_IF_FAILED(checkGroupCall(
      what, shape, axes, {{"split dim", splitDim}, {"concat dim", concatDim}}));
  return checkDivisible(what, shape, axes, splitDim);
}

Status CollectiveContract::collectivePermute(const Shape &shape,
                                             const AxisList &axes) const {
  return checkGroupCall(describe("collective_permute", axes), shape, axes, {});
}

Status CollectiveContract::collectivePermute(
    const Shape &shape, const AxisList &axes,
    const std::vector<std::pair<int64_t, int64_t>> &pairs) const {
  std::string what = describe("collective_permute", axes);
  LOOM_RETURN_IF_FAILED(checkGroupCall(what, shape, axes, {}));
  int64_t n = mesh.getGroupSize(axes);
  std::vector<bool> isSource(n, false), isTarget(n, false);
  for (auto [source, target] : pairs) {
    if (source < 0 || source >= n || target < 0 || target >= n)
      return Status::failure(what + ": pair (" + std::to_string(source) + ", " +
                             std::to_string(target) +
                             ") is outside the group of " + std::to_string(n));
    if (isSource[source])
      return Status::failure(what + ": member " + std::to_string(source) +
                             " is the source of two pairs");
    if (isTarget[target])
      return Status::failure(what + ": member " + std::to_string(target) +
                             " is the target of two pairs");
    isSource[source] = true;
    isTarget[target] = true;
  }
  return Status::success();
}

Status CollectiveContract::broadcast(const Shape &shape, const AxisList &axes,
                                     int64_t root) const {
  std::string what = describe("broadcast", axes);
  LOOM_RETURN_IF_FAILED(checkGroupCall(what, shape, axes, {}));
  int64_t n = mesh.getGroupSize(axes);
  if (root < 0 || root >= n)
    return Status::failure(what + ": root " + std::to_string(root) +
                           " is outside the group of " + std::to_string(n));
  return Status::success();
}

Status CollectiveContract::checkPointToPoint(const std::string &what,
                                             const Shape &shape, int64_t peer,
                                             Tag tag) const {
  LOOM_RETURN_IF_FAILED(checkShape(what, shape, maxCount));
  int64_t devices = mesh.getNumDevices();
  if (peer < 0 || peer >= devices)
    return Status::failure(what + ": rank " + std::to_string(peer) +
                           " is outside the " + std::to_string(devices) +
                           " ranks of mesh " + mesh.toString());
  if (tag < 0 || tag > kMaxTag)
    return Status::failure(what + ": tag " + std::to_string(tag) +
                           " is outside [0, " + std::to_string(kMaxTag) + "]");
  return Status::success();
}

Status CollectiveContract::send(const Shape &shape, int64_t to, Tag tag) const {
  return checkPointToPoint(describeSend(to, tag), shape, to, tag);
}

Status CollectiveContract::recv(const Shape &shape, int64_t from,
                                Tag tag) const {
  return checkPointToPoint(describeRecv(from, tag), shape, from, tag);
}

Status CollectiveContract::received(const std::string &what, const Shape &shape,
                                    const char *type, int64_t elementBytes,
                                    const Incoming &message) const {
  int64_t count = countOf(shape);
  int64_t bytes = count * elementBytes;
  bool same = message.type ? std::strcmp(type, message.type) == 0 &&
                                 count == message.count
                           : bytes == message.bytes;
  if (same)
    return Status::success();
  std::string holds = std::to_string(message.bytes) + " bytes";
  if (message.type)
    holds = std::to_string(message.count) + " " + message.type + " elements (" +
            holds + ")";
  return Status::failure("rank " + std::to_string(rank) + ": " + what +
                         ": expects shape " + formatShape(shape) + " (" +
                         std::to_string(count) + " " + type + " elements, " +
                         std::to_string(bytes) +
                         " bytes) but the message holds " + holds);
}

} // namespace loom::runtime

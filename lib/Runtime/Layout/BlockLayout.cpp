//===- BlockLayout.cpp - Cut global tensors into per-rank blocks ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Layout/BlockLayout.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

namespace loom::runtime::layout {

Status BlockLayout::create(const DeviceMesh &mesh, std::vector<AxisList> dims,
                           AxisList partial, BlockLayout &out) {
  std::set<std::string> seen;
  auto check = [&](const std::string &axis) -> Status {
    if (!mesh.findAxis(axis))
      return Status::failure("layout uses axis `" + axis +
                             "`, which is not an axis of mesh " +
                             mesh.toString());
    if (!seen.insert(axis).second)
      return Status::failure("layout uses axis `" + axis + "` twice");
    return Status::success();
  };
  for (const AxisList &list : dims)
    for (const std::string &axis : list)
      if (Status status = check(axis); !status)
        return status;
  for (const std::string &axis : partial)
    if (Status status = check(axis); !status)
      return status;
  // Canonical form, as dist::Layout: partial axes in mesh order.
  std::sort(partial.begin(), partial.end(),
            [&](const std::string &a, const std::string &b) {
              return *mesh.findAxis(a) < *mesh.findAxis(b);
            });
  out.dims = std::move(dims);
  out.partial = std::move(partial);
  return Status::success();
}

BlockLayout BlockLayout::replicated(size_t rank) {
  BlockLayout layout;
  layout.dims.resize(rank);
  return layout;
}

namespace {
/// A recursive-descent reader of the layout spelling.
class LayoutReader {
public:
  explicit LayoutReader(std::string_view text) : text(text) {}

  bool consume(std::string_view token) {
    skipSpace();
    if (text.substr(pos, token.size()) != token)
      return false;
    pos += token.size();
    return true;
  }
  bool atEnd() {
    skipSpace();
    return pos == text.size();
  }
  bool readString(std::string &out) {
    if (!consume("\""))
      return false;
    size_t end = text.find('"', pos);
    if (end == std::string_view::npos)
      return false;
    out = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return !out.empty();
  }
  bool readAxisList(AxisList &out) {
    if (!consume("["))
      return false;
    if (consume("]"))
      return true;
    do {
      std::string axis;
      if (!readString(axis))
        return false;
      out.push_back(std::move(axis));
    } while (consume(","));
    return consume("]");
  }
  /// `@name,` of the full attribute spelling.
  bool skipMeshRef() {
    if (!consume("@"))
      return false;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_' || text[pos] == '.'))
      ++pos;
    return consume(",");
  }
  size_t position() const { return pos; }

private:
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  std::string_view text;
  size_t pos = 0;
};
} // namespace

Status BlockLayout::parse(std::string_view text, const DeviceMesh &mesh,
                          BlockLayout &out) {
  LayoutReader reader(text);
  auto fail = [&]() {
    return Status::failure("cannot parse layout `" + std::string(text) +
                           "` at character " +
                           std::to_string(reader.position()) +
                           ": expected [[\"axis\", ...], ...] with an "
                           "optional `, partial = [...]`");
  };
  bool wrapped = reader.consume("#dist.layout<");
  if (wrapped && !reader.skipMeshRef())
    return fail();
  std::vector<AxisList> dims;
  if (!reader.consume("["))
    return fail();
  if (!reader.consume("]")) {
    do {
      AxisList list;
      if (!reader.readAxisList(list))
        return fail();
      dims.push_back(std::move(list));
    } while (reader.consume(","));
    if (!reader.consume("]"))
      return fail();
  }
  AxisList partial;
  if (reader.consume(",")) {
    if (!reader.consume("partial") || !reader.consume("=") ||
        !reader.readAxisList(partial))
      return fail();
  }
  if ((wrapped && !reader.consume(">")) || !reader.atEnd())
    return fail();
  return create(mesh, std::move(dims), std::move(partial), out);
}

bool BlockLayout::uses(std::string_view axis) const {
  for (const AxisList &list : dims)
    if (std::find(list.begin(), list.end(), axis) != list.end())
      return true;
  return std::find(partial.begin(), partial.end(), axis) != partial.end();
}

Status BlockLayout::verifyShape(const DeviceMesh &mesh,
                                const std::vector<int64_t> &globalShape) const {
  if (globalShape.size() != dims.size())
    return Status::failure(
        "layout " + toString() + " has rank " + std::to_string(dims.size()) +
        ", but the tensor has shape " + mpi::formatShape(globalShape));
  for (size_t d = 0; d < dims.size(); ++d) {
    if (Status status = mesh.checkAxes(dims[d]); !status)
      return status;
    int64_t blocks = mesh.getGroupSize(dims[d]);
    if (globalShape[d] % blocks != 0)
      return Status::failure("mesh axes " + mpi::formatAxes(dims[d]) +
                             " (size " + std::to_string(blocks) +
                             ") do not divide dim " + std::to_string(d) +
                             " (size " + std::to_string(globalShape[d]) + ")");
  }
  return mesh.checkAxes(partial);
}

std::vector<int64_t>
BlockLayout::getLocalShape(const DeviceMesh &mesh,
                           const std::vector<int64_t> &globalShape) const {
  std::vector<int64_t> local = globalShape;
  for (size_t d = 0; d < dims.size(); ++d)
    local[d] /= mesh.getGroupSize(dims[d]);
  return local;
}

std::vector<int64_t>
BlockLayout::getBlockOffset(const DeviceMesh &mesh,
                            const std::vector<int64_t> &globalShape,
                            int64_t rank) const {
  std::vector<int64_t> offset = getLocalShape(mesh, globalShape);
  for (size_t d = 0; d < dims.size(); ++d)
    offset[d] *= mesh.getGroupIndex(rank, dims[d]);
  return offset;
}

AxisList BlockLayout::getReplicatedAxes(const DeviceMesh &mesh) const {
  AxisList axes;
  for (const DeviceMesh::Axis &axis : mesh.getAxes())
    if (!uses(axis.name))
      axes.push_back(axis.name);
  return axes;
}

std::string BlockLayout::toString() const {
  auto list = [](const AxisList &axes) {
    std::string text = "[";
    for (size_t i = 0; i < axes.size(); ++i)
      text += (i ? ", \"" : "\"") + axes[i] + "\"";
    return text + "]";
  };
  std::string text = "[";
  for (size_t d = 0; d < dims.size(); ++d)
    text += (d ? ", " : "") + list(dims[d]);
  text += "]";
  if (!partial.empty())
    text += ", partial = " + list(partial);
  return text;
}

namespace {
/// Calls `copy(globalByte, blockByte, bytes)` for each contiguous run of the
/// block: one per index of the leading dims, the last dim contiguous.
template <typename Copy>
void forEachRun(const std::vector<int64_t> &globalShape,
                const std::vector<int64_t> &offset,
                const std::vector<int64_t> &localShape, int64_t elementBytes,
                Copy copy) {
  size_t rank = localShape.size();
  if (rank == 0) {
    copy(0, 0, elementBytes);
    return;
  }
  for (int64_t size : localShape)
    if (size == 0)
      return;
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;)
    strides[d] = strides[d + 1] * globalShape[d + 1];
  int64_t runBytes = localShape.back() * elementBytes;
  std::vector<int64_t> index(rank, 0);
  int64_t blockAt = 0;
  while (true) {
    int64_t globalAt = 0;
    for (size_t d = 0; d < rank; ++d)
      globalAt += (offset[d] + index[d]) * strides[d];
    copy(globalAt * elementBytes, blockAt, runBytes);
    blockAt += runBytes;
    // Advance the leading dims (the last is covered by the run).
    size_t d = rank - 1;
    while (d-- > 0) {
      if (++index[d] < localShape[d])
        break;
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1))
      return;
  }
}
} // namespace

void extractBlock(const uint8_t *global,
                  const std::vector<int64_t> &globalShape,
                  const std::vector<int64_t> &offset,
                  const std::vector<int64_t> &localShape, int64_t elementBytes,
                  uint8_t *block) {
  forEachRun(globalShape, offset, localShape, elementBytes,
             [&](int64_t globalByte, int64_t blockByte, int64_t bytes) {
               std::memcpy(block + blockByte, global + globalByte, bytes);
             });
}

void insertBlock(const uint8_t *block, const std::vector<int64_t> &localShape,
                 const std::vector<int64_t> &offset,
                 const std::vector<int64_t> &globalShape, int64_t elementBytes,
                 uint8_t *global) {
  forEachRun(globalShape, offset, localShape, elementBytes,
             [&](int64_t globalByte, int64_t blockByte, int64_t bytes) {
               std::memcpy(global + globalByte, block + blockByte, bytes);
             });
}

} // namespace loom::runtime::layout

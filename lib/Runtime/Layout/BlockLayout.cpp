//===- BlockLayout.cpp - Cut global tensors into per-rank blocks ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Layout/BlockLayout.h"

#include <cstring>
#include <optional>

namespace loom::runtime::layout {

using ::mlir::loom::dist::ValueOrError;
using Layout = BlockLayout::Layout;

/// The Status of a dist::Layout constructor.
static Status assign(const ValueOrError<Layout> &layout, BlockLayout &out) {
  if (!layout)
    return Status::failure(layout.error());
  out = BlockLayout(*layout);
  return Status::success();
}

Status BlockLayout::create(const DeviceMesh &mesh, std::vector<AxisList> dims,
                           AxisList partial, BlockLayout &out) {
  return assign(Layout::get(mesh, std::move(dims), std::move(partial)), out);
}

BlockLayout BlockLayout::replicated(size_t rank) {
  return BlockLayout(Layout::getReplicated(rank));
}

Status BlockLayout::parse(std::string_view text, const DeviceMesh &mesh,
                          BlockLayout &out) {
  return assign(Layout::parse(mesh, text), out);
}

Status BlockLayout::verifyShape(const DeviceMesh &mesh,
                                const std::vector<int64_t> &globalShape) const {
  // dist::Layout trusts its axes to be the mesh's; a layout read against
  // another mesh (a checkpoint's) is checked again here.
  if (ValueOrError<Layout> again =
          Layout::get(mesh, getDims(), getPartialAxes());
      !again)
    return Status::failure(again.error());
  if (std::optional<std::string> error = layout.verifyShape(mesh, globalShape))
    return Status::failure(*error);
  return Status::success();
}

std::vector<int64_t>
BlockLayout::getLocalShape(const DeviceMesh &mesh,
                           const std::vector<int64_t> &globalShape) const {
  return *layout.getLocalShape(mesh, globalShape);
}

std::vector<int64_t>
BlockLayout::getBlockOffset(const DeviceMesh &mesh,
                            const std::vector<int64_t> &globalShape,
                            int64_t rank) const {
  return *layout.getBlockOffset(mesh, globalShape, rank);
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

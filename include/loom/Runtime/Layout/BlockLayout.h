//===- BlockLayout.h - Cut global tensors into per-rank blocks --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The part of `#dist.layout` that programs need at run time: which block of a
// global tensor each rank holds, and copying blocks out of and into the
// global tensor. It restates `dist::Layout::getLocalShape` and
// `getBlockOffset` (include/loom/Analysis/Layout/Layout.h) in plain C++17
// over the runtime's DeviceMesh, so that checkpoint tools, the data loader
// and emitted per-rank programs share one implementation without linking the
// compiler; test/Unit/Runtime/BlockLayoutTest.cpp checks that the two agree.
//
//   - dim d is cut into the product of the sizes of its axes; a rank's block
//     index in dim d is the mixed-radix number of its coordinates on those
//     axes, the first listed (major) axis most significant;
//   - axes used by no dim are replicated; `partial` axes hold pending sums.
//
// Layouts are spelled as the attribute body `[["dp"], [], ["tp"]]` with an
// optional `, partial = ["x"]`, exactly as `dist::Layout::toString` prints
// it; the full attribute `#dist.layout<@m, ...>` is accepted too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_LAYOUT_BLOCKLAYOUT_H
#define LOOM_RUNTIME_LAYOUT_BLOCKLAYOUT_H

#include "loom/Runtime/MPI/DeviceMesh.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom::runtime::layout {

using mpi::AxisList;
using mpi::DeviceMesh;
using Status = host::Status;

/// How a global tensor is spread over a mesh: for each dim the axes that
/// split it (major to minor), and the axes over which it is a pending sum.
class BlockLayout {
public:
  BlockLayout() = default;

  /// Builds a layout over `mesh`, checking that every axis exists and is used
  /// at most once across the dims and `partial`.
  static Status create(const DeviceMesh &mesh, std::vector<AxisList> dims,
                       AxisList partial, BlockLayout &out);

  /// The replicated layout of a rank-`rank` tensor.
  static BlockLayout replicated(size_t rank);

  /// Parses `[["dp"], [], ["tp"]]`, `[["dp"], []], partial = ["tp"]` or the
  /// same wrapped in `#dist.layout<@m, ...>`, then checks it as `create`.
  static Status parse(std::string_view text, const DeviceMesh &mesh,
                      BlockLayout &out);

  size_t getRank() const { return dims.size(); }
  const std::vector<AxisList> &getDims() const { return dims; }
  const AxisList &getPartialAxes() const { return partial; }
  bool isPartial() const { return !partial.empty(); }
  /// Whether `axis` splits some dim or is partial.
  bool uses(std::string_view axis) const;

  /// Checks that the layout fits a tensor of `globalShape` on `mesh`: same
  /// rank, and every dim divisible by its number of blocks.
  Status verifyShape(const DeviceMesh &mesh,
                     const std::vector<int64_t> &globalShape) const;

  /// The rest require verifyShape to have succeeded and a valid rank.
  /// The shape every rank holds.
  std::vector<int64_t>
  getLocalShape(const DeviceMesh &mesh,
                const std::vector<int64_t> &globalShape) const;
  /// For each dim, the global offset of the block `rank` holds.
  std::vector<int64_t> getBlockOffset(const DeviceMesh &mesh,
                                      const std::vector<int64_t> &globalShape,
                                      int64_t rank) const;
  /// The axes this layout does not use: ranks differing only in them hold
  /// the same block (replicas).
  AxisList getReplicatedAxes(const DeviceMesh &mesh) const;

  /// `[["dp"], [], ["tp"]]` (plus `, partial = [...]` when partial), as
  /// `dist::Layout::toString`.
  std::string toString() const;

  bool operator==(const BlockLayout &other) const {
    return dims == other.dims && partial == other.partial;
  }

private:
  std::vector<AxisList> dims;
  AxisList partial;
};

/// Copies the block of `localShape` at `offset` out of the row-major global
/// tensor `global` of `globalShape` into `block` (elements of
/// `elementBytes` bytes). The block must lie inside the tensor.
void extractBlock(const uint8_t *global,
                  const std::vector<int64_t> &globalShape,
                  const std::vector<int64_t> &offset,
                  const std::vector<int64_t> &localShape, int64_t elementBytes,
                  uint8_t *block);

/// Copies `block` of `localShape` into `global` at `offset` (the inverse of
/// extractBlock; the bytes it covers are overwritten).
void insertBlock(const uint8_t *block, const std::vector<int64_t> &localShape,
                 const std::vector<int64_t> &offset,
                 const std::vector<int64_t> &globalShape, int64_t elementBytes,
                 uint8_t *global);

} // namespace loom::runtime::layout

#endif // LOOM_RUNTIME_LAYOUT_BLOCKLAYOUT_H

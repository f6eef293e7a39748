//===- BlockLayout.h - Cut global tensors into per-rank blocks --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The part of `#dist.layout` that programs need at run time: which block of a
// global tensor each rank holds, and copying blocks out of and into the
// global tensor. The layout itself is the compiler's `mlir::loom::dist::Layout`
// (include/loom/Analysis/Layout/Layout.h, the LoomLayout library: no MLIR),
// so local shapes and block offsets have one definition; BlockLayout wraps it
// in the runtime's Status for the checkpoint tools, the data loader, the
// trainer and emitted per-rank programs, and adds the block copies.
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

/// How a global tensor is spread over a mesh: a dist::Layout with
/// Status-returning construction and checks.
class BlockLayout {
public:
  using Layout = ::mlir::loom::dist::Layout;

  /// The layout of a scalar (rank 0).
  BlockLayout() : layout(Layout::getReplicated(0)) {}
  BlockLayout(const Layout &layout) : layout(layout) {}

  /// Builds a layout over `mesh` as dist::Layout::get.
  static Status create(const DeviceMesh &mesh, std::vector<AxisList> dims,
                       AxisList partial, BlockLayout &out);

  /// The replicated layout of a rank-`rank` tensor.
  static BlockLayout replicated(size_t rank);

  /// Parses the layout spelling as dist::Layout::parse.
  static Status parse(std::string_view text, const DeviceMesh &mesh,
                      BlockLayout &out);

  const Layout &getLayout() const { return layout; }
  size_t getRank() const { return layout.getRank(); }
  const std::vector<AxisList> &getDims() const { return layout.getDims(); }
  const AxisList &getPartialAxes() const { return layout.getPartialAxes(); }
  bool isPartial() const { return !getPartialAxes().empty(); }
  bool uses(std::string_view axis) const { return layout.uses(axis); }

  /// Checks that the layout fits a tensor of `globalShape` on `mesh`, as
  /// dist::Layout::verifyShape, and that its axes are `mesh`'s.
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
  AxisList getReplicatedAxes(const DeviceMesh &mesh) const {
    return layout.getReplicatedAxes(mesh);
  }

  /// `[["dp"], [], ["tp"]]` (plus `, partial = [...]` when partial).
  std::string toString() const { return layout.toString(); }

  bool operator==(const BlockLayout &other) const {
    return layout == other.layout;
  }

private:
  Layout layout;
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

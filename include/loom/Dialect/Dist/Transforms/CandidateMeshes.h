//===- CandidateMeshes.h - The meshes the outer loop tries ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The outer loop of dist-search-strategy (docs/Search.md, "The plan
// space") prices every mesh shape of the device count: data x tensor
// parallel, and, for models whose self-attention runs on long sequences,
// context x tensor and data x context parallel, the context axis `cp` splitting
// the sequence for ring attention (docs/Partitioning.md, "Ring attention").
// Which context-parallel degrees are worth a mesh is decided here from the
// sequence lengths alone; the cost model decides between the meshes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_CANDIDATEMESHES_H
#define LOOM_DIALECT_DIST_TRANSFORMS_CANDIDATEMESHES_H

#include "loom/Analysis/Layout/Layout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <vector>

namespace mlir::loom::dist {

/// The fewest tokens of each sequence a rank of a context-parallel group
/// keeps: below it a ring step's block attention is too short to hide the
/// key/value block it passes on, so a cp mesh only adds search time (see
/// the definition for the arithmetic).
constexpr int64_t kMinContextBlockTokens = 2048;

/// The sequence lengths ring attention could split in `func`: one per
/// `loom.attention` that is self-attention (query and key sequences equal)
/// without a mask operand, in op order. Empty when there is none.
std::vector<int64_t> getRingSequenceLengths(func::FuncOp func);

/// The context-parallel degrees worth a candidate mesh for these sequence
/// lengths on `devices`: 1 first, then every power of two C >= 2 that
/// divides `devices`, with 2 C dividing every length (the zigzag split
/// gives each rank two equal chunks) and at least kMinContextBlockTokens
/// per rank of the shortest. Only 1 when `lengths` is empty.
std::vector<int64_t>
getContextParallelDegrees(const std::vector<int64_t> &lengths, int64_t devices);

/// Every factorization of `devices` into `dp x tp`, and into `cp x tp` and
/// `dp x cp` for cp one of `contextDegrees` > 1 that divides `devices` (axes
/// of size 1 left out but `dp`, which every mesh without cp keeps; `tp`
/// minor, so that it
/// maps inside a node, and `cp` between; no mesh with all three, whose
/// per-op candidates make the search too slow). Ordered by cp ascending, then
/// tp ascending: the search keeps the earlier of two equally fast plans, so a
/// plan without context parallelism wins ties.
std::vector<Mesh> enumerateMeshes(int64_t devices,
                                  const std::vector<int64_t> &contextDegrees);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_CANDIDATEMESHES_H

//===- Placements.h - Each rank's blocks, computed from layouts -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// An emitted program is one step for every rank of its mesh (docs/Codegen.md,
// "One program for every rank"), so its ProgramSpec lists no per-rank table:
// it gives each argument's and result's layout (TensorSpec::layout), and
// this file computes, on the mesh the process runs on, where a rank's block
// lies, whether it holds a pending sum, and which rank is the canonical
// replica of a result. The rules are the interpreter's (and were the
// compiler's while it printed one table row per rank):
//   - the block offset is dist::Layout's (BlockLayout::getBlockOffset);
//   - an argument with a pending sum over axes P is held by the first member
//     of each group over P, the others start from zeros;
//   - a result's canonical replica is the first member of its group over the
//     mesh axes its layout does not use (within its pipeline stage: a staged
//     result is not replicated over the pipeline axis); a rank of another
//     stage does not compute it at all.
// Everything is O(mesh rank) per query: no table grows with the rank count.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HARNESS_PLACEMENTS_H
#define LOOM_RUNTIME_HARNESS_PLACEMENTS_H

#include "loom/Runtime/Layout/BlockLayout.h"
#include "loom/Runtime/MPI/DeviceMesh.h"

#include <cstdint>
#include <vector>

namespace loom::runtime::harness {

struct ProgramSpec;
struct TensorSpec;
using Shape = std::vector<int64_t>;

/// Where one rank's block of a tensor lies.
struct Placement {
  /// The block's first index in the global tensor.
  Shape offset;
  /// Arguments: whether this rank holds the value (false: a non-first member
  /// of a partial group, which starts from zeros). Results: whether it is
  /// the canonical replica (coordinate 0 on the axes the layout does not
  /// use), whose block is added in.
  bool holds = true;
  /// Results: the canonical replica this rank's block must equal; -1 when
  /// this rank does not compute the result (another pipeline stage's).
  int64_t canonicalRank = 0;
};

/// Parses `tensor`'s layout on `mesh` (replicated when the program recorded
/// none) and checks it against the tensor's global shape; an error names
/// the tensor.
host::Status parseTensorLayout(const TensorSpec &tensor,
                               const mpi::DeviceMesh &mesh,
                               layout::BlockLayout &out);

/// The layouts of a program's arguments and results on one mesh, parsed
/// once; every rank's placement is derived from them on demand.
class Placements {
public:
  /// Parses every layout of `spec` on `mesh` and checks it against the
  /// tensor's global shape; an error names the tensor.
  static host::Status create(const ProgramSpec &spec,
                             const mpi::DeviceMesh &mesh, Placements &out);

  /// `rank`'s block of argument `index`.
  Placement argument(int64_t rank, size_t index) const;
  /// `rank`'s block of result `index`.
  Placement result(int64_t rank, size_t index) const;

private:
  const ProgramSpec *spec = nullptr;
  mpi::DeviceMesh mesh;
  std::vector<layout::BlockLayout> arguments, results;
};

/// The offset of `rank`'s block in a tensor of `globalShape` laid out as
/// `layoutText` (BlockLayout's spelling) on `mesh`: what an emitted dropout
/// passes its kernel, which draws by global index.
host::Status blockOffset(const mpi::DeviceMesh &mesh, int64_t rank,
                         const char *layoutText, const Shape &globalShape,
                         Shape &offset);

} // namespace loom::runtime::harness

#endif // LOOM_RUNTIME_HARNESS_PLACEMENTS_H

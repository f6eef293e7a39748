//===- MultiCopyChoice.h - The search's multi-copy choice -------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The module attribute by which dist-search-strategy hands its choice of
// multi-copy interleave (docs/Search.md, "Multi-copy interleave in the
// search") to the report and the plan JSON. Kept out of AttributeNames.h
// because only the search and its two readers use it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_MULTICOPYCHOICE_H
#define LOOM_DIALECT_DIST_TRANSFORMS_MULTICOPYCHOICE_H

#include "llvm/ADT/StringRef.h"

namespace mlir::loom::dist {

/// The search's choice of copies for a step without them: `copies`, the
/// `step_time_s` it predicts, and each count `priced` with its `compute_s`
/// and `exposed_comm_s`.
inline constexpr llvm::StringLiteral kMultiCopyChoiceAttrName =
    "dist.multi_copy_choice";

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_MULTICOPYCHOICE_H

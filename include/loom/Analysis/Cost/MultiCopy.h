//===- MultiCopy.h - What interleaved copies can hide -----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Fine-grained multi-copy interleave (docs/Partitioning.md, "Multi-copy
// interleave") runs the transformer layers as N copies of the batch, op by
// op in turn, so that a copy's tensor- and sequence-parallel collectives can
// run while another copy computes. The cost model sums compute and
// communication without overlap, so it prices what the copies cost (each
// collective at its copy's size) but not what they buy; this is the bound
// on what they buy, reported beside the step time rather than subtracted
// from it, since no backend overlaps collectives with compute yet.
//
// The search also prices the copies as a choice (docs/Search.md, "Multi-copy
// interleave in the search"): N copies run the layers' compute at 1/N of
// the rows each (smaller GEMMs run less efficiently, which the caller prices
// at the copies' shapes), and of the layers' communication only what the
// copies cannot hide is exposed.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_MULTICOPY_H
#define LOOM_ANALYSIS_COST_MULTICOPY_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace mlir::loom::dist {

/// The seconds of the layers' communication `copies` interleaved copies can
/// hide behind each other's compute, given the layers' compute and
/// communication seconds (all copies together): at most the smaller of the
/// two, and of that the share (N - 1) / N. In each group of N clones of an
/// op, the last copy's collective has no other copy's compute of the group
/// left to run under; it may still overlap the next group's first copy, if
/// that does not read it, which this bound does not count. 0 for one copy.
double getMultiCopyHiddenSeconds(double layerComputeSeconds,
                                 double layerCommSeconds, int64_t copies);

/// The layers' time with `copies` interleaved copies.
struct MultiCopyPrice {
  int64_t copies = 1;
  /// The layers' compute, all N copies, each priced at its copy's shapes.
  double computeSeconds = 0;
  /// The layers' communication the copies leave exposed: the whole of it
  /// minus getMultiCopyHiddenSeconds.
  double exposedCommSeconds = 0;

  double getLayerSeconds() const { return computeSeconds + exposedCommSeconds; }
};

/// Prices `copies` copies from the layers' compute at the copies' shapes
/// (`computeAtCopies`, all copies together) and their communication
/// (`commSeconds`: the same bytes whatever the copy count, each collective
/// split into N of 1/N the size).
MultiCopyPrice priceMultiCopies(double computeAtCopies, double commSeconds,
                                int64_t copies);

/// The cheapest of `prices` by getLayerSeconds; a tie keeps the fewer copies
/// (copies that buy nothing are only more ops). `prices` must not be empty.
const MultiCopyPrice &chooseMultiCopies(llvm::ArrayRef<MultiCopyPrice> prices);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_COST_MULTICOPY_H

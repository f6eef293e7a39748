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
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_MULTICOPY_H
#define LOOM_ANALYSIS_COST_MULTICOPY_H

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

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_COST_MULTICOPY_H

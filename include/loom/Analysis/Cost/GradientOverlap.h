//===- GradientOverlap.h - Gradient sync the backward hides ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The cost model's overlap rule for data-parallel gradient reductions
// (docs/CostModel.md, "Overlapped gradient reduction"): the gradients are
// reduced in DDP's buckets (dist-bucket-gradient-reductions), each bucket
// as soon as its last gradient is produced, one bucket after another on
// the network, while the backward computes the gradients that come after.
//
//   - walk the parameters' nodes in backward order; node i computes for
//     b_i seconds and then holds a gradient of g_i bytes whose reduction
//     takes s_i seconds alone;
//   - cut them into buckets of at most `bucketCapBytes` (a node above the
//     cap is a bucket alone), as the pass does;
//   - bucket k is ready at r_k, the backward time when its last node ends,
//     and the network finishes it at f_k = max(f_{k-1}, r_k) + sum of its
//     s_i (its reductions run one after another);
//   - what the step waits for is exposed = max(0, f_last - B), B the whole
//     backward; the rest of sum s_i is hidden behind the backward.
//
// Plain arithmetic, so that the search, the report and a unit test share
// it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_GRADIENTOVERLAP_H
#define LOOM_ANALYSIS_COST_GRADIENTOVERLAP_H

#include <cstdint>
#include <vector>

namespace mlir::loom {

/// One node of the backward that produces parameter gradients.
struct GradientSlot {
  /// Its backward compute, seconds.
  double backwardSeconds = 0;
  /// Its gradients' reduction alone, seconds, and their bytes per device.
  double syncSeconds = 0;
  double bytes = 0;
};

struct GradientOverlap {
  /// Every reduction's time summed: what a blocking step pays.
  double syncSeconds = 0;
  /// What the step still waits for after its backward.
  double exposedSeconds = 0;
  int64_t buckets = 0;
  double getHiddenSeconds() const { return syncSeconds - exposedSeconds; }
};

/// The rule above over `backwardOrder` (the nodes in the order the
/// backward runs them). A cap of 0 or less means no overlap: every
/// reduction is exposed.
GradientOverlap
estimateGradientOverlap(const std::vector<GradientSlot> &backwardOrder,
                        double bucketCapBytes);

/// ZeRO-2's reduce-scatters under gradient accumulation over
/// `microBatches` M > 1 (docs/CostModel.md, "Overlapped gradient
/// reduction"): the reduce-scatters of micro-batch m < M - 1 run in buckets
/// while micro-batch m + 1 computes, and are waited where its backward's
/// first accumulating add reads one; the last micro-batch's are read by
/// its adds at once. So each of the first M - 1 hides up to one
/// micro-batch of compute and the last hides nothing:
///   sync    = M · reduce
///   exposed = (M - 1) · max(0, reduce - compute) + reduce
/// `reduceSeconds` and `computeSeconds` are one micro-batch's. With M = 1
/// there is no accumulation and the bucket rule above applies.
GradientOverlap estimateAccumulatedReduceScatterOverlap(double reduceSeconds,
                                                        double computeSeconds,
                                                        int64_t microBatches);

} // namespace mlir::loom

#endif // LOOM_ANALYSIS_COST_GRADIENTOVERLAP_H

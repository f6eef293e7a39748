//===- ComputeCurves.h - GEMM, attention and bandwidth curves ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Measures the compute curves of a calibration with the host runtime's own
// kernels (the ones emitted host programs call): loom.matmul's OpenBLAS GEMM
// on a log-spaced (M, N, K) grid per dtype, loom.attention at a few causal
// shapes, a streaming add (elementwise) and softmax + layer_norm rows (row
// kernels) over a range of sizes. Every curve is made monotone in time
// before it is returned (makeTimeMonotone, CalibrationFitting.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_CALIBRATE_COMPUTECURVES_H
#define LOOM_TOOLS_LOOM_CALIBRATE_COMPUTECURVES_H

#include "Timing.h"

#include "loom/Analysis/Cost/CalibrationFitting.h"

#include <string>
#include <vector>

namespace loom::calibrate {

/// What to measure: the full grid or the `--quick` one (for tests).
struct ComputePlan {
  std::vector<double> gemmSizes;
  /// Attention shapes: sequence lengths at heads x head_dim.
  std::vector<int64_t> attentionSeqs;
  int64_t attentionHeads = 4, attentionHeadDim = 32;
  /// Element counts of the streaming and row kernels.
  std::vector<int64_t> streamElements;
  int64_t rowLength = 256;
  TimingBudget budget;

  static ComputePlan get(bool quick);
};

/// GEMM throughput grid for `dtype` (`f32` or `f64`).
mlir::loom::dist::GemmCurve measureGemm(const ComputePlan &plan,
                                        const std::string &dtype);

/// Attention throughput (FLOPs counted as loom.attention's cost does).
mlir::loom::dist::Curve1D measureAttention(const ComputePlan &plan,
                                           const std::string &dtype);

/// Bytes moved by `out = a + b` (f32) → bytes/s.
mlir::loom::dist::Curve1D measureElementwise(const ComputePlan &plan);

/// Bytes moved by softmax and layer_norm over rows (f32) → bytes/s, the two
/// kernels' times averaged.
mlir::loom::dist::Curve1D measureRowKernels(const ComputePlan &plan);

} // namespace loom::calibrate

#endif // LOOM_TOOLS_LOOM_CALIBRATE_COMPUTECURVES_H

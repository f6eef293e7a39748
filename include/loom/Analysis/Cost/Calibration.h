//===- Calibration.h - Measured efficiency curves of a machine --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What `loom-calibrate` measures on a machine and a cluster spec carries in
// its `calibration` object: GEMM throughput over a log-spaced (M, N, K) grid
// per dtype, the bandwidth of streaming (elementwise) and row (softmax,
// layer_norm) kernels as a function of the bytes they move, attention
// throughput as a function of its FLOPs, and α–β fits of each collective per
// group size. Where a spec has these curves, the cost model prices ops by
// them instead of peak × achievable fraction (docs/CostModel.md,
// "Calibrated curves"). Curves interpolate piecewise linearly in log space
// (log size → log rate) and clamp at their ends.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_CALIBRATION_H
#define LOOM_ANALYSIS_COST_CALIBRATION_H

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::loom::dist {

/// A rate sampled at increasing sizes: `rates[i]` (per second) at `sizes[i]`.
/// Valid curves have sizes strictly increasing and the implied time
/// size / rate non-decreasing (a bigger problem never takes less time).
struct Curve1D {
  std::vector<double> sizes;
  std::vector<double> rates;

  /// The rate at `size`: linear in (log size, log rate) between samples,
  /// the end rate outside them. `size` must be positive.
  double getRate(double size) const;
};

/// GEMM throughput (FLOP/s) on a grid of M, N and K (each strictly
/// increasing); `flopsPerSecond[i][j][k]` is the rate at (m[i], n[j], k[k]).
struct GemmCurve {
  std::vector<double> m, n, k;
  std::vector<std::vector<std::vector<double>>> flopsPerSecond;

  /// The rate of one M x K by K x N product: trilinear in the logs of M, N,
  /// K and the rate, each coordinate clamped to the grid.
  double getRate(double gemmM, double gemmN, double gemmK) const;
};

/// One collective's measured time for `groupSize` devices:
/// latencySeconds + bytes / bandwidthBytesPerSecond, where bytes are each
/// device's message (docs/CostModel.md says which for each kind).
struct CollectiveFit {
  int64_t groupSize = 0;
  double latencySeconds = 0;
  double bandwidthBytesPerSecond = 0;
};

/// A machine's measured curves.
struct Calibration {
  /// When and where they were measured, and with how many ranks running at
  /// once (compute was measured on every rank concurrently).
  std::string date, machine;
  int64_t ranks = 1;
  /// By dtype (`f32`, `f64`, ...).
  std::map<std::string, GemmCurve> gemm;
  std::map<std::string, Curve1D> attention;
  /// Bytes moved → bytes/s.
  Curve1D elementwise;
  Curve1D rowKernel;
  /// By collective name (`all_reduce`, `all_gather`, `reduce_scatter`,
  /// `all_to_all`, `send_recv`), sorted by group size. May be empty (a
  /// calibration on one rank measures no collective).
  std::map<std::string, std::vector<CollectiveFit>> collectives;

  /// The fit of `kind` for exactly `groupSize` devices, if measured.
  std::optional<CollectiveFit> findCollective(const std::string &kind,
                                              int64_t groupSize) const;
};

/// The collective names a calibration may hold, in the order printed.
const std::vector<std::string> &getCalibratedCollectiveNames();

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_COST_CALIBRATION_H

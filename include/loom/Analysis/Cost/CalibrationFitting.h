//===- CalibrationFitting.h - From raw timings to valid curves --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What loom-calibrate does to its raw timings before writing them: curves
// made monotone in time (noise must not tell the cost model that more work
// is cheaper, and the spec reader rejects such curves) and α–β fits of
// collective timings. Plain C++ beside the curves, so that it is unit-tested
// without MPI (CalibrationFittingTest).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_CALIBRATIONFITTING_H
#define LOOM_ANALYSIS_COST_CALIBRATIONFITTING_H

#include "loom/Analysis/Cost/Calibration.h"

#include <vector>

namespace mlir::loom::dist {

/// Raises rates where needed so that the time size / rate never falls as the
/// size grows: each sample's time becomes at least its predecessor's.
void makeTimeMonotone(Curve1D &curve);

/// The same along every axis of the grid (time 2·m·n·k / rate): in index
/// order each point's time is raised to the largest of its three smaller
/// neighbours'.
void makeTimeMonotone(GemmCurve &curve);

/// Least squares of seconds = α + bytes / β over the samples (at least one;
/// `bytes` increasing). A non-positive α (noise at small sizes) becomes a
/// tenth of the smallest time, and a non-positive slope (noise at large
/// sizes) gives β = the largest message's bytes / its time. The group size
/// is left 0 for the caller.
CollectiveFit fitAlphaBeta(const std::vector<double> &bytes,
                           const std::vector<double> &seconds);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_COST_CALIBRATIONFITTING_H

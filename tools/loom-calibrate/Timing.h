//===- Timing.h - Timing a kernel on every rank at once ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom-calibrate measures what a training step sees: every rank runs the
// same kernel at the same time (so ranks sharing cores slow each other down
// as they do in a run), and the slowest rank's time counts (a step waits for
// it). The repeat count is agreed across ranks so that they stay in step.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_CALIBRATE_TIMING_H
#define LOOM_TOOLS_LOOM_CALIBRATE_TIMING_H

#include <functional>

namespace loom::calibrate {

/// How long to measure each point.
struct TimingBudget {
  /// Each timed batch of calls runs at least this long (seconds).
  double batchSeconds = 0.004;
  /// The number of timed batches; the median counts.
  int batches = 3;
};

/// Returns the seconds one call of `kernel` takes: after a warm-up call,
/// enough calls per batch to fill `budget.batchSeconds` (the most any rank
/// needs), `budget.batches` batches each started after a barrier, and the
/// median over batches of the slowest rank's time per call. Collective:
/// every rank of MPI_COMM_WORLD must call it with the same budget.
double timeOnAllRanks(const std::function<void()> &kernel,
                      const TimingBudget &budget);

} // namespace loom::calibrate

#endif // LOOM_TOOLS_LOOM_CALIBRATE_TIMING_H

//===- MetricsLog.h - The trainer's machine-readable metrics ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `--metrics FILE.jsonl` (docs/Runtime.md, "Metrics"): rank 0 of the
// training executable appends one JSON object per logged step. Each line is
// written by one write(2) on a descriptor opened with O_APPEND, so a reader
// (a dashboard tailing the file, a job killed mid-step) never sees half a
// line. A run that starts at step S (0, or its checkpoint's step when
// resuming) first rewrites the file without the lines of steps after S
// (through a temporary file and a rename), so an interrupted and resumed
// run leaves the lines an uninterrupted run would.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_TRAINER_METRICSLOG_H
#define LOOM_RUNTIME_TRAINER_METRICSLOG_H

#include "loom/Runtime/Host/Status.h"

#include <cstdint>
#include <optional>
#include <string>

namespace loom::runtime::trainer {

/// One logged step.
struct MetricsRecord {
  /// Steps done (the log line's `step N`).
  int64_t step = 0;
  double loss = 0;
  /// The learning rate this step's updates used.
  double lr = 0;
  /// The global gradient norm before clipping, when the step returns one
  /// (compiled with `--clip-norm`).
  std::optional<double> gradNorm;
  double stepSeconds = 0;
  double tokensPerSecond = 0;
  /// Model FLOPs utilization against the cluster's peak, when the program
  /// records both (a searched plan and its cluster).
  std::optional<double> mfu;
  /// Whether the step's update was skipped for non-finite gradients, in a
  /// loss-scaled (fp16-mixed) step; absent otherwise.
  std::optional<bool> skipped;
};

/// The open metrics file of rank 0.
class MetricsLog {
public:
  MetricsLog() = default;
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;
  ~MetricsLog();

  /// Keeps the lines of `path` whose step is at most `firstStep` (none for
  /// a run from scratch) and opens it for appending. A line that is not a
  /// JSON object with an integer `step` is an error naming the file and
  /// line.
  static host::Status open(const std::string &path, int64_t firstStep,
                           MetricsLog &out);

  bool isOpen() const { return fd >= 0; }

  /// Appends `record` as one line: `{"step": ..., "loss": ..., "lr": ...,
  /// "grad_norm": ..., "step_ms": ..., "tokens_per_s": ..., "mfu": ...}`
  /// (`grad_norm` and `mfu` only when known).
  host::Status append(const MetricsRecord &record);

  /// Appends an evaluation after `step` steps: `{"step": ..., "val_loss":
  /// ..., "val_ppl": ...}` (the perplexity is exp of the loss).
  host::Status appendEvaluation(int64_t step, double loss);

  /// The lines append and appendEvaluation write, without their newline.
  static std::string format(const MetricsRecord &record);
  static std::string formatEvaluation(int64_t step, double loss);

private:
  int fd = -1;
  std::string path;
};

} // namespace loom::runtime::trainer

#endif // LOOM_RUNTIME_TRAINER_METRICSLOG_H

//===- LrSchedule.h - Learning-rate schedules of the trainer ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The learning rate of each optimizer step, as the trainer's
// `--lr-schedule` flags define it (docs/Runtime.md, "Learning-rate
// schedules"). The compiled `--lr` is the base (peak) rate; the trainer
// feeds `rate(s) / lr` to the step's `lr_scale` argument, so the schedule
// needs no recompile. A schedule is a pure function of the step: its state
// in a checkpoint is its parameters (toMetadata), and a resumed run
// computes the rates the uninterrupted run would.
//
// With `w` warmup steps, step s (0-based) of a schedule runs with
//   s < w:      lr * (s + 1) / (w + 1)              (nanoGPT's warmup)
//   constant:   lr
//   cosine:     min_lr + (lr - min_lr) * (1 + cos(pi * r)) / 2,
//   linear:     min_lr + (lr - min_lr) * (1 - r),
//               r = (s - w) / (decay - w), and min_lr from step `decay` on
//               (nanoGPT's get_lr; without warmup, CosineAnnealingLR and
//               LinearLR up to `decay`)
//   step:       lr * gamma^floor((s - w) / every)   (StepLR)
//
// Plain C++ without MPI, unit-tested.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_TRAINER_LRSCHEDULE_H
#define LOOM_RUNTIME_TRAINER_LRSCHEDULE_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace loom::runtime::trainer {

enum class LrScheduleKind { Constant, Cosine, Linear, Step };

/// One schedule and its parameters; see the file comment for the formulas.
struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  /// Steps of linear warmup (`--warmup-steps`), for every kind.
  int64_t warmupSteps = 0;
  /// Cosine and linear: the final rate (`--min-lr`) and the step from which
  /// it holds (`--decay-steps`; 0 until resolved: the run's `--steps`).
  double minLr = 0;
  int64_t decaySteps = 0;
  /// Step: the factor (`--step-gamma`, StepLR's default 0.1) applied every
  /// `stepEvery` steps (`--step-every`).
  double stepGamma = 0.1;
  int64_t stepEvery = 0;

  /// The rate of 0-based step `s` when the base (peak) rate is `lr`.
  double rateAt(int64_t s, double lr) const;

  /// Checks the schedule against the compiled base rate `lr` and the run's
  /// `steps`, and resolves an unset decay to `steps`; returns the error
  /// message, if any, naming the flag.
  std::optional<std::string> resolve(double lr, int64_t steps);

  /// `cosine (warmup 10, min_lr 6e-05, decay 100)`: for the log.
  std::string describe() const;

  /// The schedule as checkpoint metadata (`lr_schedule`, `lr_warmup_steps`,
  /// ...), and back; fromMetadata returns the error, if any.
  void toMetadata(std::map<std::string, std::string> &metadata) const;
  static std::optional<std::string>
  fromMetadata(const std::map<std::string, std::string> &metadata,
               std::optional<LrSchedule> &out);

  bool operator==(const LrSchedule &other) const;
};

/// `constant`, `cosine`, `linear` or `step`.
const char *lrScheduleKindName(LrScheduleKind kind);
std::optional<LrScheduleKind> parseLrScheduleKind(const std::string &name);

} // namespace loom::runtime::trainer

#endif // LOOM_RUNTIME_TRAINER_LRSCHEDULE_H

//===- TrainOptions.h - Flags of the emitted training executable -*- C++
//-*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The command line of a per-rank training executable (docs/Codegen.md,
// "Training"): what to read, how long to train, what to log and where to
// checkpoint. Parsing is plain C++ without MPI, so that it is unit-tested
// and every rank parses alike (a bad flag is an error on every rank, which
// rank 0 reports).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_TRAINER_TRAINOPTIONS_H
#define LOOM_RUNTIME_TRAINER_TRAINOPTIONS_H

#include "loom/Runtime/IO/TokenFile.h"
#include "loom/Runtime/Trainer/LrSchedule.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::runtime::trainer {

/// Everything the training executable accepts.
struct TrainOptions {
  /// The token file (`--data`), and how it is laid out (`--data-format`).
  std::string data;
  io::TokenFormat dataFormat = io::TokenFormat::Auto;
  /// Batches in file order instead of random windows (`--data-order`).
  bool sequentialData = false;
  /// Train until this many steps are done (`--steps`), counting the steps
  /// of a resumed checkpoint.
  int64_t steps = 0;
  /// Seeds the parameter initializers and the batch sampling (`--seed`).
  uint64_t seed = 0;
  /// Whether `--seed` was given (a resumed run keeps its checkpoint's).
  bool seedGiven = false;
  /// Rank 0 logs every K steps and the last (`--log-every`).
  int64_t logEvery = 1;
  /// Checkpoints go to `<ckptDir>/step-N` (`--ckpt-dir`), every K steps
  /// (`--ckpt-every`; 0: only after the last step).
  std::string ckptDir;
  int64_t ckptEvery = 0;
  /// Continue from the latest checkpoint under ckptDir (`--resume`).
  bool resume = false;
  /// Compute in float (default) or double (`--dtype f32|f64`).
  bool f32 = true;
  /// Initialize, write the step-0 checkpoint and stop (`--init-only`).
  bool initOnly = false;
  /// Print the checkpoint layouts as the JSON object `loom-ckpt reshard
  /// --layouts` reads, and stop (`--print-layouts`).
  bool printLayouts = false;
  /// The communicator's check that group members make the same call
  /// (`--verify-calls`).
  bool verifyCalls = false;
  /// Start even when a rank's arguments, results and step arena exceed its
  /// share of the machine's available memory (`--skip-memory-check`;
  /// MemoryCheck.h).
  bool skipMemoryCheck = false;
  /// Pipelined programs: after training, print each rank's stage and the
  /// most micro-batches it had in flight at once (`--report-pipeline`).
  bool reportPipeline = false;
  /// The learning-rate schedule (`--lr-schedule`, `--warmup-steps`,
  /// `--min-lr`, `--decay-steps`, `--step-gamma`, `--step-every`), and
  /// whether any of its flags was given (a resumed run otherwise keeps its
  /// checkpoint's).
  LrSchedule schedule;
  bool scheduleGiven = false;
  /// Rank 0 appends one JSON object per logged step to this file
  /// (`--metrics`; docs/Runtime.md, "Metrics").
  std::string metrics;
  /// Micro-steps per optimizer step (`--grad-accum`; 0: not given). The
  /// step accumulates over the micro-batches it was compiled with (`loomc
  /// --micro-batches N` over an N-times batch): this checks they agree.
  int64_t gradAccum = 0;
  /// After each logged step, rank 0 prints the bytes its step copied to and
  /// from the device (`--report-transfers`; CUDA programs: the resident
  /// model state is not copied; host programs copy nothing and print 0).
  bool reportTransfers = false;
  /// `--report-memory`: after training, rank 0 prints each rank's device
  /// memory of a step (the arena of the static memory plan and the other
  /// buffers) next to the liveness peak the compiler predicts for it.
  bool reportMemory = false;
  /// The held-out token file (`--eval-data`, read with `--data-format`):
  /// every `evalEvery` steps (`--eval-every`; 0: only after the last step)
  /// and after the last, rank 0 prints the mean loss of the forward-only
  /// evaluation step over its first `evalSteps` batches in file order
  /// (`--eval-steps`) and their perplexity (docs/Codegen.md, "Evaluation").
  std::string evalData;
  int64_t evalEvery = 0;
  int64_t evalSteps = 10;
  /// Pretrained weights to start from instead of the initializers
  /// (`--init-from`: a safetensors file, a sharded index JSON or a directory
  /// holding either) and how they are named and laid out (`--init-format
  /// loom|nanogpt|hf`; InitFrom.h). Excludes `--resume`.
  std::string initFrom;
  std::string initFormat;
  /// A test hook of loss scaling (`--inject-nonfinite-at-step K[,K...]`):
  /// the steps (1-based, as logged) whose gradients are made non-finite
  /// through the step's `inject_nonfinite` input, so that the skip and the
  /// scale's backoff can be checked on a real run (docs/MixedPrecision.md).
  std::vector<int64_t> injectNonfiniteAt;
};

/// One flag of the training executable: its name (`--data`), whether it
/// takes a value, and a line of help.
struct TrainFlag {
  const char *name;
  bool takesValue;
  const char *help;
};

/// Every flag the training executable accepts, in usage order: the one
/// table the parser, the C API (`loomTrainOptionGet*`) and Python's
/// `loom.train` read.
const std::vector<TrainFlag> &trainFlags();

/// Whether `argv` asks for training rather than the harness's one step from
/// tensor files: it names `--data`, `--init-only`, `--resume`,
/// `--ckpt-dir`, `--ckpt-every`, `--log-every` or `--print-layouts`.
bool isTrainingCommandLine(int argc, char **argv);

/// Parses `--flag value` and `--flag=value` into `options` and checks their
/// combination (`--steps` and `--data` unless `--init-only` or
/// `--print-layouts`; `--ckpt-dir` for `--resume`, `--ckpt-every` and
/// `--init-only`; each schedule flag only with the schedules it shapes;
/// `--init-format` with `--init-from` and not with `--resume`).
/// Returns the error message, if any.
std::optional<std::string>
parseTrainOptions(const std::vector<std::string> &args, TrainOptions &options);

/// The usage line of the training executable.
const char *trainUsage();

} // namespace loom::runtime::trainer

#endif // LOOM_RUNTIME_TRAINER_TRAINOPTIONS_H

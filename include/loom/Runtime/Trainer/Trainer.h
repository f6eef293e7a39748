//===- Trainer.h - The per-rank training loop of emitted programs -*- C++
//-*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The training executable of a partitioned step (DESIGN.md §7): the emitted
// `main` calls runTrainer when its command line asks for training
// (isTrainingCommandLine), and the harness's one step from tensor files
// otherwise. Every rank, with only its own blocks:
//
//   1. initializes its block of every parameter with the global-index RNG
//      (host::fillNormal/fillUniform at the block's offset, so the slice
//      equals the single-device initialization's) and zeros for optimizer
//      states and the step counter; or loads them from the latest checkpoint
//      (`--resume`), checking mesh, shapes, dtypes, layouts and checksums;
//   2. per step, reads its block of the batch of that step from the token
//      file (io::readLocalBatch with the `input_ids` and `labels` layouts),
//      runs the step, and keeps each updated parameter, optimizer state and
//      the step counter as the next step's argument, locally: the plan gives
//      a loop-carried result the layout of its argument, which is checked at
//      start-up;
//   3. rank 0 logs `step N | loss X | T ms | tok/s | lr R` (the loss is
//      replicated) and, with `--metrics`, a JSON line (MetricsLog.h), and
//      every K steps all ranks write a checkpoint (their blocks, then rank 0
//      the manifest with the plan, layouts, step, data position and seed,
//      the RNG state: seed and next RNG step, and the learning-rate
//      schedule and last rate).
//
// The learning rate of step s is the schedule's (LrSchedule.h), fed as the
// factor `rate / lr` of the compiled rate to the step's `lr_scale`
// argument; a program without one trains at the compiled rate.
//
// Step s (0-based) runs with harness::StepContext{seed, s}: dropout draws
// its masks from the run seed and the step (Support/Philox.h), so the masks
// change every step, step 0 draws what `loom-run --seed S` draws, and a
// resumed run restores (seed, RNG step) from the manifest and draws what the
// uninterrupted run would. The context also says whether the carried
// arguments are the previous step's results (every step of a run but its
// first) and whether the host reads the carried results after the step
// (checkpoint steps and the last): a CUDA step then keeps the model state on
// the device (docs/Codegen.md, "Resident state"). The step functions are the
// only part that depends on the backend: host and CUDA programs share this
// loop.
//
// Errors before and between steps (flags, data, checkpoints) are agreed on
// by all ranks, reported once and make every rank exit 1; an error inside a
// step stops the job (Communicator::abort).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_TRAINER_TRAINER_H
#define LOOM_RUNTIME_TRAINER_TRAINER_H

#include "loom/Runtime/Harness/Harness.h"
#include "loom/Runtime/Trainer/TrainOptions.h"

#include <vector>

namespace loom::runtime::trainer {

/// Runs the training executable: initializes MPI, parses the flags
/// (TrainOptions.h), trains this rank with `f32Step` or `f64Step` (the one
/// step every rank runs; null when the program was built without that
/// precision), evaluates with `f32Eval` or `f64Eval` (the forward-only
/// `@eval_step`, which takes the step's arguments and returns its `loss`;
/// null when the program has none) and finalizes MPI. Returns main's exit
/// status.
int runTrainer(int argc, char **argv, const harness::ProgramSpec &spec,
               harness::StepFn<float> f32Step, harness::StepFn<double> f64Step,
               harness::StepFn<float> f32Eval = nullptr,
               harness::StepFn<double> f64Eval = nullptr);

} // namespace loom::runtime::trainer

#endif // LOOM_RUNTIME_TRAINER_TRAINER_H

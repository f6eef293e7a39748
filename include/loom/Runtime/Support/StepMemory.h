//===- StepMemory.h - The memory a step used --------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What `--report-memory` prints: the memory of an emitted step's buffers,
// the arena of its static memory plan (docs/Codegen.md, "Memory") and the
// buffers outside it (arguments, results, own blocks), next to the liveness
// peak the compiler predicts for the rank (dist::analyzeMemory, at the
// program's declared element types). The step's workspace (host or CUDA)
// records the first two and the emitted step the prediction; the trainer
// records how much the process's peak resident set grew during its first
// step. They live here, below both runtimes, so that the trainer reads them
// without linking either.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SUPPORT_STEPMEMORY_H
#define LOOM_RUNTIME_SUPPORT_STEPMEMORY_H

#include <cstdint>

namespace loom::runtime {

struct StepMemory {
  /// The largest arena a step of this process opened, in bytes.
  int64_t arenaBytes = 0;
  /// The most bytes a step held outside its arena: its own blocks (uploaded
  /// arguments, results) and the resident arguments it read.
  int64_t otherBytes = 0;
  /// The compiler's liveness peak for this rank in bytes; -1: none recorded.
  int64_t predictedPeakBytes = -1;
  /// How far the process's peak resident set rose above its resident set
  /// during the first step of the run, in bytes (what the step allocated
  /// and touched: its arena, and anything the kernels and MPI allocate);
  /// -1: not measured.
  int64_t firstStepRssGrowthBytes = -1;
};

/// The process's resident set and its peak so far (Linux's VmRSS and
/// VmHWM), in bytes; -1 each where the system does not say.
struct ResidentSet {
  int64_t current = -1;
  int64_t peak = -1;
};
ResidentSet residentSet();
/// Sets the peak to the current resident set (Linux: `5` to
/// /proc/self/clear_refs), so that the next residentSet().peak is the most
/// the process holds from now on; false where the system refuses.
bool resetResidentSetPeak();

/// The process's record (one rank per process).
StepMemory &stepMemory();

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SUPPORT_STEPMEMORY_H

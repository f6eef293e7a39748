//===- StepMemory.h - The device memory a step used -------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What `--report-memory` prints: the memory of an emitted CUDA step's
// buffers, the arena of its static memory plan (docs/Codegen.md, "Memory")
// and the buffers of their own (uploaded arguments, results), next to the
// liveness peak the compiler predicts for the rank (dist::analyzeMemory, at
// the program's declared element types). The CUDA workspace records the
// first two; the emitted step records the prediction. They live here, below
// the CUDA runtime, so that the trainer reads them without linking it. Host
// steps record nothing (their buffers are not planned yet).
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
};

/// The process's record (one rank per process).
StepMemory &stepMemory();

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SUPPORT_STEPMEMORY_H

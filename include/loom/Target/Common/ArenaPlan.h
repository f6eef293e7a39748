//===- ArenaPlan.h - Offsets of a step's buffers in one arena ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The static memory plan of an emitted step (docs/Codegen.md, "Memory"):
// every buffer the step computes gets a byte offset in one arena, chosen so
// that no two buffers live at the same time overlap. A buffer is live from
// the op that defines it to the last op that reads it (or an alias of it),
// both inclusive: an op reads its operands while it writes its results.
//
// Offsets are placed offline (every lifetime is known first): first fit in
// program order and two decreasing-size placements are tried and the
// smallest arena kept (ArenaPlan.cpp says why). A pipelined program has
// one plan per stage (a rank runs the ops of its stage and the unstaged
// ones): the unstaged buffers are placed once, at offsets every stage
// shares, and each stage's buffers around them. The plan is computed for
// 4-byte and for 8-byte floating-point elements (an emitted step computes
// in f32 or f64; integer elements are 8 bytes in both), so the program picks
// its offsets by sizeof(T).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_COMMON_ARENAPLAN_H
#define LOOM_TARGET_COMMON_ARENAPLAN_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <vector>

namespace mlir::loom::emit {

/// One buffer of the step.
struct ArenaBuffer {
  /// The pipeline stage whose ranks compute it, or -1 for every rank.
  int64_t stage = -1;
  int64_t elements = 0;
  bool isInteger = false;
  /// The positions (in program order) of the op that defines it and of the
  /// last op that reads it; last >= first.
  int64_t first = 0, last = 0;
  /// Kept out of the arena: a buffer that outlives the step (a result).
  bool ownAllocation = false;
};

/// Index 0: the plan for 4-byte floating-point elements; 1: for 8-byte.
using PerElementSize = std::array<int64_t, 2>;

struct ArenaPlan {
  /// Each buffer's byte offset in its stage's arena (-1: its own block).
  std::vector<PerElementSize> offsets;
  /// Each stage's arena size in bytes (one entry when there are no stages).
  std::vector<PerElementSize> arenaBytes;
  /// Each stage's most bytes of arena buffers live at once: what a perfect
  /// placement would need (arenaBytes / liveBytes is the fragmentation).
  std::vector<PerElementSize> liveBytes;
};

/// Offsets of every buffer are multiples of this: what vectorized kernels
/// and cuBLAS's fast paths need (16 bytes), rounded up to a cache line.
inline constexpr int64_t kArenaAlignment = 64;

/// Plans `buffers` of a program with `numStages` pipeline stages (0: not
/// pipelined).
ArenaPlan planArena(llvm::ArrayRef<ArenaBuffer> buffers, int64_t numStages);

} // namespace mlir::loom::emit

#endif // LOOM_TARGET_COMMON_ARENAPLAN_H

//===- MemoryAnalysis.h - Peak live bytes of a training step ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The memory a device needs for one `train_step`: a liveness walk over the
// entry function's block in program order, at the types the values have
// (global for a single-device program, local after dist-partition-spmd, so
// the result is per device). A value is live from its definition to its last
// use; arguments are live from entry and loop-carried state (parameters,
// optimizer states) until the end, unless the value carried into it takes
// its storage (the in-place rule, InPlaceReuse.h: an optimizer update that
// is the state's last reader, or a value computed after the state's last
// read), where the storage is counted once. The peak is broken down by what
// is live at that moment, so reports can say what fills memory.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_MEMORYANALYSIS_H
#define LOOM_ANALYSIS_COST_MEMORYANALYSIS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::loom::dist {

/// What a live value is (docs/CostModel.md, "Categories").
enum class MemoryCategory {
  Parameters,
  Gradients,
  OptimizerStates,
  Activations,
  Other
};

/// Bytes live at the peak of a training step, by category.
struct MemoryBreakdown {
  /// Parameters (arguments with `loom.param`) and their updated copies.
  int64_t parameters = 0;
  /// Gradients of parameters (the values an optimizer update consumes as its
  /// gradient operand) live at the peak.
  int64_t gradients = 0;
  /// Optimizer states (arguments named `<param>.exp_avg`, ...) and updates.
  int64_t optimizerStates = 0;
  /// Forward results still needed by backward ops (ops with `loom.fwd` that
  /// are not forward ops) at the peak: what recompute removes.
  int64_t activations = 0;
  /// Everything else live at the peak (data inputs, temporaries).
  int64_t other = 0;

  /// The op at which the peak is first reached (null for an empty body).
  Operation *peakOp = nullptr;

  /// The sum of the categories: the peak live bytes.
  int64_t getPeak() const {
    return parameters + gradients + optimizerStates + activations + other;
  }
};

/// Analyzes `entry` (one block, ranked tensors of static shape).
///
/// For a pipelined program (docs/Pipeline.md) `stage` selects the ranks of
/// one stage: only that stage's ops (and the unstaged ones) run, and only
/// the arguments they read are held — what the interpreter measures there.
MemoryBreakdown analyzeMemory(func::FuncOp entry,
                              std::optional<int64_t> stage = std::nullopt);

/// A value live at the peak, with its bytes and category.
struct LiveValue {
  Value value;
  int64_t bytes;
  MemoryCategory category;
};

/// The values of `entry` live at its peak (the op `analyzeMemory` names as
/// `peakOp`), largest first: what a report needs to say what fills memory.
std::vector<LiveValue>
getLiveValuesAtPeak(func::FuncOp entry,
                    std::optional<int64_t> stage = std::nullopt);

/// The forward ops of `entry`: the ancestors of the result named `loss` in
/// its block (empty without one).
llvm::DenseSet<Operation *> getForwardOps(func::FuncOp entry);

/// The bytes one value of `type` occupies: elements times the element
/// type's width rounded up to whole bytes (i1 is 1 byte, index 8); scalars
/// count as one element; 0 for anything else. The interpreter's measured
/// peak counts values with this too, so the two agree by construction.
int64_t getValueBytes(Type type);

/// Whether argument `index` of `entry` is loop-carried state, live for the
/// whole step: a `loom.param`, or an argument whose `loom.name` is also the
/// `loom.name` of a result (optimizer states, the step counter).
bool isCarriedArgument(func::FuncOp entry, unsigned index);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_COST_MEMORYANALYSIS_H

//===- BatchSlices.h - Retype ops cloned onto a slice of the batch -*- C++
//-*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Two passes clone a model's ops onto a slice of its batch:
// loom-slice-micro-batches (micro-batches, on @train_step) and
// loom-interleave-copies (fine-grained multi-copy interleave, on @forward).
// A clone keeps the types of the full batch until it is re-derived from its
// sliced operands; the rules for that live here, once, so both passes split
// the same ops the same way and refuse the same ones.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_BATCHSLICES_H
#define LOOM_DIALECT_LOOM_TRANSFORMS_BATCHSLICES_H

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "llvm/ADT/StringRef.h"

namespace mlir::loom {

/// Re-derives the result types of `op` after its operands were replaced by
/// slices of the batch: by type inference where the op has it, by the
/// operand's shape for casts, and by scaling dim 0 for reshapes (which keep
/// the batch dim leading, as every model builder's reshapes do). `pieces`
/// names the slices in messages ("micro-batches", "copies").
LogicalResult retypeForBatchSlice(Operation *op, llvm::StringRef pieces);

/// A slice names absolute indices, so on a slice of the batch one along the
/// batch dim must take from the slice's rows what it took from the batch's:
/// it must take every `stride`-th row of the whole batch (which every slice
/// then splits evenly), and its limit becomes the slice's row count.
/// `original` is the op `clone` was cloned from; `pieces` and `piece` name
/// the slices in messages ("micro-batches", "micro-batch").
LogicalResult rescaleBatchSlice(SliceOp original, SliceOp clone,
                                llvm::StringRef pieces, llvm::StringRef piece);

} // namespace mlir::loom

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_BATCHSLICES_H

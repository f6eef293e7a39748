//===- MicroBatchShapes.h - An op's shapes on one micro-batch ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Which dims of a training step's values carry the batch, so that the
// search can price an op at the shapes it has once the step is split into
// M micro-batches (docs/Search.md, "Micro-batches") without splitting it.
//
// loom-slice-micro-batches slices every data input along dim 0 and lets the
// ops re-derive their types; the batch then reaches exactly the dims whose
// sharding-rule factor it reaches. So the analysis starts from dim 0 of the
// data inputs and, op by op, takes as batch factors those of the op's dims
// that carry it (the major factor of a merged dim such as [batch *
// sequence]: the builders' reshapes keep the batch leading), and marks
// every operand and result dim with a batch factor. It sweeps forward and
// backward until nothing changes, because reverse mode seeds the backward
// with a constant of the batch's shape that the data never flows into (the
// split step builds it at the micro-batch's). A reduction over the batch (a
// bias or weight gradient) leaves it behind.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_MICROBATCHSHAPES_H
#define LOOM_DIALECT_DIST_TRANSFORMS_MICROBATCHSHAPES_H

#include "loom/Interfaces/Cost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::loom::dist {

class BatchDims {
public:
  /// Finds the batch-carrying dims of every value of `func`'s body.
  static BatchDims analyze(func::FuncOp func);

  /// Whether dim `dim` of `value` carries the batch.
  bool isBatchDim(Value value, unsigned dim) const;

  /// The global shapes of `op` on one of `microBatches` micro-batches:
  /// every batch-carrying dim divided by `microBatches`. std::nullopt when
  /// one does not divide (the caller then scales the whole-batch figure).
  std::optional<OpShapes> getMicroBatchShapes(Operation *op,
                                              int64_t microBatches) const;

private:
  /// Per value with a batch-carrying dim: one flag per dim.
  llvm::DenseMap<Value, llvm::SmallVector<bool, 4>> dims;
};

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_MICROBATCHSHAPES_H

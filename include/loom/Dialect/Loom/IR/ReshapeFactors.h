//===- ReshapeFactors.h - Common factors of a reshape's shapes --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The sharding rule of `loom.reshape` rests on one question: which splits of
// the input are also splits of the result? A row-major reshape keeps the flat
// (linear) index of every element, so a split is shared when both shapes
// carve the same block of the flat index space out of it. This file finds
// those blocks as *factors*, the way OpenXLA Shardy treats reshapes:
//
//   [B, S, H*D] -> [B, S, H, D]   factors b, s, h, d; input dim 2 is (h, d)
//
// Splitting h over a mesh axis gives each device contiguous blocks of h*d
// elements of input dim 2, which is exactly the result's split of dim h, so
// the reshape stays a local reshape with no communication.
//
// The function is plain C++ over shapes so it can be tested exhaustively
// without IR (test/Unit/Dialect/ReshapeFactorsTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_RESHAPEFACTORS_H
#define LOOM_DIALECT_LOOM_IR_RESHAPEFACTORS_H

#include "loom/Interfaces/ShardingRule.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace loom {

/// One factor of a reshape.
struct ReshapeFactor {
  /// The number of values the factor's index takes.
  int64_t size;
  /// The dim of the input and of the result the factor is part of, or
  /// OpShardingRuleBuilder::kNoDim (-1) where it is absent.
  int64_t inputDim;
  int64_t resultDim;
  /// Parallel for a factor both shapes share; NeedReplication for a factor
  /// that may not be split (see factorizeReshape).
  FactorKind kind;

  bool operator==(const ReshapeFactor &other) const {
    return size == other.size && inputDim == other.inputDim &&
           resultDim == other.resultDim && kind == other.kind;
  }
};

/// Decomposes a row-major reshape from `inputShape` to `resultShape` into
/// factors, in an order that lists the factors of every dim major to minor
/// (so they can be handed to OpShardingRuleBuilder::addFactor one by one).
/// Every dim of size other than 1 is the product of its factors; size-1 dims
/// get none. Fails if a size is negative or the element counts differ.
///
/// Shared factors (present in both shapes) are Parallel, except those that
/// sit minor to an entangled factor (below), which are NeedReplication.
/// Where the shapes cannot be refined into common factors, e.g.
/// [2, 3] -> [3, 2], the leftover part of each dim becomes a factor of its
/// own tensor only, of kind NeedReplication: such dims are never split.
FailureOr<SmallVector<ReshapeFactor>>
factorizeReshape(ArrayRef<int64_t> inputShape, ArrayRef<int64_t> resultShape);

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_IR_RESHAPEFACTORS_H

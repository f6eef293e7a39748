//===- ShardingRule.h - Factor-based sharding rules -------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A sharding rule says how an op's work may be divided, without naming a
// mesh. Every dim of every operand and result is a product of *factors*
// (usually one; none for a size-1 dim that broadcasts; several where a
// reshape merges dims). Assigning mesh axes to a factor splits every dim it
// appears in the same way, so one assignment fixes all operand and result
// layouts at once. matmul [m, k] x [k, n] -> [m, n] has factors m, n
// (parallel) and k (reduction: splitting it leaves partial sums).
//
// Rules print in one line, so a FileCheck file can cover every op:
//
//   ([a, c], [c, b]) -> ([a, b]) {a=4, b=16, c=8} reduction={c}
//
// A dim made of several factors prints as (h, d), major first; a dim with no
// factor prints as 1. Globally indexed factors are listed last, as
// `global={..}`, and a rule whose op is linear in all its operands jointly
// (so it may keep partial sums) ends in `linear`.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERFACES_SHARDINGRULE_H
#define LOOM_INTERFACES_SHARDINGRULE_H

#include "mlir/IR/TypeRange.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
namespace loom {

/// What splitting a factor over mesh axes means for the op's results. Every
/// kind splits the results that contain the factor by it; the kinds differ in
/// what happens to results that lack it.
enum class FactorKind {
  /// Every device computes its block independently. Results that lack the
  /// factor are computed whole on every device.
  Parallel,
  /// The op sums over the factor: a split leaves each result that lacks the
  /// factor as a partial sum on each device (a `partial` layout, resolved
  /// later by an all-reduce or reduce-scatter). matmul's K; the batch dims of
  /// a bias gradient.
  Reduction,
  /// The factor may not be split (e.g. the normalized dim of a softmax).
  NeedReplication,
  /// The op implements the split with communication of its own, and results
  /// that lack the factor come out whole (ring attention over the sequence,
  /// vocab-parallel cross-entropy).
  OpPartitioned,
};

/// Returns the name a factor kind prints with ("parallel", ...).
StringRef stringifyFactorKind(FactorKind kind);

/// One factor: its size and kind.
struct ShardingFactor {
  int64_t size;
  FactorKind kind;
  /// True when a device's local computation depends on where its block lies
  /// along the factor (its global offset) or on the factor's global size:
  /// the causal mask of a query block, rope without explicit positions, a
  /// dropout mask keyed by global index, the vocab range of an embedding
  /// shard, reduce_mean's divisor. The partitioner then passes the block's
  /// offset (from dist.axis_index) and the global size to the local op.
  bool globalIndexed = false;
};

/// The factors composing each dim of one tensor, major to minor.
using TensorFactorMapping = SmallVector<SmallVector<int64_t, 1>>;

/// The sharding rule of one op. Build it with OpShardingRuleBuilder.
class OpShardingRule {
public:
  ArrayRef<ShardingFactor> getFactors() const { return factors; }
  ArrayRef<TensorFactorMapping> getOperandMappings() const { return operands; }
  ArrayRef<TensorFactorMapping> getResultMappings() const { return results; }

  /// The factors of dim `dim` of operand `operand`, major to minor.
  ArrayRef<int64_t> getOperandDimFactors(unsigned operand, unsigned dim) const {
    return operands[operand][dim];
  }
  ArrayRef<int64_t> getResultDimFactors(unsigned result, unsigned dim) const {
    return results[result][dim];
  }

  /// Returns the factor ids of the given kind, in order.
  SmallVector<int64_t> getFactorsOfKind(FactorKind kind) const;

  /// Returns the ids of the globally indexed factors, in order.
  SmallVector<int64_t> getGlobalIndexedFactors() const;

  /// True when the op is linear in all its operands jointly:
  /// f(x1 + y1, ..., xn + yn) = f(x1, ..., xn) + f(y1, ..., yn) (add, sub,
  /// neg, scale, the data-movement ops, sums and means). Such an op may keep
  /// partial sums: when every operand is a pending sum over some mesh axes,
  /// each device applies the op to its summand and the result is the same
  /// pending sum (a strategy's `partial` axes). A product is not linear in
  /// its operands jointly, and an op with one whole operand (a bias) would
  /// count it once per summand, so neither qualifies.
  bool isLinear() const { return linear; }
  /// Marks the rule's op as linear in all operands jointly (see isLinear).
  OpShardingRule &setLinear(bool value = true) {
    linear = value;
    return *this;
  }

  /// Checks an assignment of mesh axes to factors, given as the number of
  /// blocks each factor is split into (1 when unsplit). A split must divide
  /// the factor, NeedReplication factors may not be split, and a factor of a
  /// compound dim may be split only if every factor major to it in that dim
  /// is split completely (into blocks of size 1): otherwise a device's
  /// elements would not form one contiguous block of the dim, which is all a
  /// layout can describe. For GQA heads (hkv, g), splitting g needs hkv fully
  /// split. Returns an error message, or an empty string if the assignment
  /// is valid.
  std::string verifyAssignment(ArrayRef<int64_t> blocksPerFactor) const;

  /// Checks the rule against tensor shapes: one mapping per tensor and per
  /// dim, every factor id valid, and each dim's size equal to the product
  /// of its factors' sizes (1 for a dim without factors). Returns an error
  /// message, or an empty string if the rule is consistent.
  std::string verify(ArrayRef<ArrayRef<int64_t>> operandShapes,
                     ArrayRef<ArrayRef<int64_t>> resultShapes) const;

  /// Prints the rule in its one-line form (see the file comment).
  void print(raw_ostream &os) const;

private:
  friend class OpShardingRuleBuilder;
  SmallVector<ShardingFactor> factors;
  SmallVector<TensorFactorMapping> operands;
  SmallVector<TensorFactorMapping> results;
  bool linear = false;
};

raw_ostream &operator<<(raw_ostream &os, const OpShardingRule &rule);

/// Builds an OpShardingRule factor by factor, in the manner of Shardy's rule
/// builder: each added factor names the dim it occupies in each operand and
/// result (or kNoDim), and is appended minor-most to that dim's factors.
class OpShardingRuleBuilder {
public:
  /// Marks a tensor in which a factor does not appear.
  static constexpr int64_t kNoDim = -1;

  /// Starts a rule for tensors of the given ranks.
  OpShardingRuleBuilder(ArrayRef<int64_t> operandRanks,
                        ArrayRef<int64_t> resultRanks);
  /// Starts a rule for an op's operand and result types (ranked tensors).
  OpShardingRuleBuilder(TypeRange operandTypes, TypeRange resultTypes);

  /// Adds a factor of `size` that occupies dim `operandDims[i]` of operand i
  /// and `resultDims[j]` of result j (kNoDim where it is absent). Returns the
  /// factor's id.
  int64_t addFactor(ArrayRef<int64_t> operandDims, ArrayRef<int64_t> resultDims,
                    int64_t size, FactorKind kind = FactorKind::Parallel,
                    bool globalIndexed = false);

  /// Adds one parallel factor per dim of `resultShape`, the shape of every
  /// result, aligned numpy-style with every operand: an operand dim of size 1
  /// facing a larger result dim (a broadcast) gets no factor, as do missing
  /// dims. For elementwise ops with broadcasting.
  OpShardingRuleBuilder &addPointwise(ArrayRef<ArrayRef<int64_t>> operandShapes,
                                      ArrayRef<int64_t> resultShape,
                                      bool globalIndexed = false);

  OpShardingRule build() { return std::move(rule); }

private:
  OpShardingRule rule;
};

} // namespace loom
} // namespace mlir

#endif // LOOM_INTERFACES_SHARDINGRULE_H

//===- ReshapeFactorsTest.cpp - Factorizing a reshape's shapes ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Pins down factorizeReshape on the cases the strategy search meets (merging
// and splitting heads, size-1 dims, entangled shapes), then checks every pair
// of small shapes exhaustively: a parallel factor must select the same
// elements under both shapes, and shapes that have a common refinement must
// get no replicated factor.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/ReshapeFactors.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <functional>

using namespace mlir;
using namespace mlir::loom;

namespace {

/// Returns the sharding rule a reshape from `input` to `result` gets.
OpShardingRule getRule(ArrayRef<int64_t> input, ArrayRef<int64_t> result) {
  FailureOr<SmallVector<ReshapeFactor>> factors =
      factorizeReshape(input, result);
  EXPECT_TRUE(succeeded(factors));
  OpShardingRuleBuilder builder({static_cast<int64_t>(input.size())},
                                {static_cast<int64_t>(result.size())});
  if (succeeded(factors))
    for (const ReshapeFactor &factor : *factors)
      builder.addFactor({factor.inputDim}, {factor.resultDim}, factor.size,
                        factor.kind);
  return builder.build();
}

/// Returns the printed rule of a reshape from `input` to `result`.
std::string printRule(ArrayRef<int64_t> input, ArrayRef<int64_t> result) {
  std::string text;
  llvm::raw_string_ostream(text) << getRule(input, result);
  return text;
}

TEST(ReshapeFactorsTest, SplitHeadsMakesTheHiddenDimCompound) {
  EXPECT_EQ(printRule({2, 128, 768}, {2, 128, 12, 64}),
            "([a, b, (c, d)]) -> ([a, b, c, d]) {a=2, b=128, c=12, d=64}");
}

TEST(ReshapeFactorsTest, MergeHeadsIsTheMirrorImage) {
  EXPECT_EQ(printRule({2, 128, 12, 64}, {2, 128, 768}),
            "([a, b, c, d]) -> ([a, b, (c, d)]) {a=2, b=128, c=12, d=64}");
}

TEST(ReshapeFactorsTest, DimBoundariesThatCrossAreRefined) {
  // [4, 3] -> [2, 6]: input dim 0 is (2, 2), its minor 2 joins the 3.
  EXPECT_EQ(printRule({4, 3}, {2, 6}),
            "([(a, b), c]) -> ([a, (b, c)]) {a=2, b=2, c=3}");
  // [B*S, H] -> [B, S*H'] style: 8x6 -> 4x12.
  EXPECT_EQ(printRule({8, 6}, {4, 12}),
            "([(a, b), c]) -> ([a, (b, c)]) {a=4, b=2, c=6}");
}

TEST(ReshapeFactorsTest, SizeOneDimsGetNoFactor) {
  EXPECT_EQ(printRule({1, 6, 1}, {2, 1, 3}),
            "([1, (a, b), 1]) -> ([a, 1, b]) {a=2, b=3}");
  EXPECT_EQ(printRule({}, {1, 1}), "([]) -> ([1, 1]) {}");
}

TEST(ReshapeFactorsTest, EntangledDimsAreReplicatedPerTensor) {
  EXPECT_EQ(printRule({2, 3}, {3, 2}),
            "([a, b]) -> ([c, d]) {a=2, b=3, c=3, d=2} "
            "need_replication={a, b, c, d}");
}

TEST(ReshapeFactorsTest, MinorWalkKeepsTrailingDimsParallel) {
  // The entanglement of [2, 3] and [3, 2] does not reach the last dim.
  EXPECT_EQ(printRule({2, 3, 64}, {3, 2, 64}),
            "([a, b, e]) -> ([c, d, e]) {a=2, b=3, c=3, d=2, e=64} "
            "need_replication={a, b, c, d}");
}

TEST(ReshapeFactorsTest, SharedFactorMinorToAnEntangledOneIsReplicated) {
  // [4, 6] -> [6, 4]: a major 2 is shared (rows 0-1 / 2-3 are elements
  // 0-11 / 12-23 in both); the minor 2 is shared too, but splitting it would
  // cut strided pieces out of dims whose major part is entangled.
  EXPECT_EQ(printRule({4, 6}, {6, 4}),
            "([(a, b), (c, f)]) -> ([(a, d), (e, f)]) "
            "{a=2, b=2, c=3, d=3, e=2, f=2} "
            "need_replication={b, c, d, e, f}");
}

TEST(ReshapeFactorsTest, EmptyTensorsReplicateEveryDim) {
  EXPECT_EQ(printRule({0, 4}, {4, 1, 0}),
            "([a, b]) -> ([c, 1, d]) {a=0, b=4, c=4, d=0} "
            "need_replication={a, b, c, d}");
}

TEST(ReshapeFactorsTest, RejectsMismatchedOrInvalidShapes) {
  EXPECT_TRUE(failed(factorizeReshape({2, 3}, {5})));
  EXPECT_TRUE(failed(factorizeReshape({-1, 3}, {-3})));
  int64_t big = int64_t(1) << 62;
  EXPECT_TRUE(failed(factorizeReshape({big, 4}, {4, big})));
}

//===----------------------------------------------------------------------===//
// Exhaustive check over small shapes
//===----------------------------------------------------------------------===//

/// Returns, for the element at flat index `flat` of a tensor of `shape`
/// whose dims are mapped by `mapping`, the index of every factor in it.
SmallVector<int64_t> getFactorIndices(int64_t flat, ArrayRef<int64_t> shape,
                                      const TensorFactorMapping &mapping,
                                      ArrayRef<ShardingFactor> factors) {
  SmallVector<int64_t> indices(factors.size(), -1);
  for (int64_t dim = shape.size() - 1; dim >= 0; --dim) {
    int64_t index = flat % shape[dim];
    flat /= shape[dim];
    // The dim's index in mixed radix over its factors, minor last.
    for (int64_t id : llvm::reverse(mapping[dim])) {
      indices[id] = index % factors[id].size;
      index /= factors[id].size;
    }
  }
  return indices;
}

/// Whether the prefix products of both shapes form one divisibility chain,
/// i.e. both are groupings of one sequence of factors.
bool haveCommonRefinement(ArrayRef<int64_t> input, ArrayRef<int64_t> result) {
  SmallVector<int64_t> products;
  for (ArrayRef<int64_t> shape : {input, result}) {
    int64_t product = 1;
    for (int64_t size : shape)
      products.push_back(product *= size);
  }
  llvm::sort(products);
  for (size_t i = 1; i < products.size(); ++i)
    if (products[i] % products[i - 1] != 0)
      return false;
  return true;
}

/// Calls `fn` on every shape of rank <= 3 over the given sizes.
template <typename Fn> void forEachShape(ArrayRef<int64_t> sizes, Fn fn) {
  SmallVector<int64_t> shape;
  std::function<void()> recurse = [&] {
    fn(ArrayRef<int64_t>(shape));
    if (shape.size() == 3)
      return;
    for (int64_t size : sizes) {
      shape.push_back(size);
      recurse();
      shape.pop_back();
    }
  };
  recurse();
}

TEST(ReshapeFactorsTest, ParallelFactorsSelectTheSameElementsEverywhere) {
  const int64_t sizes[] = {1, 2, 3, 4, 6, 8, 12};
  int64_t pairs = 0;
  forEachShape(sizes, [&](ArrayRef<int64_t> input) {
    forEachShape(sizes, [&](ArrayRef<int64_t> result) {
      int64_t count = 1, resultCount = 1;
      for (int64_t size : input)
        count *= size;
      for (int64_t size : result)
        resultCount *= size;
      if (count != resultCount)
        return;
      ++pairs;
      OpShardingRule rule = getRule(input, result);
      ASSERT_EQ(rule.verify({input}, {result}), "");
      ArrayRef<ShardingFactor> factors = rule.getFactors();
      for (const ShardingFactor &factor : factors)
        ASSERT_GT(factor.size, 1);

      // A parallel factor is shared, and every element has the same index
      // in it under both shapes.
      SmallVector<int64_t> parallel =
          rule.getFactorsOfKind(FactorKind::Parallel);
      for (int64_t flat = 0; flat < count; ++flat) {
        SmallVector<int64_t> in = getFactorIndices(
            flat, input, rule.getOperandMappings()[0], factors);
        SmallVector<int64_t> out = getFactorIndices(
            flat, result, rule.getResultMappings()[0], factors);
        for (int64_t id : parallel) {
          ASSERT_NE(in[id], -1);
          ASSERT_EQ(in[id], out[id]);
        }
      }

      // Correctness never costs parallelism where a refinement exists.
      if (haveCommonRefinement(input, result))
        EXPECT_TRUE(rule.getFactorsOfKind(FactorKind::NeedReplication).empty());
    });
  });
  // Sanity: the sweep covers many pairs (not just identities).
  EXPECT_GT(pairs, 5000);
}

} // namespace

//===- ReshapeFactors.cpp - Common factors of a reshape's shapes ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// factorizeReshape finds the greatest common refinement of two shapes of one
// element count, from both ends:
//
//   1. Major walk. Keep the unfactored size of every dim (its *rest*). Skip
//      dims whose rest is 1 (size-1 dims get no factor), then take
//      g = gcd(rest of the current input dim, rest of the current result
//      dim). If g > 1 it is a shared factor: the major g-way block of what is
//      left of the flat index in both shapes. Divide it out of both rests
//      and repeat. Stop at the end, or when g == 1 (the shapes entangle).
//   2. Minor walk. The same from the last dims backwards over the rests,
//      down to where the major walk stopped; each g is a shared factor that
//      is the minor g-way part of both dims.
//   3. Entangled middle. Whatever rest is still above 1 cannot be written as
//      a product of shared factors in order ([2, 3] -> [3, 2]). Each such
//      rest becomes a factor of its own tensor only, NeedReplication. A
//      shared factor of the minor walk that lies in a dim holding such a
//      factor is NeedReplication too: splitting a factor of a compound dim
//      gives contiguous blocks of the dim only when every factor major to it
//      is split as well, which an entangled factor never is.
//
// Why a shared factor is correct: both walks keep the invariant that the
// factored part of the two shapes covers the same major (resp. minor) part
// of the flat index. With rest products R_in = R_out = R, the index of the
// next g-way factor is floor(r / (R / g)) for the remaining index r in both
// shapes (resp. r mod g), so a device holding one value of that index holds
// the same elements under both shapes.
//
// Examples (major walk only unless noted):
//   [2, 128, 768] -> [2, 128, 12, 64]: 12 = gcd(768, 12), then 64: input dim
//     2 is (12, 64).
//   [4, 3] -> [2, 6]: 2, 2 (input dim 0 rest 2 vs result dim 1's 6), 3.
//   [4, 6] -> [6, 4]: 2, then rests 2 and 3 entangle; the minor walk takes
//     2 from 6 and 4; the rests 2, 3 (input) and 3, 2 (result) replicate.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/ReshapeFactors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::loom;

static constexpr int64_t kNoDim = OpShardingRuleBuilder::kNoDim;

/// Returns the element count of `shape`, or failure if a size is negative or
/// the count overflows.
static FailureOr<int64_t> getElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    if (size < 0 || llvm::MulOverflow(count, size, count))
      return failure();
  return count;
}

/// Returns the factors of a reshape with no elements: a size-0 dim has no
/// meaningful refinement, so every dim is replicated whole.
static SmallVector<ReshapeFactor>
factorizeEmptyReshape(ArrayRef<int64_t> inputShape,
                      ArrayRef<int64_t> resultShape) {
  SmallVector<ReshapeFactor> factors;
  for (auto [dim, size] : llvm::enumerate(inputShape))
    if (size != 1)
      factors.push_back({size, static_cast<int64_t>(dim), kNoDim,
                         FactorKind::NeedReplication});
  for (auto [dim, size] : llvm::enumerate(resultShape))
    if (size != 1)
      factors.push_back({size, kNoDim, static_cast<int64_t>(dim),
                         FactorKind::NeedReplication});
  return factors;
}

FailureOr<SmallVector<ReshapeFactor>>
mlir::loom::factorizeReshape(ArrayRef<int64_t> inputShape,
                             ArrayRef<int64_t> resultShape) {
  FailureOr<int64_t> inputCount = getElementCount(inputShape);
  FailureOr<int64_t> resultCount = getElementCount(resultShape);
  if (failed(inputCount) || failed(resultCount) || *inputCount != *resultCount)
    return failure();
  if (*inputCount == 0)
    return factorizeEmptyReshape(inputShape, resultShape);

  // The unfactored size of every dim. Element counts are equal, and every
  // step divides both sides by the same g, so the products of the rests
  // stay equal: one side runs out of rests above 1 exactly when the other
  // does.
  SmallVector<int64_t> inRest(inputShape), outRest(resultShape);
  int64_t inRank = inRest.size(), outRank = outRest.size();

  // 1. Major walk.
  SmallVector<ReshapeFactor> major;
  int64_t in = 0, out = 0;
  while (true) {
    while (in < inRank && inRest[in] == 1)
      ++in;
    while (out < outRank && outRest[out] == 1)
      ++out;
    if (in == inRank || out == outRank)
      break;
    int64_t g = std::gcd(inRest[in], outRest[out]);
    if (g == 1)
      break;
    major.push_back({g, in, out, FactorKind::Parallel});
    inRest[in] /= g;
    outRest[out] /= g;
  }

  // 2. Minor walk, down to the dims where the major walk stopped (whose
  // rests are the minor parts left by it). Factors come out minor first.
  SmallVector<ReshapeFactor> minor;
  int64_t inBack = inRank - 1, outBack = outRank - 1;
  while (true) {
    while (inBack >= in && inRest[inBack] == 1)
      --inBack;
    while (outBack >= out && outRest[outBack] == 1)
      --outBack;
    if (inBack < in || outBack < out)
      break;
    int64_t g = std::gcd(inRest[inBack], outRest[outBack]);
    if (g == 1)
      break;
    minor.push_back({g, inBack, outBack, FactorKind::Parallel});
    inRest[inBack] /= g;
    outRest[outBack] /= g;
  }

  // 3. Entangled middle: each rest above 1, in its own tensor only. Listed
  // after the major factors and before the minor ones, which is its place
  // in every dim.
  SmallVector<ReshapeFactor> factors = std::move(major);
  for (int64_t dim = 0; dim < inRank; ++dim)
    if (inRest[dim] != 1)
      factors.push_back(
          {inRest[dim], dim, kNoDim, FactorKind::NeedReplication});
  for (int64_t dim = 0; dim < outRank; ++dim)
    if (outRest[dim] != 1)
      factors.push_back(
          {outRest[dim], kNoDim, dim, FactorKind::NeedReplication});
  for (ReshapeFactor factor : llvm::reverse(minor)) {
    // A minor factor in a dim with an entangled factor could only be split
    // in strided pieces of that dim.
    if (inRest[factor.inputDim] != 1 || outRest[factor.resultDim] != 1)
      factor.kind = FactorKind::NeedReplication;
    factors.push_back(factor);
  }
  return factors;
}

//===- FollowProducers.h - Strategies read off operand layouts --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Layout assignment gives an op without an explicit strategy the strategy
// that *follows its producers*: the layouts its operands already have are
// read back into factor assignments through the op's sharding rule, each
// reading is trimmed to a valid strategy, and the candidate whose operand
// redistributions are cheapest wins. This file holds those steps in plain
// C++ (no IR), so they are unit-tested on rules built by hand:
//
//   - readFactorAxes: the factor axes one operand layout implies (a dim's
//     axes go to its only factor; a compound dim's axes go to its factors
//     major first, moving to the next factor once one is split completely);
//   - trimFactorAxes: the largest valid prefix-wise subset of an assignment,
//     keeping `fixed` factors as they are;
//   - estimateReshardBytes: a bytes-moved estimate of one redistribution
//     (the plan JSON reports it; layout assignment compares candidates by
//     the redistribution planner's price).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_STRATEGY_FOLLOWPRODUCERS_H
#define LOOM_ANALYSIS_STRATEGY_FOLLOWPRODUCERS_H

#include "loom/Analysis/Strategy/OpLayouts.h"

#include <optional>
#include <vector>

namespace mlir::loom::dist {

/// Factors an assignment must keep: `std::nullopt` where the factor is free,
/// else its axes (possibly none: pinned unsplit).
using FixedFactors = std::vector<std::optional<Layout::AxisList>>;

/// The factor axes operand `operand`'s layout implies under `rule`. Partial
/// axes are ignored (an operand is never partial: what counts is where its
/// dims lie). Axes that do not fit a compound dim's factors are dropped.
FactorAxes readFactorAxes(const OpShardingRule &rule, const Mesh &mesh,
                          unsigned operand, const Layout &layout);

/// Merges `readings` in order: a factor takes the axes of the first reading
/// that splits it, unless one of those axes is already taken.
FactorAxes mergeFactorAxes(const OpShardingRule &rule,
                           const std::vector<FactorAxes> &readings);

/// Overlays `fixed` on `axes` (fixed factors win; other factors lose axes
/// the fixed ones use) and trims the free factors until the assignment is
/// valid (verifyFactorAxes): factors are added in id order, each with the
/// longest prefix of its axes that keeps the assignment valid. Fails with
/// verifyFactorAxes' message when the fixed factors alone are invalid.
ValueOrError<FactorAxes> trimFactorAxes(const OpShardingRule &rule,
                                        const Mesh &mesh,
                                        const FactorAxes &axes,
                                        const FixedFactors &fixed);

/// An estimate of the bytes each device sends to move a tensor of
/// `globalShape` (elements of `elementBytes`) from layout `from` to `to`:
/// resolving partial sums costs an all-reduce (2(n-1)/n of the local bytes)
/// or a reduce-scatter where `to` splits over the partial axes ((n-1)/n);
/// an axis moving between dims an all-to-all ((n-1)/n); dropping a split an
/// all-gather ((n-1) local blocks); adding a split is free. 0 for equal
/// layouts; a huge value when `to` is partial where `from` is not (no
/// collective makes a pending sum). The plan JSON reports it; layout
/// assignment prices candidates with the redistribution planner instead.
double estimateReshardBytes(const Mesh &mesh, const Layout &from,
                            const Layout &to,
                            const std::vector<int64_t> &globalShape,
                            int64_t elementBytes);

/// The number of devices an assignment splits the op's work over: the
/// product of the sizes of every axis it uses. Breaks cost ties in favour
/// of more parallel work.
int64_t getParallelism(const Mesh &mesh, const FactorAxes &axes);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_STRATEGY_FOLLOWPRODUCERS_H

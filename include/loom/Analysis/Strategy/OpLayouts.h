//===- OpLayouts.h - The layouts an op strategy implies ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A strategy assigns mesh axes to the factors of an op's sharding rule. This
// file turns one into the layouts of the op's operands and results, the one
// place where that meaning is defined (layout assignment, partitioning, the
// strategy search and the plan dump all use it):
//
//   - a dim's axes are the axes of its factors, major factor first;
//   - an operand is partial exactly over the strategy's `partial` axes
//     (usually none);
//   - a result lacking a split Reduction factor is a pending sum over that
//     factor's axes, and every result is a pending sum over the strategy's
//     `partial` axes;
//   - a result lacking a split Parallel, NeedReplication or OpPartitioned
//     factor is whole on every device (replicated over those axes).
//
// `partial` axes are allowed only on ops linear in all their operands
// jointly (OpShardingRule::isLinear): each device applies the op to its
// summands, and the results add up to the op applied to the sums.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_STRATEGY_OPLAYOUTS_H
#define LOOM_ANALYSIS_STRATEGY_OPLAYOUTS_H

#include "loom/Analysis/Layout/Layout.h"
#include "loom/Interfaces/ShardingRule.h"

#include <string>
#include <vector>

namespace mlir::loom::dist {

/// Mesh axes per factor of a sharding rule, major first; `{}` for an unsplit
/// factor.
using FactorAxes = std::vector<Layout::AxisList>;

/// The layouts of one op's operands and results under a strategy.
struct OpLayouts {
  std::vector<Layout> operands;
  std::vector<Layout> results;
};

/// Checks `factorAxes` against `rule` and `mesh`: one entry per factor, every
/// axis an axis of the mesh used at most once, and the split valid for the
/// rule (sizes divide, replication factors unsplit, compound dims split
/// major-first; see OpShardingRule::verifyAssignment). Returns an error
/// message that names the factor, or an empty string.
std::string verifyFactorAxes(const OpShardingRule &rule, const Mesh &mesh,
                             const FactorAxes &factorAxes);

/// Checks the `partial` axes of a strategy whose factors are `factorAxes`:
/// empty, or on an op whose rule is linear, every axis an axis of the mesh
/// used once and by no factor. Returns an error message, or an empty string.
std::string verifyPartialAxes(const OpShardingRule &rule, const Mesh &mesh,
                              const FactorAxes &factorAxes,
                              const Layout::AxisList &partial);

/// The layouts `factorAxes` (and the pending sums `partial`, see the file
/// comment) give every operand and result of an op with sharding rule
/// `rule`; fails with verifyFactorAxes' or verifyPartialAxes' message.
ValueOrError<OpLayouts> deriveOpLayouts(const OpShardingRule &rule,
                                        const Mesh &mesh,
                                        const FactorAxes &factorAxes,
                                        const Layout::AxisList &partial = {});

/// The strategy that splits nothing.
FactorAxes getReplicatedFactorAxes(const OpShardingRule &rule);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_STRATEGY_OPLAYOUTS_H

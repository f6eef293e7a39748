//===- OpLayouts.cpp - The layouts an op strategy implies -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Strategy/OpLayouts.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

namespace mlir::loom::dist {

std::string verifyFactorAxes(const OpShardingRule &rule, const Mesh &mesh,
                             const FactorAxes &factorAxes) {
  ArrayRef<ShardingFactor> factors = rule.getFactors();
  if (factorAxes.size() != factors.size())
    return "strategy has " + std::to_string(factorAxes.size()) +
           " factors, the op's sharding rule has " +
           std::to_string(factors.size());
  std::set<std::string> used;
  std::vector<int64_t> blocks;
  for (auto [id, axes] : llvm::enumerate(factorAxes)) {
    for (const std::string &axis : axes) {
      if (auto error = mesh.verifyAxis(axis))
        return "factor " + std::to_string(id) + ": " + *error;
      if (!used.insert(axis).second)
        return "mesh axis `" + axis + "` splits two factors";
    }
    blocks.push_back(mesh.getGroupSize(axes));
  }
  return rule.verifyAssignment(blocks);
}

/// `["dp", "tp"]`, for messages.
static std::string printAxes(const Layout::AxisList &axes) {
  std::string text = "[";
  for (auto [i, axis] : llvm::enumerate(axes))
    text += (i ? ", \"" : "\"") + axis + "\"";
  return text + "]";
}

std::string verifyPartialAxes(const OpShardingRule &rule, const Mesh &mesh,
                              const FactorAxes &factorAxes,
                              const Layout::AxisList &partial) {
  if (partial.empty())
    return "";
  if (!rule.isLinear())
    return "partial sums over " + printAxes(partial) +
           " need an op linear in all its operands jointly, and this op's "
           "sharding rule is not";
  std::set<std::string> used;
  for (const Layout::AxisList &axes : factorAxes)
    used.insert(axes.begin(), axes.end());
  std::set<std::string> seen;
  for (const std::string &axis : partial) {
    if (auto error = mesh.verifyAxis(axis))
      return "partial: " + *error;
    if (used.count(axis))
      return "mesh axis `" + axis + "` splits a factor and is partial";
    if (!seen.insert(axis).second)
      return "mesh axis `" + axis + "` is partial twice";
  }
  return "";
}

/// The layout of one tensor whose dims are made of `mapping`'s factors.
static std::vector<Layout::AxisList>
dimAxes(const TensorFactorMapping &mapping, const FactorAxes &factorAxes) {
  std::vector<Layout::AxisList> dims;
  for (ArrayRef<int64_t> dimFactors : mapping) {
    Layout::AxisList axes;
    for (int64_t id : dimFactors)
      llvm::append_range(axes, factorAxes[id]);
    dims.push_back(std::move(axes));
  }
  return dims;
}

ValueOrError<OpLayouts> deriveOpLayouts(const OpShardingRule &rule,
                                        const Mesh &mesh,
                                        const FactorAxes &factorAxes,
                                        const Layout::AxisList &partial) {
  std::string error = verifyFactorAxes(rule, mesh, factorAxes);
  if (error.empty())
    error = verifyPartialAxes(rule, mesh, factorAxes, partial);
  if (!error.empty())
    return ValueOrError<OpLayouts>::failure(error);

  OpLayouts layouts;
  for (const TensorFactorMapping &mapping : rule.getOperandMappings()) {
    auto layout = Layout::get(mesh, dimAxes(mapping, factorAxes), partial);
    if (!layout)
      return ValueOrError<OpLayouts>::failure(layout.error());
    layouts.operands.push_back(*layout);
  }
  for (const TensorFactorMapping &mapping : rule.getResultMappings()) {
    std::set<int64_t> present;
    for (ArrayRef<int64_t> dimFactors : mapping)
      present.insert(dimFactors.begin(), dimFactors.end());
    Layout::AxisList pending = partial;
    for (auto [id, factor] : llvm::enumerate(rule.getFactors()))
      if (factor.kind == FactorKind::Reduction && !present.count(id))
        llvm::append_range(pending, factorAxes[id]);
    auto layout = Layout::get(mesh, dimAxes(mapping, factorAxes), pending);
    if (!layout)
      return ValueOrError<OpLayouts>::failure(layout.error());
    layouts.results.push_back(*layout);
  }
  return layouts;
}

FactorAxes getReplicatedFactorAxes(const OpShardingRule &rule) {
  return FactorAxes(rule.getFactors().size());
}

} // namespace mlir::loom::dist

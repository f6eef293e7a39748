//===- FollowProducers.cpp - Strategies read off operand layouts ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Strategy/FollowProducers.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <set>

namespace mlir::loom::dist {

static int64_t getAxisSize(const Mesh &mesh, const std::string &axis) {
  std::optional<size_t> index = mesh.findAxis(axis);
  return index ? mesh.getAxis(*index).size : 1;
}

FactorAxes readFactorAxes(const OpShardingRule &rule, const Mesh &mesh,
                          unsigned operand, const Layout &layout) {
  ArrayRef<ShardingFactor> factors = rule.getFactors();
  FactorAxes result(factors.size());
  const TensorFactorMapping &mapping = rule.getOperandMappings()[operand];
  for (auto [dim, dimFactors] : llvm::enumerate(mapping)) {
    if (dim >= layout.getRank() || dimFactors.empty())
      continue;
    const Layout::AxisList &axes = layout.getDimAxes(dim);
    // A compound dim (h, d) split over [x, y]: x and y go to h while h has
    // blocks left to split, then to d; a split that fits no factor whole
    // stops the reading (the layout is not one this rule can produce).
    size_t current = 0;
    int64_t remaining = factors[dimFactors[0]].size;
    for (const std::string &axis : axes) {
      while (remaining == 1 && current + 1 < dimFactors.size())
        remaining = factors[dimFactors[++current]].size;
      int64_t size = getAxisSize(mesh, axis);
      if (remaining % size != 0)
        break;
      remaining /= size;
      Layout::AxisList &target = result[dimFactors[current]];
      target.push_back(axis);
    }
  }
  return result;
}

FactorAxes mergeFactorAxes(const OpShardingRule &rule,
                           const std::vector<FactorAxes> &readings) {
  FactorAxes merged(rule.getFactors().size());
  std::set<std::string> used;
  for (const FactorAxes &reading : readings) {
    for (auto [id, axes] : llvm::enumerate(reading)) {
      if (id >= merged.size() || axes.empty() || !merged[id].empty())
        continue;
      if (llvm::any_of(axes, [&](const std::string &a) { return used.count(a); }))
        continue;
      merged[id] = axes;
      used.insert(axes.begin(), axes.end());
    }
  }
  return merged;
}

ValueOrError<FactorAxes> trimFactorAxes(const OpShardingRule &rule,
                                        const Mesh &mesh,
                                        const FactorAxes &axes,
                                        const FixedFactors &fixed) {
  size_t numFactors = rule.getFactors().size();
  FactorAxes result(numFactors);
  std::set<std::string> used;
  for (size_t id = 0; id < numFactors && id < fixed.size(); ++id) {
    if (!fixed[id])
      continue;
    result[id] = *fixed[id];
    used.insert(fixed[id]->begin(), fixed[id]->end());
  }
  std::string error = verifyFactorAxes(rule, mesh, result);
  if (!error.empty())
    return ValueOrError<FactorAxes>::failure(error);

  for (size_t id = 0; id < numFactors && id < axes.size(); ++id) {
    if (id < fixed.size() && fixed[id])
      continue;
    // The longest prefix of unused axes: dropping a major axis would change
    // which block a device holds, so only minor ones are trimmed.
    Layout::AxisList prefix;
    for (const std::string &axis : axes[id]) {
      if (used.count(axis))
        break;
      prefix.push_back(axis);
    }
    while (!prefix.empty()) {
      result[id] = prefix;
      if (verifyFactorAxes(rule, mesh, result).empty())
        break;
      prefix.pop_back();
    }
    result[id] = prefix;
    used.insert(prefix.begin(), prefix.end());
  }
  return result;
}

double estimateReshardBytes(const Mesh &mesh, const Layout &from,
                            const Layout &to,
                            const std::vector<int64_t> &globalShape,
                            int64_t elementBytes) {
  if (from == to)
    return 0.0;
  for (const std::string &axis : to.getPartialAxes())
    if (!llvm::is_contained(from.getPartialAxes(), axis))
      return 1e30;

  double elements = 1;
  for (int64_t size : globalShape)
    elements *= double(size);
  for (size_t dim = 0; dim < from.getRank(); ++dim)
    elements /= double(from.getNumBlocks(mesh, dim));
  double local = elements * double(elementBytes);
  double bytes = 0;

  // Pending sums: a reduce-scatter when `to` splits over all of them, else an
  // all-reduce.
  Layout::AxisList resolved;
  for (const std::string &axis : from.getPartialAxes())
    if (!llvm::is_contained(to.getPartialAxes(), axis))
      resolved.push_back(axis);
  if (!resolved.empty()) {
    double n = double(mesh.getGroupSize(resolved));
    bool scatter = llvm::all_of(resolved, [&](const std::string &axis) {
      return to.findSplitDim(axis).has_value();
    });
    bytes += (scatter ? 1.0 : 2.0) * local * (n - 1) / n;
    if (scatter)
      local /= n;
  }

  // Splits: kept, moved to another dim (all-to-all) or dropped (all-gather).
  for (size_t dim = 0; dim < from.getRank(); ++dim) {
    const Layout::AxisList &fromAxes = from.getDimAxes(dim);
    const Layout::AxisList &toAxes =
        dim < to.getRank() ? to.getDimAxes(dim) : Layout::AxisList();
    for (auto [position, axis] : llvm::enumerate(fromAxes)) {
      if (position < toAxes.size() && toAxes[position] == axis &&
          std::equal(fromAxes.begin(), fromAxes.begin() + position,
                     toAxes.begin()))
        continue;
      double n = double(getAxisSize(mesh, axis));
      std::optional<size_t> target = to.findSplitDim(axis);
      if (target && *target != dim) {
        bytes += local * (n - 1) / n;
      } else {
        bytes += local * (n - 1);
        local *= n;
      }
    }
  }
  return bytes;
}

int64_t getParallelism(const Mesh &mesh, const FactorAxes &axes) {
  int64_t product = 1;
  for (const Layout::AxisList &list : axes)
    product *= mesh.getGroupSize(list);
  return product;
}

} // namespace mlir::loom::dist

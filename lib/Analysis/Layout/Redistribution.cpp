//===- Redistribution.cpp - Cheapest collective chains between layouts ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The redistribution planner's search and the α–β cost model. The search:
//
//   1. Check the request: layouts of this mesh that fit the shape, and a
//      destination partial only over axes the source is partial over (no
//      collective creates a pending sum).
//   2. Dijkstra from the source layout. The states are layouts that fit the
//      shape and are still partial over every axis the destination is
//      partial over (once summed, a pending sum cannot come back). Ties in
//      cost go to the chain with fewer steps.
//   3. Each state's edges are every applicable collective: all_gather of a
//      minor-end run of a dim's axes, all_slice of any ordered run of unused
//      axes, all_reduce of any set of partial axes, reduce_scatter of any
//      ordered run of partial axes onto a dim, and all_to_all of a minor-end
//      run from one dim to another. The layout algebra computes each target,
//      so an edge is exactly what the collective does.
//   4. Stop when the destination is settled and read the chain back through
//      the parents.
//
// test/Unit/Analysis/RedistributionTest.cpp checks every plan on small meshes
// against an all-pairs search that enumerates collectives generically.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Layout/Redistribution.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <sstream>
#include <tuple>

using namespace mlir::loom::dist;

//===----------------------------------------------------------------------===//
// Steps and plans
//===----------------------------------------------------------------------===//

const char *mlir::loom::dist::getCollectiveName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::AllSlice:
    return "all_slice";
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  }
  return "unknown";
}

/// `["x", "y"]`.
static std::string formatAxes(const Layout::AxisList &axes) {
  std::string result = "[";
  for (size_t i = 0; i < axes.size(); ++i)
    result += (i ? ", \"" : "\"") + axes[i] + "\"";
  return result + "]";
}

std::string RedistributionStep::toString() const {
  std::ostringstream os;
  os << getCollectiveName(kind) << "(axes=" << formatAxes(axes);
  if (kind == CollectiveKind::AllToAll)
    os << ", split_dim=" << dim << ", concat_dim=" << concatDim;
  else if (kind != CollectiveKind::AllReduce)
    os << ", dim=" << dim;
  os << ") -> " << result.toString();
  return os.str();
}

std::string RedistributionPlan::toString() const {
  std::ostringstream os;
  for (const RedistributionStep &step : steps)
    os << step.toString() << " (" << step.cost << " s)\n";
  os << "total " << cost << " s";
  return os.str();
}

/// The layout algebra of `step` on `layout`, without the shape check.
static ValueOrError<Layout> applyCollective(const Mesh &mesh,
                                            const Layout &layout,
                                            const RedistributionStep &step) {
  switch (step.kind) {
  case CollectiveKind::AllGather:
    return layout.allGather(mesh, step.dim, step.axes);
  case CollectiveKind::AllSlice:
    return layout.allSlice(mesh, step.dim, step.axes);
  case CollectiveKind::AllReduce:
    return layout.allReduce(mesh, step.axes);
  case CollectiveKind::ReduceScatter:
    return layout.reduceScatter(mesh, step.dim, step.axes);
  case CollectiveKind::AllToAll:
    return layout.allToAll(mesh, step.dim, step.concatDim, step.axes);
  }
  return ValueOrError<Layout>::failure("unknown collective kind");
}

ValueOrError<Layout> mlir::loom::dist::applyStep(
    const Mesh &mesh, const std::vector<int64_t> &globalShape,
    const Layout &layout, const RedistributionStep &step) {
  ValueOrError<Layout> result = applyCollective(mesh, layout, step);
  if (!result)
    return result;
  if (std::optional<std::string> error = result->verifyShape(mesh, globalShape))
    return ValueOrError<Layout>::failure(*error);
  return result;
}

//===----------------------------------------------------------------------===//
// The α–β model
//===----------------------------------------------------------------------===//

RedistributionCostModel::~RedistributionCostModel() = default;

double AlphaBetaCostModel::getStepCost(const StepCostQuery &query) const {
  double n = static_cast<double>(query.groupSize);
  // Fraction of the data each device sends on a ring: all but its own share.
  double ring = (n - 1) / n;
  switch (query.kind) {
  case CollectiveKind::AllSlice:
    return 0;
  case CollectiveKind::AllGather:
    return (n - 1) * alpha + ring * query.bytesAfter / beta;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
    return (n - 1) * alpha + ring * query.bytesBefore / beta;
  case CollectiveKind::AllReduce:
    // A reduce_scatter followed by an all_gather.
    return 2 * (n - 1) * alpha + 2 * ring * query.bytesBefore / beta;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// The search
//===----------------------------------------------------------------------===//

namespace {

/// Calls `fn` on every non-empty ordered sequence of distinct elements of
/// `pool` (every order of every subset).
void forEachArrangement(
    const Layout::AxisList &pool,
    const std::function<void(const Layout::AxisList &)> &fn) {
  Layout::AxisList current;
  std::vector<bool> taken(pool.size(), false);
  std::function<void()> extend = [&]() {
    for (size_t i = 0; i < pool.size(); ++i) {
      if (taken[i])
        continue;
      taken[i] = true;
      current.push_back(pool[i]);
      fn(current);
      extend();
      current.pop_back();
      taken[i] = false;
    }
  };
  extend();
}

/// Calls `fn` on every non-empty subset of `pool`, in `pool`'s order.
void forEachSubset(const Layout::AxisList &pool,
                   const std::function<void(const Layout::AxisList &)> &fn) {
  for (uint64_t mask = 1; mask < (uint64_t(1) << pool.size()); ++mask) {
    Layout::AxisList subset;
    for (size_t i = 0; i < pool.size(); ++i)
      if (mask & (uint64_t(1) << i))
        subset.push_back(pool[i]);
    fn(subset);
  }
}

/// The last `count` axes of `axes`.
Layout::AxisList minorEnd(const Layout::AxisList &axes, size_t count) {
  return Layout::AxisList(axes.end() - count, axes.end());
}

/// Calls `fn` on every collective that applies to `layout`, as a step whose
/// `result` and `cost` are not yet filled in.
void forEachCandidate(const Mesh &mesh, const Layout &layout,
                      const std::function<void(RedistributionStep)> &fn) {
  size_t rank = layout.getRank();
  Layout::AxisList unused;
  for (const Mesh::Axis &axis : mesh.getAxes())
    if (!layout.uses(axis.name))
      unused.push_back(axis.name);
  const Layout::AxisList &partial = layout.getPartialAxes();
  // The placeholder result (an empty layout, not a copy of `layout`: most
  // candidates are discarded) is overwritten by the caller.
  auto make = [&](CollectiveKind kind, size_t dim, size_t concatDim,
                  Layout::AxisList axes) {
    return RedistributionStep{
        kind, dim, concatDim, std::move(axes), Layout::getReplicated(0), 0};
  };

  for (size_t dim = 0; dim < rank; ++dim) {
    const Layout::AxisList &axes = layout.getDimAxes(dim);
    for (size_t count = 1; count <= axes.size(); ++count) {
      fn(make(CollectiveKind::AllGather, dim, 0, minorEnd(axes, count)));
      for (size_t split = 0; split < rank; ++split)
        if (split != dim)
          fn(make(CollectiveKind::AllToAll, split, dim, minorEnd(axes, count)));
    }
    forEachArrangement(unused, [&](const Layout::AxisList &run) {
      fn(make(CollectiveKind::AllSlice, dim, 0, run));
    });
    forEachArrangement(partial, [&](const Layout::AxisList &run) {
      fn(make(CollectiveKind::ReduceScatter, dim, 0, run));
    });
  }
  forEachSubset(partial, [&](const Layout::AxisList &subset) {
    fn(make(CollectiveKind::AllReduce, 0, 0, subset));
  });
}

/// The bytes of a local tensor of `shape`.
double getBytes(const std::vector<int64_t> &shape, int64_t elementBytes) {
  double bytes = static_cast<double>(elementBytes);
  for (int64_t size : shape)
    bytes *= static_cast<double>(size);
  return bytes;
}

/// Whether `layout` is partial over every axis of `required`.
bool isPartialOverAll(const Layout &layout, const Layout::AxisList &required) {
  const Layout::AxisList &partial = layout.getPartialAxes();
  return std::all_of(
      required.begin(), required.end(), [&](const std::string &axis) {
        return std::find(partial.begin(), partial.end(), axis) != partial.end();
      });
}

/// Checks that `layout` is a layout of `mesh` for `shape`; `role` names it.
std::optional<std::string> checkLayout(const Mesh &mesh,
                                       const std::vector<int64_t> &shape,
                                       const Layout &layout, const char *role) {
  ValueOrError<Layout> rebuilt =
      Layout::get(mesh, layout.getDims(), layout.getPartialAxes());
  if (!rebuilt)
    return std::string(role) + " layout " + layout.toString() + ": " +
           rebuilt.error();
  if (*rebuilt != layout)
    return std::string(role) + " layout " + layout.toString() +
           " lists its partial axes out of mesh order";
  if (std::optional<std::string> error = layout.verifyShape(mesh, shape))
    return std::string(role) + " layout " + layout.toString() + ": " + *error;
  return std::nullopt;
}

/// A settled or frontier state of the search.
struct Node {
  Layout layout;
  std::vector<int64_t> localShape;
  double cost;
  size_t numSteps;
  /// The node this one was reached from, and how; none for the source.
  std::optional<size_t> parent;
  std::optional<RedistributionStep> via;
  bool settled = false;
};

/// Dijkstra from `from` to `to` (see the file comment). Inputs are checked.
ValueOrError<RedistributionPlan>
search(const Mesh &mesh, const std::vector<int64_t> &shape,
       int64_t elementBytes, const Layout &from, const Layout &to,
       const RedistributionCostModel &costModel) {
  using Plan = ValueOrError<RedistributionPlan>;
  std::vector<Node> nodes;
  std::unordered_map<Layout, size_t> index;
  // Lexicographic (cost, steps), then insertion order for determinism.
  using Entry = std::tuple<double, size_t, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;

  nodes.push_back(Node{from, *from.getLocalShape(mesh, shape), 0, 0,
                       std::nullopt, std::nullopt});
  index.emplace(from, 0);
  queue.emplace(0.0, 0, 0);

  while (!queue.empty()) {
    double cost = std::get<0>(queue.top());
    size_t numSteps = std::get<1>(queue.top());
    size_t current = std::get<2>(queue.top());
    queue.pop();
    if (nodes[current].settled)
      continue;
    nodes[current].settled = true;
    if (nodes[current].layout == to)
      break;

    // Copies: pushing nodes below may reallocate the vector.
    Layout layout = nodes[current].layout;
    std::vector<int64_t> localShape = nodes[current].localShape;
    double bytesBefore = getBytes(localShape, elementBytes);
    std::optional<std::string> modelError;

    forEachCandidate(mesh, layout, [&](RedistributionStep step) {
      if (modelError)
        return;
      // applyStep's check without its message: most candidates do not fit.
      ValueOrError<Layout> next = applyCollective(mesh, layout, step);
      if (!next || !next->fitsShape(mesh, shape) ||
          !isPartialOverAll(*next, to.getPartialAxes()))
        return;
      auto found = index.find(*next);
      if (found != index.end() && nodes[found->second].settled)
        return;
      std::vector<int64_t> nextShape = *next->getLocalShape(mesh, shape);
      StepCostQuery query{
          mesh,           step.kind,   step.dim,
          step.concatDim, step.axes,   mesh.getGroupSize(step.axes),
          layout,         *next,       localShape,
          nextShape,      bytesBefore, getBytes(nextShape, elementBytes)};
      double stepCost = costModel.getStepCost(query);
      if (!std::isfinite(stepCost) || stepCost < 0) {
        step.result = *next;
        modelError = "cost model `" + costModel.getName() + "` priced " +
                     step.toString() + " at " + std::to_string(stepCost) +
                     " s; costs must be finite and at least 0";
        return;
      }
      step.result = *next;
      step.cost = stepCost;
      double total = cost + stepCost;
      size_t totalSteps = numSteps + 1;
      if (found != index.end()) {
        Node &node = nodes[found->second];
        if (std::tie(total, totalSteps) >= std::tie(node.cost, node.numSteps))
          return;
        node.cost = total;
        node.numSteps = totalSteps;
        node.parent = current;
        node.via = std::move(step);
        queue.emplace(total, totalSteps, found->second);
        return;
      }
      size_t id = nodes.size();
      index.emplace(*next, id);
      nodes.push_back(Node{*next, std::move(nextShape), total, totalSteps,
                           current, std::move(step)});
      queue.emplace(total, totalSteps, id);
    });
    if (modelError)
      return Plan::failure(*modelError);
  }

  auto reached = index.find(to);
  if (reached == index.end() || !nodes[reached->second].settled)
    return Plan::failure("no chain of collectives turns " + from.toString() +
                         " into " + to.toString());
  RedistributionPlan plan;
  plan.cost = nodes[reached->second].cost;
  for (size_t at = reached->second; nodes[at].parent; at = *nodes[at].parent)
    plan.steps.push_back(*nodes[at].via);
  std::reverse(plan.steps.begin(), plan.steps.end());
  return plan;
}

} // namespace

//===----------------------------------------------------------------------===//
// The planner and its cache
//===----------------------------------------------------------------------===//

RedistributionPlanner::RedistributionPlanner()
    : costModel(std::make_shared<AlphaBetaCostModel>()) {}

RedistributionPlanner::RedistributionPlanner(
    std::shared_ptr<const RedistributionCostModel> costModel)
    : costModel(std::move(costModel)) {}

bool RedistributionPlanner::Key::operator==(const Key &other) const {
  return mesh == other.mesh && shape == other.shape &&
         elementBytes == other.elementBytes && from == other.from &&
         to == other.to;
}

size_t RedistributionPlanner::KeyHash::operator()(const Key &key) const {
  size_t seed = key.from.hash() * 31 + key.to.hash();
  auto mix = [&](size_t value) {
    seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  };
  for (const Mesh::Axis &axis : key.mesh.getAxes()) {
    mix(std::hash<std::string>()(axis.name));
    mix(static_cast<size_t>(axis.size));
  }
  for (int64_t size : key.shape)
    mix(static_cast<size_t>(size));
  mix(static_cast<size_t>(key.elementBytes));
  return seed;
}

ValueOrError<RedistributionPlan> RedistributionPlanner::plan(
    const Mesh &mesh, const std::vector<int64_t> &globalShape,
    int64_t elementBytes, const Layout &from, const Layout &to) {
  using Plan = ValueOrError<RedistributionPlan>;
  Key key{mesh, globalShape, elementBytes, from, to};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto cached = cache.find(key);
    if (cached != cache.end()) {
      ++cacheHits;
      return cached->second;
    }
  }

  Plan result = [&]() -> Plan {
    if (mesh.getNumAxes() > kMaxMeshAxes)
      return Plan::failure("redistribution planning supports meshes of at "
                           "most " +
                           std::to_string(kMaxMeshAxes) + " axes, got " +
                           mesh.toString());
    if (elementBytes < 1)
      return Plan::failure("element size must be at least 1 byte, got " +
                           std::to_string(elementBytes));
    for (size_t dim = 0; dim < globalShape.size(); ++dim)
      if (globalShape[dim] < 0)
        return Plan::failure("dim " + std::to_string(dim) + " has size " +
                             std::to_string(globalShape[dim]) +
                             "; sizes must be at least 0");
    if (std::optional<std::string> error =
            checkLayout(mesh, globalShape, from, "source"))
      return Plan::failure(*error);
    if (std::optional<std::string> error =
            checkLayout(mesh, globalShape, to, "destination"))
      return Plan::failure(*error);
    for (const std::string &axis : to.getPartialAxes())
      if (!isPartialOverAll(from, {axis}))
        return Plan::failure("destination " + to.toString() +
                             " is partial over mesh axis `" + axis +
                             "` but source " + from.toString() +
                             " is not; no collective creates a pending sum");
    return search(mesh, globalShape, elementBytes, from, to, *costModel);
  }();

  std::lock_guard<std::mutex> lock(mutex);
  ++searches;
  cache.emplace(std::move(key), result);
  return result;
}

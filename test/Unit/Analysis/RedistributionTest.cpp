//===- RedistributionTest.cpp - The redistribution planner ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Checks the planner against an independent search. For small meshes and
// shapes the tests enumerate every layout valid for the shape (partial ones
// included), compute all-pairs cheapest costs with Floyd–Warshall over edges
// found by trying *every* collective with *every* ordered axis list through
// the layout algebra (no knowledge of which lists can apply), and require for
// every pair that:
//   - the planner fails exactly when no chain exists;
//   - replaying its steps with the layout algebra gives the destination, each
//     intermediate layout fits the shape, and the step costs add up;
//   - its cost equals the exhaustive minimum.
// Named cases pin the chains the design promises (partial → split is one
// reduce_scatter, ...). The data semantics of each step are checked by
// LayoutSemanticsTest and, through the interpreter, by
// test/Unit/Dialect/CollectiveChainTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Layout/Redistribution.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

using namespace mlir::loom::dist;

namespace {

using Shape = std::vector<int64_t>;
using Axes = Layout::AxisList;

Mesh makeMesh(std::vector<Mesh::Axis> axes) {
  ValueOrError<Mesh> mesh = Mesh::get(std::move(axes));
  EXPECT_TRUE(mesh.ok()) << mesh.error();
  return *mesh;
}

Layout makeLayout(const Mesh &mesh, std::vector<Axes> dims, Axes partial = {}) {
  ValueOrError<Layout> layout =
      Layout::get(mesh, std::move(dims), std::move(partial));
  EXPECT_TRUE(layout.ok()) << layout.error();
  return *layout;
}

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

/// Every layout of a rank-`rank` tensor on `mesh` that fits `shape`: each
/// axis unused, partial or in some dim, every order within each dim.
std::vector<Layout> allLayouts(const Mesh &mesh, const Shape &shape) {
  size_t numAxes = mesh.getNumAxes(), rank = shape.size();
  std::vector<Layout> result;
  // choice[a]: 0 unused, 1 partial, 2 + d split dim d.
  std::vector<size_t> choice(numAxes, 0);
  std::function<void(size_t)> assign = [&](size_t axis) {
    if (axis < numAxes) {
      for (size_t c = 0; c < rank + 2; ++c) {
        choice[axis] = c;
        assign(axis + 1);
      }
      return;
    }
    Axes partial;
    std::vector<Axes> dims(rank);
    for (size_t a = 0; a < numAxes; ++a) {
      if (choice[a] == 1)
        partial.push_back(mesh.getAxis(a).name);
      else if (choice[a] >= 2)
        dims[choice[a] - 2].push_back(mesh.getAxis(a).name);
    }
    // Every order of every dim's axes.
    std::function<void(size_t)> order = [&](size_t dim) {
      if (dim == rank) {
        Layout layout = makeLayout(mesh, dims, partial);
        if (!layout.verifyShape(mesh, shape))
          result.push_back(layout);
        return;
      }
      std::sort(dims[dim].begin(), dims[dim].end());
      do
        order(dim + 1);
      while (std::next_permutation(dims[dim].begin(), dims[dim].end()));
    };
    order(0);
  };
  assign(0);
  return result;
}

/// Every non-empty ordered list of distinct mesh axes.
std::vector<Axes> allAxisLists(const Mesh &mesh) {
  std::vector<Axes> result;
  size_t numAxes = mesh.getNumAxes();
  for (uint64_t mask = 1; mask < (uint64_t(1) << numAxes); ++mask) {
    Axes axes;
    for (size_t a = 0; a < numAxes; ++a)
      if (mask & (uint64_t(1) << a))
        axes.push_back(mesh.getAxis(a).name);
    std::sort(axes.begin(), axes.end());
    do
      result.push_back(axes);
    while (std::next_permutation(axes.begin(), axes.end()));
  }
  return result;
}

/// The bytes of a local tensor.
double bytesOf(const Shape &shape, int64_t elementBytes) {
  double bytes = static_cast<double>(elementBytes);
  for (int64_t size : shape)
    bytes *= static_cast<double>(size);
  return bytes;
}

//===----------------------------------------------------------------------===//
// The independent all-pairs search
//===----------------------------------------------------------------------===//

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Cheapest costs between all layouts of a shape, by Floyd–Warshall over
/// every collective the layout algebra accepts.
struct AllPairs {
  std::vector<Layout> layouts;
  std::vector<std::vector<double>> cost;

  AllPairs(const Mesh &mesh, const Shape &shape, int64_t elementBytes,
           const RedistributionCostModel &model)
      : layouts(allLayouts(mesh, shape)) {
    size_t n = layouts.size();
    std::map<std::string, size_t> indexOf;
    for (size_t i = 0; i < n; ++i)
      indexOf[layouts[i].toString()] = i;
    cost.assign(n, std::vector<double>(n, kInfinity));
    std::vector<Axes> lists = allAxisLists(mesh);
    size_t rank = shape.size();

    for (size_t i = 0; i < n; ++i) {
      cost[i][i] = 0;
      const Layout &from = layouts[i];
      Shape localBefore = *from.getLocalShape(mesh, shape);
      auto relax = [&](CollectiveKind kind, size_t dim, size_t concatDim,
                       const Axes &axes, const ValueOrError<Layout> &to) {
        if (!to || to->verifyShape(mesh, shape))
          return;
        Shape localAfter = *to->getLocalShape(mesh, shape);
        StepCostQuery query{mesh,
                            kind,
                            dim,
                            concatDim,
                            axes,
                            mesh.getGroupSize(axes),
                            from,
                            *to,
                            localBefore,
                            localAfter,
                            bytesOf(localBefore, elementBytes),
                            bytesOf(localAfter, elementBytes)};
        size_t j = indexOf.at(to->toString());
        cost[i][j] = std::min(cost[i][j], model.getStepCost(query));
      };
      for (const Axes &axes : lists) {
        relax(CollectiveKind::AllReduce, 0, 0, axes,
              from.allReduce(mesh, axes));
        for (size_t d = 0; d < rank; ++d) {
          relax(CollectiveKind::AllGather, d, 0, axes,
                from.allGather(mesh, d, axes));
          relax(CollectiveKind::AllSlice, d, 0, axes,
                from.allSlice(mesh, d, axes));
          relax(CollectiveKind::ReduceScatter, d, 0, axes,
                from.reduceScatter(mesh, d, axes));
          for (size_t c = 0; c < rank; ++c)
            relax(CollectiveKind::AllToAll, d, c, axes,
                  from.allToAll(mesh, d, c, axes));
        }
      }
    }
    for (size_t k = 0; k < n; ++k)
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
          cost[i][j] = std::min(cost[i][j], cost[i][k] + cost[k][j]);
  }
};

/// Replays `plan` from `from` with the layout algebra; returns what is wrong
/// with it, or an empty string.
std::string checkReplay(const Mesh &mesh, const Shape &shape,
                        const Layout &from, const Layout &to,
                        const RedistributionPlan &plan) {
  Layout current = from;
  double total = 0;
  for (const RedistributionStep &step : plan.steps) {
    ValueOrError<Layout> next = applyStep(mesh, shape, current, step);
    if (!next)
      return "step " + step.toString() + " does not apply: " + next.error();
    if (*next != step.result)
      return "step " + step.toString() + " gives " + next->toString();
    if (!(step.cost >= 0))
      return "step " + step.toString() + " has a negative cost";
    total += step.cost;
    current = *next;
  }
  if (current != to)
    return "the chain ends at " + current.toString();
  if (std::fabs(total - plan.cost) > 1e-12 * std::max(1.0, plan.cost))
    return "the steps cost " + std::to_string(total) + ", the plan says " +
           std::to_string(plan.cost);
  return "";
}

/// Plans every pair of layouts of `shape` on `mesh` and checks each plan
/// against the all-pairs search. Returns the number of pairs with a chain.
size_t checkAllPairs(const Mesh &mesh, const Shape &shape, int64_t elementBytes,
                     std::shared_ptr<const RedistributionCostModel> model) {
  AllPairs expected(mesh, shape, elementBytes, *model);
  RedistributionPlanner planner(model);
  size_t reachable = 0;
  const std::vector<Layout> &layouts = expected.layouts;
  for (size_t i = 0; i < layouts.size(); ++i) {
    for (size_t j = 0; j < layouts.size(); ++j) {
      const Layout &from = layouts[i], &to = layouts[j];
      std::string where = "on " + mesh.toString() + " from " + from.toString() +
                          " to " + to.toString();
      ValueOrError<RedistributionPlan> plan =
          planner.plan(mesh, shape, elementBytes, from, to);
      double best = expected.cost[i][j];
      if (best == kInfinity) {
        EXPECT_FALSE(plan.ok()) << where << ": planned\n" << plan->toString();
        continue;
      }
      ++reachable;
      if (!plan.ok()) {
        ADD_FAILURE() << where << ": " << plan.error();
        continue;
      }
      EXPECT_EQ(checkReplay(mesh, shape, from, to, *plan), "")
          << where << "\n"
          << plan->toString();
      EXPECT_NEAR(plan->cost, best, 1e-9 * best + 1e-18) << where << "\n"
                                                         << plan->toString();
      if (i == j)
        EXPECT_TRUE(plan->steps.empty()) << where;
    }
  }
  return reachable;
}

/// A model that makes one axis's links slow: data moved over a group that
/// includes `slowAxis` costs `factor` times more. It checks that the search
/// follows whatever model it is given, not the α–β shape of costs.
class SlowAxisCostModel : public RedistributionCostModel {
public:
  SlowAxisCostModel(std::string slowAxis, double factor)
      : slowAxis(std::move(slowAxis)), factor(factor) {}

  double getStepCost(const StepCostQuery &query) const override {
    double base = inner.getStepCost(query);
    bool slow = std::find(query.axes.begin(), query.axes.end(), slowAxis) !=
                query.axes.end();
    return slow ? base * factor : base;
  }
  std::string getName() const override { return "slow-axis"; }

private:
  AlphaBetaCostModel inner{1e-6, 1e9};
  std::string slowAxis;
  double factor;
};

//===----------------------------------------------------------------------===//
// Exhaustive checks
//===----------------------------------------------------------------------===//

// Bandwidth-bound (large elements) and latency-bound (small ones) regimes
// pick different chains, so each mesh is checked in both.
constexpr int64_t kLargeElement = int64_t(1) << 20;
constexpr int64_t kSmallElement = 8;

std::shared_ptr<const RedistributionCostModel> alphaBeta() {
  return std::make_shared<AlphaBetaCostModel>(1e-6, 1e9);
}

TEST(RedistributionTest, AllPairsOneAxis) {
  Mesh mesh = makeMesh({{"x", 2}});
  for (Shape shape : {Shape{4}, Shape{4, 6}, Shape{2, 3}, Shape{8, 4, 2}})
    for (int64_t bytes : {kLargeElement, kSmallElement})
      EXPECT_GT(checkAllPairs(mesh, shape, bytes, alphaBeta()), 0u);
}

TEST(RedistributionTest, AllPairsTwoAxes) {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 2}});
  for (Shape shape : {Shape{4}, Shape{4, 6}, Shape{4, 4}, Shape{2, 2},
                      Shape{4, 2, 2}, Shape{8, 4, 2}})
    for (int64_t bytes : {kLargeElement, kSmallElement})
      EXPECT_GT(checkAllPairs(mesh, shape, bytes, alphaBeta()), 0u);
}

TEST(RedistributionTest, AllPairsUnequalAxes) {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 3}});
  for (Shape shape : {Shape{6}, Shape{4, 6}, Shape{6, 6}, Shape{12, 2}})
    for (int64_t bytes : {kLargeElement, kSmallElement})
      EXPECT_GT(checkAllPairs(mesh, shape, bytes, alphaBeta()), 0u);
}

TEST(RedistributionTest, AllPairsThreeAxes) {
  Mesh mesh = makeMesh({{"a", 2}, {"b", 2}, {"c", 2}});
  for (Shape shape : {Shape{8}, Shape{8, 4}})
    for (int64_t bytes : {kLargeElement, kSmallElement})
      EXPECT_GT(checkAllPairs(mesh, shape, bytes, alphaBeta()), 0u);
  // Rank 3 has 140 layouts (19,600 pairs): one regime keeps it quick.
  EXPECT_GT(checkAllPairs(mesh, {8, 4, 2}, kLargeElement, alphaBeta()), 0u);
}

TEST(RedistributionTest, AllPairsWithAPluggedModel) {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 2}});
  auto model = std::make_shared<SlowAxisCostModel>("x", 50.0);
  EXPECT_GT(checkAllPairs(mesh, {4, 4}, kLargeElement, model), 0u);
  EXPECT_GT(checkAllPairs(mesh, {4, 2, 2}, kLargeElement, model), 0u);
}

TEST(RedistributionTest, AllPairsWithASizeOneAxis) {
  // Size-1 axes make zero-cost cycles (slice then gather); the search must
  // still end and prefer the shortest chain.
  Mesh mesh = makeMesh({{"x", 2}, {"u", 1}});
  EXPECT_GT(checkAllPairs(mesh, {4, 2}, kLargeElement, alphaBeta()), 0u);
}

//===----------------------------------------------------------------------===//
// Named chains
//===----------------------------------------------------------------------===//

/// Named chains on a 64 MiB f32 tensor, where the default α–β model is
/// bandwidth-bound (as reshards of real activations are).
struct NamedCase : public ::testing::Test {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 2}});
  Shape shape = {4096, 4096};
  RedistributionPlanner planner;

  RedistributionPlan plan(const Layout &from, const Layout &to) {
    ValueOrError<RedistributionPlan> result =
        planner.plan(mesh, shape, 4, from, to);
    EXPECT_TRUE(result.ok()) << result.error();
    if (!result)
      return {};
    EXPECT_EQ(checkReplay(mesh, shape, from, to, *result), "");
    return *result;
  }
};

TEST_F(NamedCase, PartialToSplitIsOneReduceScatter) {
  RedistributionPlan p =
      plan(makeLayout(mesh, {{}, {}}, {"x"}), makeLayout(mesh, {{"x"}, {}}));
  ASSERT_EQ(p.steps.size(), 1u) << p.toString();
  EXPECT_EQ(p.steps[0].kind, CollectiveKind::ReduceScatter);
  EXPECT_EQ(p.steps[0].dim, 0u);
  EXPECT_EQ(p.steps[0].axes, Axes{"x"});
}

TEST_F(NamedCase, PartialToReplicatedIsOneAllReduce) {
  RedistributionPlan p =
      plan(makeLayout(mesh, {{}, {"y"}}, {"x"}), makeLayout(mesh, {{}, {"y"}}));
  ASSERT_EQ(p.steps.size(), 1u) << p.toString();
  EXPECT_EQ(p.steps[0].kind, CollectiveKind::AllReduce);
  EXPECT_EQ(p.steps[0].axes, Axes{"x"});
}

TEST_F(NamedCase, SplitToReplicatedIsOneAllGather) {
  RedistributionPlan p =
      plan(makeLayout(mesh, {{}, {"x"}}), makeLayout(mesh, {{}, {}}));
  ASSERT_EQ(p.steps.size(), 1u) << p.toString();
  EXPECT_EQ(p.steps[0].kind, CollectiveKind::AllGather);
  EXPECT_EQ(p.steps[0].dim, 1u);
  EXPECT_EQ(p.steps[0].axes, Axes{"x"});
}

TEST_F(NamedCase, MultiAxisSplitToReplicatedIsAllGathers) {
  // On a ring, gathering `y` then `x` takes 1 + 1 latency steps where
  // gathering both at once takes 3, for the same bytes; either way only
  // gathers run.
  RedistributionPlan p =
      plan(makeLayout(mesh, {{"x", "y"}, {}}), makeLayout(mesh, {{}, {}}));
  ASSERT_FALSE(p.steps.empty());
  for (const RedistributionStep &step : p.steps)
    EXPECT_EQ(step.kind, CollectiveKind::AllGather) << p.toString();
}

TEST_F(NamedCase, ReplicatedToSplitIsOneFreeAllSlice) {
  RedistributionPlan p =
      plan(makeLayout(mesh, {{}, {}}), makeLayout(mesh, {{"y"}, {"x"}}));
  ASSERT_FALSE(p.steps.empty());
  for (const RedistributionStep &step : p.steps)
    EXPECT_EQ(step.kind, CollectiveKind::AllSlice) << p.toString();
  EXPECT_EQ(p.cost, 0.0);
  // One slice per dim: a slice names one dim.
  EXPECT_EQ(p.steps.size(), 2u) << p.toString();
}

TEST_F(NamedCase, MovingAnAxisToAnotherDimIsOneAllToAll) {
  RedistributionPlan p =
      plan(makeLayout(mesh, {{"x"}, {}}), makeLayout(mesh, {{}, {"x"}}));
  ASSERT_EQ(p.steps.size(), 1u) << p.toString();
  EXPECT_EQ(p.steps[0].kind, CollectiveKind::AllToAll);
  EXPECT_EQ(p.steps[0].dim, 1u);
  EXPECT_EQ(p.steps[0].concatDim, 0u);
}

TEST_F(NamedCase, ReorderingAxesWithinADimIsExact) {
  Layout from = makeLayout(mesh, {{"x", "y"}, {}});
  Layout to = makeLayout(mesh, {{"y", "x"}, {}});
  RedistributionPlan p = plan(from, to);
  EXPECT_FALSE(p.steps.empty());
  // Cheaper than gathering everything and slicing again.
  RedistributionPlan gatherAll = plan(from, makeLayout(mesh, {{}, {}}));
  EXPECT_LT(p.cost, gatherAll.cost) << p.toString();
}

TEST_F(NamedCase, EqualLayoutsNeedNoStep) {
  Layout layout = makeLayout(mesh, {{"y"}, {}}, {"x"});
  RedistributionPlan p = plan(layout, layout);
  EXPECT_TRUE(p.steps.empty());
  EXPECT_EQ(p.cost, 0.0);
}

TEST_F(NamedCase, PartialDestinationNeedsAPartialSource) {
  ValueOrError<RedistributionPlan> p =
      planner.plan(mesh, shape, 4, makeLayout(mesh, {{}, {}}),
                   makeLayout(mesh, {{}, {}}, {"x"}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), "destination [[], []], partial = [\"x\"] is partial "
                       "over mesh axis `x` but source [[], []] is not; no "
                       "collective creates a pending sum");
}

TEST_F(NamedCase, LayoutsThatDoNotFitTheShapeFail) {
  ValueOrError<RedistributionPlan> p =
      planner.plan(mesh, {6, 8}, 4, makeLayout(mesh, {{"x", "y"}, {}}),
                   makeLayout(mesh, {{}, {}}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), "source layout [[\"x\", \"y\"], []]: mesh axes "
                       "[`x`, `y`] (4 blocks) do not divide dim 0 (size 6)");
  p = planner.plan(mesh, {8}, 4, makeLayout(mesh, {{}, {}}),
                   makeLayout(mesh, {{}, {}}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), "source layout [[], []]: layout of rank 2 does not "
                       "fit a tensor of rank 1");
}

TEST_F(NamedCase, LayoutsOfAnotherMeshFail) {
  Mesh other = makeMesh({{"z", 2}});
  ValueOrError<RedistributionPlan> p =
      planner.plan(mesh, shape, 4, makeLayout(other, {{"z"}, {}}),
                   makeLayout(mesh, {{}, {}}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), "source layout [[\"z\"], []]: layout names `z`, which "
                       "is not an axis of mesh {x:2, y:2}");
}

TEST_F(NamedCase, BadSizesFail) {
  Layout replicated = makeLayout(mesh, {{}, {}});
  ValueOrError<RedistributionPlan> p =
      planner.plan(mesh, shape, 0, replicated, replicated);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), "element size must be at least 1 byte, got 0");
  p = planner.plan(mesh, {8, -1}, 4, replicated, replicated);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), "dim 1 has size -1; sizes must be at least 0");
}

TEST_F(NamedCase, RepeatedRequestsAreCached) {
  Layout from = makeLayout(mesh, {{"x"}, {"y"}});
  Layout to = makeLayout(mesh, {{"y"}, {"x"}});
  RedistributionPlan first = plan(from, to);
  EXPECT_EQ(planner.getNumSearches(), 1u);
  EXPECT_EQ(planner.getNumCacheHits(), 0u);
  RedistributionPlan second = plan(from, to);
  EXPECT_EQ(planner.getNumSearches(), 1u);
  EXPECT_EQ(planner.getNumCacheHits(), 1u);
  EXPECT_EQ(first.toString(), second.toString());
  // Another element size is another question.
  ASSERT_TRUE(planner.plan(mesh, shape, 8, from, to).ok());
  EXPECT_EQ(planner.getNumSearches(), 2u);
}

//===----------------------------------------------------------------------===//
// The α–β model
//===----------------------------------------------------------------------===//

TEST(AlphaBetaCostModelTest, PricesRingCollectives) {
  Mesh mesh = makeMesh({{"x", 4}});
  AlphaBetaCostModel model(2.0, 10.0); // 2 s per step, 10 bytes/s.
  Layout split = makeLayout(mesh, {{"x"}});
  Layout replicated = makeLayout(mesh, {{}});
  Layout partial = makeLayout(mesh, {{}}, {"x"});
  Shape local = {2}, global = {8};
  Axes axes = {"x"};
  auto price = [&](CollectiveKind kind, const Layout &before,
                   const Layout &after, const Shape &shapeBefore,
                   const Shape &shapeAfter) {
    StepCostQuery query{mesh,
                        kind,
                        0,
                        0,
                        axes,
                        4,
                        before,
                        after,
                        shapeBefore,
                        shapeAfter,
                        bytesOf(shapeBefore, 10),
                        bytesOf(shapeAfter, 10)};
    return model.getStepCost(query);
  };
  // 3 steps of 2 s; 3/4 of the 80 gathered bytes at 10 bytes/s.
  EXPECT_DOUBLE_EQ(
      price(CollectiveKind::AllGather, split, replicated, local, global),
      3 * 2.0 + 0.75 * 80 / 10);
  EXPECT_DOUBLE_EQ(
      price(CollectiveKind::ReduceScatter, partial, split, global, local),
      3 * 2.0 + 0.75 * 80 / 10);
  EXPECT_DOUBLE_EQ(
      price(CollectiveKind::AllReduce, partial, replicated, global, global),
      6 * 2.0 + 1.5 * 80 / 10);
  EXPECT_DOUBLE_EQ(
      price(CollectiveKind::AllSlice, replicated, split, global, local), 0.0);
}

} // namespace

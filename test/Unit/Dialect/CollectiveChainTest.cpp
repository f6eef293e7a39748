//===- CollectiveChainTest.cpp - Planned chains run on simulated ranks ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The numeric proof of the redistribution planner and of the ops
// `dist-lower-reshards` builds. For every pair of layouts of small f64
// tensors on {x:2, y:2} (partial sources included, and every destination a
// chain reaches), it builds an SPMD function whose argument carries the
// source layout and whose result carries the destination layout, fills it
// with `buildCollectiveChain` (what the pass emits between its casts), and
// runs it in the reference interpreter over the mesh's four ranks: the
// interpreter cuts the global input into the source layout's blocks and
// reassembles the result from the destination layout's blocks (summing over
// partial axes, checking replicas agree), so the result must equal the input
// bit for bit.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/CollectiveChain.h"
#include "loom/Analysis/Layout/Redistribution.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/InitAllDialects.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <functional>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

using Axes = Layout::AxisList;

/// Every layout of `shape` on `mesh` (each axis unused, partial or splitting
/// a dim, every order within a dim) that fits the shape.
std::vector<Layout> allLayouts(const Mesh &mesh,
                               const std::vector<int64_t> &shape) {
  std::vector<Layout> result;
  size_t numAxes = mesh.getNumAxes(), rank = shape.size();
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
    std::function<void(size_t)> order = [&](size_t dim) {
      if (dim == rank) {
        Layout layout = *Layout::get(mesh, dims, partial);
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

class CollectiveChainTest : public ::testing::Test {
protected:
  CollectiveChainTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Builds `module { dist.mesh @m; func @reshard(local(from)) ->
  /// local(to) }` whose body is the plan's chain.
  OwningOpRef<ModuleOp> buildModule(const Mesh &mesh,
                                    const std::vector<int64_t> &shape,
                                    const Layout &from, const Layout &to,
                                    const RedistributionPlan &plan) {
    OpBuilder builder(&context);
    Location loc = builder.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    SmallVector<int64_t> meshShape;
    SmallVector<StringRef> axisNames;
    for (const Mesh::Axis &axis : mesh.getAxes()) {
      meshShape.push_back(axis.size);
      axisNames.push_back(axis.name);
    }
    MeshOp::create(builder, loc, "m", builder.getDenseI64ArrayAttr(meshShape),
                   builder.getStrArrayAttr(axisNames));
    auto meshRef = FlatSymbolRefAttr::get(&context, "m");
    auto localType = [&](const Layout &layout) {
      return RankedTensorType::get(*layout.getLocalShape(mesh, shape),
                                   builder.getF64Type());
    };
    auto func = func::FuncOp::create(
        builder, loc, "reshard",
        builder.getFunctionType({localType(from)}, {localType(to)}));
    func.setArgAttr(0, interp::kLayoutAttrName, LayoutAttr::get(meshRef, from));
    func.setResultAttr(0, interp::kLayoutAttrName,
                       LayoutAttr::get(meshRef, to));
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToEnd(body);
    Value result = buildCollectiveChain(builder, loc, body->getArgument(0),
                                        mesh, meshRef, plan);
    func::ReturnOp::create(builder, loc, result);
    return module;
  }

  /// Plans every reachable pair of layouts of `shape` on `mesh`, runs each
  /// chain and checks the result equals the input. Returns the pair count.
  size_t checkAllPairs(const Mesh &mesh, const std::vector<int64_t> &shape) {
    RedistributionPlanner planner;
    interp::Shape globalShape(shape.begin(), shape.end());
    interp::HostTensor input =
        interp::HostTensor::allocate(interp::StorageKind::F64, globalShape);
    double *data = input.mutableData<double>();
    for (int64_t i = 0; i < input.getNumElements(); ++i)
      data[i] = 1.0 + static_cast<double>(i); // Distinct, exact sums.

    std::vector<Layout> layouts = allLayouts(mesh, shape);
    size_t checked = 0;
    for (const Layout &from : layouts) {
      for (const Layout &to : layouts) {
        ValueOrError<RedistributionPlan> plan =
            planner.plan(mesh, shape, 8, from, to);
        // Exactly the destinations partial over no axis the source is not
        // partial over are reachable.
        bool reachable = std::includes(
            from.getPartialAxes().begin(), from.getPartialAxes().end(),
            to.getPartialAxes().begin(), to.getPartialAxes().end(),
            [&](const std::string &a, const std::string &b) {
              return *mesh.findAxis(a) < *mesh.findAxis(b);
            });
        EXPECT_EQ(plan.ok(), reachable)
            << "from " << from.toString() << " to " << to.toString();
        if (!plan)
          continue;
        std::string where = "from " + from.toString() + " to " + to.toString() +
                            ":\n" + plan->toString();
        OwningOpRef<ModuleOp> module =
            buildModule(mesh, shape, from, to, *plan);
        if (failed(verify(*module))) {
          ADD_FAILURE() << where << "\nthe module does not verify";
          continue;
        }
        auto func = module->lookupSymbol<func::FuncOp>("reshard");
        interp::Interpreter interpreter(
            func, interp::KernelRegistry::getDefault(), interp::RunOptions());
        if (std::optional<std::string> error = interpreter.prepare()) {
          ADD_FAILURE() << where << "\n" << *error;
          continue;
        }
        EXPECT_EQ(interpreter.getNumRanks(), mesh.getNumDevices());
        std::vector<interp::HostTensor> results;
        if (std::optional<std::string> error =
                interpreter.run({input}, results)) {
          ADD_FAILURE() << where << "\n" << *error;
          continue;
        }
        EXPECT_EQ(results.size(), 1u) << where;
        if (results.size() == 1)
          EXPECT_TRUE(results[0].sameValues(input)) << where;
        ++checked;
      }
    }
    return checked;
  }

  MLIRContext context;
};

TEST_F(CollectiveChainTest, EveryPairOfRankTwoLayoutsRoundTrips) {
  Mesh mesh = *Mesh::get({{"x", 2}, {"y", 2}});
  // 4x4 fits every layout of two axes; 8x2 forbids both on dim 1.
  EXPECT_EQ(checkAllPairs(mesh, {4, 4}), 223u);
  EXPECT_GT(checkAllPairs(mesh, {8, 2}), 0u);
}

TEST_F(CollectiveChainTest, EveryPairOfRankThreeLayoutsRoundTrips) {
  Mesh mesh = *Mesh::get({{"x", 2}, {"y", 2}});
  EXPECT_GT(checkAllPairs(mesh, {4, 2, 2}), 0u);
}

TEST_F(CollectiveChainTest, UnequalAxesRoundTrip) {
  Mesh mesh = *Mesh::get({{"x", 2}, {"y", 3}});
  EXPECT_GT(checkAllPairs(mesh, {6, 6}), 0u);
}

TEST_F(CollectiveChainTest, ThreeAxesRoundTrip) {
  Mesh mesh = *Mesh::get({{"a", 2}, {"b", 2}, {"c", 2}});
  EXPECT_GT(checkAllPairs(mesh, {8, 4}), 0u);
}

TEST_F(CollectiveChainTest, AWrongChainIsCaught) {
  // The check must fail when the chain is wrong: a split that is gathered
  // over the wrong axis, declared as the destination anyway.
  Mesh mesh = *Mesh::get({{"x", 2}, {"y", 2}});
  Layout from = *Layout::get(mesh, {{"x"}, {}});
  Layout to = *Layout::get(mesh, {{"y"}, {}});
  RedistributionPlan wrong;
  wrong.steps.push_back(RedistributionStep{CollectiveKind::AllToAll,
                                           1,
                                           0,
                                           {"x"},
                                           *Layout::get(mesh, {{}, {"x"}}),
                                           0});
  wrong.steps.push_back(
      RedistributionStep{CollectiveKind::AllToAll, 0, 1, {"x"}, from, 0});
  OwningOpRef<ModuleOp> module = buildModule(mesh, {4, 4}, from, to, wrong);
  ASSERT_TRUE(succeeded(verify(*module)));
  auto func = module->lookupSymbol<func::FuncOp>("reshard");
  interp::Interpreter interpreter(func, interp::KernelRegistry::getDefault(),
                                  interp::RunOptions());
  ASSERT_EQ(interpreter.prepare(), std::nullopt);
  interp::HostTensor input =
      interp::HostTensor::allocate(interp::StorageKind::F64, {4, 4});
  for (int64_t i = 0; i < 16; ++i)
    input.mutableData<double>()[i] = 1.0 + static_cast<double>(i);
  std::vector<interp::HostTensor> results;
  std::optional<std::string> error = interpreter.run({input}, results);
  // Either the replicas disagree (an error) or the value is wrong.
  if (!error) {
    ASSERT_EQ(results.size(), 1u);
    EXPECT_FALSE(results[0].sameValues(input));
  }
}

} // namespace

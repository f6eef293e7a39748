//===- TestPartitionOp.cpp - Run the loss/embedding partitioners ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `-test-partition-op` runs the per-op rewrites of dist-partition-spmd for
// the loss and embedding ops (their PartitionableOpInterface models,
// lib/Dialect/Dist/ExternalModels/PartitionLoss.cpp and
// PartitionEmbedding.cpp) on their own, so they are
// tested without the pass that will call them. It takes a function in the
// form dist-insert-reshards leaves when no reshard is needed: global types,
// `dist.layout` on the arguments and results, `dist.strategy` on the ops.
//
//   1. Before changing anything, derive every strategy op's rule, layouts
//      and global types (rules are computed from global types).
//   2. Give each argument with a `dist.layout` its local type.
//   3. Walk the ops in order: a loss or embedding op goes to its
//      interface's rewrite; any other op with a strategy gets the local result
//      types of its layouts (the ops whose split needs nothing more).
//   4. Give the function the local result types.
//
// Functions without any `dist.strategy` are left alone (a single-device
// reference next to the program under test).
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Interfaces/PartitionableOpInterface.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <map>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {
/// What step 1 records for one strategy op.
struct PlannedOp {
  OpShardingRule rule;
  FactorAxes factorAxes;
  OpLayouts layouts;
  SmallVector<RankedTensorType> operandTypes, resultTypes;
};

/// The local type of `type` under `layout`, or null (with an error on `op`).
static RankedTensorType getLocalType(Operation *op, const Mesh &mesh,
                                     RankedTensorType type,
                                     const Layout &layout) {
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  auto local = layout.getLocalShape(mesh, shape);
  if (!local) {
    op->emitOpError() << local.error();
    return {};
  }
  return RankedTensorType::get(*local, type.getElementType());
}

struct TestPartitionOpPass
    : public PassWrapper<TestPartitionOpPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPartitionOpPass)

  StringRef getArgument() const final { return "test-partition-op"; }
  StringRef getDescription() const final {
    return "Apply the loss and embedding partitioners of dist-partition-spmd "
           "to functions with dist.strategy ops (test only)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, DistDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshOp meshOp;
    module.walk([&](MeshOp op) { meshOp = op; });
    if (!meshOp)
      return;
    ValueOrError<Mesh> mesh = meshOp.getMesh();
    if (!mesh) {
      meshOp.emitOpError() << mesh.error();
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(runOnFunction(func, meshOp, *mesh)))
        return signalPassFailure();
  }

  LogicalResult runOnFunction(func::FuncOp func, MeshOp meshOp,
                              const Mesh &mesh) {
    // Step 1.
    std::map<Operation *, PlannedOp> planned;
    WalkResult walk = func.walk([&](Operation *op) {
      auto strategy = op->getAttrOfType<StrategyAttr>("dist.strategy");
      auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
      if (!strategy || !ruleOp)
        return WalkResult::advance();
      PlannedOp plan{ruleOp.getShardingRule(), strategy.getAllFactorAxes(),
                     {}, {}, {}};
      auto layouts = deriveOpLayouts(plan.rule, mesh, plan.factorAxes,
                                     strategy.getPartialAxes());
      if (!layouts) {
        op->emitOpError() << layouts.error();
        return WalkResult::interrupt();
      }
      plan.layouts = *layouts;
      for (Type type : op->getOperandTypes())
        plan.operandTypes.push_back(dyn_cast<RankedTensorType>(type));
      for (Type type : op->getResultTypes())
        plan.resultTypes.push_back(cast<RankedTensorType>(type));
      planned.emplace(op, std::move(plan));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (planned.empty())
      return success();

    // Step 2.
    for (BlockArgument arg : func.getArguments()) {
      auto attr = func.getArgAttrOfType<LayoutAttr>(arg.getArgNumber(),
                                                    "dist.layout");
      if (!attr)
        continue;
      auto layout = attr.toLayout(mesh);
      if (!layout)
        return func.emitOpError() << layout.error();
      RankedTensorType local = getLocalType(
          func, mesh, cast<RankedTensorType>(arg.getType()), *layout);
      if (!local)
        return failure();
      arg.setType(local);
    }

    // Step 3.
    for (Operation &op : llvm::make_early_inc_range(func.getOps())) {
      auto it = planned.find(&op);
      if (it == planned.end())
        continue;
      PlannedOp &plan = it->second;
      OpPartitionContext context{meshOp,           mesh,
                                 plan.rule,        plan.factorAxes,
                                 plan.layouts,     plan.operandTypes,
                                 plan.resultTypes};
      OpBuilder builder(&op);
      if (isa<CrossEntropyOp, CrossEntropyGradOp, EmbeddingOp,
              EmbeddingGradOp>(op)) {
        if (failed(cast<PartitionableOpInterface>(op).partition(context,
                                                                builder)))
          return failure();
        continue;
      }
      op.removeAttr("dist.strategy");
      for (auto [result, type, layout] : llvm::zip_equal(
               op.getResults(), plan.resultTypes, plan.layouts.results)) {
        RankedTensorType local = getLocalType(&op, mesh, type, layout);
        if (!local)
          return failure();
        result.setType(local);
      }
    }

    // Step 4.
    Block &entry = func.getBody().front();
    func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                   entry.getTerminator()->getOperandTypes()));
    return success();
  }
};
} // namespace

void mlir::loom::test::registerTestPartitionOpPass() {
  PassRegistration<TestPartitionOpPass>();
}

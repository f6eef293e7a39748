//===- VerifySharding.cpp - dist-verify-sharding --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Ends the sharding phase by checking what the partition phase relies on
// after a search, reporting every violation before failing:
//
//   1. the module holds exactly one `dist.mesh`, and a `#dist.plan` (the
//      search's choices and prediction) as `dist.plan`;
//   2. in the entry function (`entry`, else `forward`), every forward op
//      (the first op of each `loom.fwd` id, or every op when there are no
//      ids) that has a sharding rule carries a `dist.strategy` naming that
//      mesh, and its factor axes and partial axes are valid for the rule.
//
// The pass changes nothing.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Strategy/OpLayouts.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kPlanAttrName;
using ::mlir::loom::kStrategyAttrName;

namespace mlir::loom::dist {
#define GEN_PASS_DEF_VERIFYSHARDINGPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {
struct VerifyShardingPass
    : mlir::loom::dist::impl::VerifyShardingPassBase<VerifyShardingPass> {
  using VerifyShardingPassBase::VerifyShardingPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;

    // 1. The mesh and the search's summary.
    auto meshOps = llvm::to_vector(module.getOps<MeshOp>());
    if (meshOps.size() != 1) {
      module.emitError() << "sharding contract: expected one dist.mesh, found "
                         << meshOps.size();
      return signalPassFailure();
    }
    MeshOp meshOp = meshOps.front();
    ValueOrError<Mesh> mesh = meshOp.getMesh();
    if (!mesh) {
      meshOp.emitOpError() << mesh.error();
      return signalPassFailure();
    }
    if (!module->getAttrOfType<PlanAttr>(kPlanAttrName)) {
      module.emitError() << "sharding contract: the module has no `"
                         << kPlanAttrName
                         << "` #dist.plan (run dist-search-strategy)";
      ok = false;
    }

    // 2. A valid strategy on every forward op with a rule.
    auto func = module.lookupSymbol<func::FuncOp>(entryName);
    if (!func)
      func = module.lookupSymbol<func::FuncOp>("forward");
    if (!func || func.isExternal()) {
      module.emitError() << "sharding contract: no function `" << entryName
                         << "` or `forward` with a body";
      return signalPassFailure();
    }
    llvm::DenseSet<int64_t> seenForward;
    for (Operation &op : func.getBody().front()) {
      auto ruleOp = dyn_cast<ShardingRuleOpInterface>(&op);
      if (!ruleOp)
        continue;
      if (auto id = op.getAttrOfType<IntegerAttr>(kFwdAttrName))
        if (!seenForward.insert(id.getInt()).second)
          continue; // Backward and optimizer ops follow their forward op.
      auto strategy = op.getAttrOfType<StrategyAttr>(kStrategyAttrName);
      if (!strategy) {
        op.emitOpError() << "sharding contract: forward op has no "
                         << kStrategyAttrName;
        ok = false;
        continue;
      }
      if (strategy.getMesh().getValue() != meshOp.getSymName()) {
        op.emitOpError() << "sharding contract: strategy names mesh "
                         << strategy.getMesh() << ", not @"
                         << meshOp.getSymName();
        ok = false;
        continue;
      }
      OpShardingRule rule = ruleOp.getShardingRule();
      FactorAxes axes = strategy.getAllFactorAxes();
      std::string error = verifyFactorAxes(rule, *mesh, axes);
      if (error.empty())
        error = verifyPartialAxes(rule, *mesh, axes, strategy.getPartialAxes());
      if (!error.empty()) {
        op.emitOpError() << "sharding contract: invalid strategy: " << error;
        ok = false;
      }
    }
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace

//===- TestStripDistribution.cpp - Back to the single-device program ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `-test-strip-distribution` turns a global program with layouts (the form
// dist-lower-reshards leaves, which dist-partition-spmd consumes) into the
// plain single-device program it stands for (the form dist-insert-reshards
// leaves works too), so that a numeric test can run
// the very function it partitions on one rank as the reference:
//
//   1. every reshard, lowered (a cast to the local type, collectives, a cast
//      back) or not (`dist.reshard`), is replaced by the global value it
//      started from: a reshard changes the layout, never the global value;
//   2. `dist.strategy` and `dist.layout` attributes are dropped, on ops and
//      on function arguments and results.
//
// The `dist.mesh` stays; nothing names it any more, so the interpreter runs
// the function on one rank.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "loom/Dialect/Dist/IR/DistOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::loom;

static constexpr llvm::StringLiteral kLayout = "dist.layout";
static constexpr llvm::StringLiteral kStrategy = "dist.strategy";

/// Replaces the reshard chains of `func` by their global inputs.
static LogicalResult stripChains(func::FuncOp func) {
  // Values inside a chain: casts to local and the collectives after them.
  llvm::DenseSet<Value> local;
  SmallVector<Operation *> dead;
  for (Operation &op : func.getBody().getOps()) {
    if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
      // Not lowered yet: the same global value.
      reshard.getResult().replaceAllUsesWith(reshard.getInput());
      dead.push_back(reshard);
      continue;
    }
    auto cast = dyn_cast<UnrealizedConversionCastOp>(op);
    if (cast && cast->hasAttr(kLayout) && cast->getNumOperands() == 1) {
      Value input = cast.getOperand(0);
      if (!local.contains(input)) {
        local.insert(cast.getResult(0));
      } else {
        // The end of a chain: walk back to its start.
        Value start = input;
        while (
            !isa_and_nonnull<UnrealizedConversionCastOp>(start.getDefiningOp()))
          start = start.getDefiningOp()->getOperand(0);
        cast.getResult(0).replaceAllUsesWith(
            start.getDefiningOp()->getOperand(0));
      }
      dead.push_back(cast);
      continue;
    }
    if (op.getName().getDialectNamespace() == "dist" &&
        op.getNumOperands() == 1 && op.getNumResults() == 1 &&
        local.contains(op.getOperand(0))) {
      local.insert(op.getResult(0));
      dead.push_back(&op);
    }
  }
  for (Operation *op : llvm::reverse(dead)) {
    if (!op->use_empty())
      return op->emitOpError("is a reshard chain value used outside its "
                             "chain");
    op->erase();
  }
  return success();
}

namespace {
struct TestStripDistributionPass
    : public PassWrapper<TestStripDistributionPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestStripDistributionPass)

  StringRef getArgument() const final { return "test-strip-distribution"; }
  StringRef getDescription() const final {
    return "Turn a global program with layouts back into the single-device "
           "program (test only)";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(stripChains(func)))
        return signalPassFailure();
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.removeArgAttr(i, StringAttr::get(&getContext(), kLayout));
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        func.removeResultAttr(i, StringAttr::get(&getContext(), kLayout));
      func.walk([](Operation *op) {
        op->removeAttr(kStrategy);
        op->removeAttr(kLayout);
      });
    }
  }
};
} // namespace

void mlir::loom::test::registerTestStripDistributionPass() {
  PassRegistration<TestStripDistributionPass>();
}

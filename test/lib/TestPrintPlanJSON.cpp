//===- TestPrintPlanJSON.cpp - Print a module's partition plan ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `-test-print-plan-json` writes writePlanJSON's dump of the module to
// stdout, so that lit tests can check the plan of hand-written IR at any
// point of the partition phase (with reshards, or with lowered collectives).
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "loom/Dialect/Dist/Transforms/PlanJSON.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct TestPrintPlanJSONPass
    : public PassWrapper<TestPrintPlanJSONPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintPlanJSONPass)

  StringRef getArgument() const final { return "test-print-plan-json"; }
  StringRef getDescription() const final {
    return "Print the module's partition plan as JSON (test only)";
  }

  void runOnOperation() override {
    if (failed(loom::dist::writePlanJSON(getOperation(), llvm::outs())))
      signalPassFailure();
  }
};
} // namespace

void mlir::loom::test::registerTestPrintPlanJSONPass() {
  PassRegistration<TestPrintPlanJSONPass>();
}

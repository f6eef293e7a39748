//===- TestPrintCosts.cpp - Print every op's cost -------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `-test-print-costs` prints one line per op that implements
// CostOpInterface, for the op's global shapes:
//
//   @<function> <op name>: <class> flops=F read=R written=W output=O
//
// One FileCheck file with one function per op covers every cost.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "loom/Interfaces/CostOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;

namespace {
struct TestPrintCostsPass
    : public PassWrapper<TestPrintCostsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintCostsPass)

  StringRef getArgument() const final { return "test-print-costs"; }
  StringRef getDescription() const final {
    return "Print the cost of every op for its global shapes (test only)";
  }

  void runOnOperation() override {
    getOperation().walk([&](CostOpInterface op) {
      auto func = op->getParentOfType<func::FuncOp>();
      llvm::outs() << "@" << (func ? func.getSymName() : "?") << " "
                   << op->getName() << ": "
                   << op.getCost(getGlobalShapes(op)) << "\n";
    });
  }
};
} // namespace

void mlir::loom::test::registerTestPrintCostsPass() {
  PassRegistration<TestPrintCostsPass>();
}

//===- TestPrintMemory.cpp - Print the peak memory of each function -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `-test-print-memory` prints dist::analyzeMemory's breakdown of every
// function with a body, one line each:
//
//   @<function> peak=P parameters=A gradients=G optimizer_states=S
//     activations=X other=O
//
// (on one line), so lit tests can check the liveness rules and what
// recompute removes, and compare with `loom-run --report-memory`.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
struct TestPrintMemoryPass
    : public PassWrapper<TestPrintMemoryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintMemoryPass)

  StringRef getArgument() const final { return "test-print-memory"; }
  StringRef getDescription() const final {
    return "Print the peak live bytes of every function and their breakdown "
           "(test only)";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      loom::dist::MemoryBreakdown memory = loom::dist::analyzeMemory(func);
      llvm::outs() << "@" << func.getSymName() << " peak=" << memory.getPeak()
                   << " parameters=" << memory.parameters
                   << " gradients=" << memory.gradients
                   << " optimizer_states=" << memory.optimizerStates
                   << " activations=" << memory.activations
                   << " other=" << memory.other << "\n";
    }
  }
};
} // namespace

void mlir::loom::test::registerTestPrintMemoryPass() {
  PassRegistration<TestPrintMemoryPass>();
}

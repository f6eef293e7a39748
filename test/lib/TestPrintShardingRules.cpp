//===- TestPrintShardingRules.cpp - Print every op's sharding rule --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `-test-print-sharding-rules` prints one line per op that implements
// ShardingRuleOpInterface:
//
//   @<function> <op name>: <rule>
//
// and checks the rule against the op's shapes (each dim equals the product
// of its factors), reporting an error on the op if it does not. One FileCheck
// file with one function per op covers every rule.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"

#include "loom/Interfaces/Cost.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;

namespace {
struct TestPrintShardingRulesPass
    : public PassWrapper<TestPrintShardingRulesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintShardingRulesPass)

  StringRef getArgument() const final { return "test-print-sharding-rules"; }
  StringRef getDescription() const final {
    return "Print the sharding rule of every op (test only)";
  }

  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](ShardingRuleOpInterface op) {
      OpShardingRule rule = op.getShardingRule();
      OpShapes shapes = getGlobalShapes(op);
      SmallVector<ArrayRef<int64_t>> operands(shapes.operands.begin(),
                                              shapes.operands.end());
      SmallVector<ArrayRef<int64_t>> results(shapes.results.begin(),
                                             shapes.results.end());
      std::string error = rule.verify(operands, results);
      if (!error.empty()) {
        std::string printed;
        llvm::raw_string_ostream(printed) << rule;
        op->emitError() << "inconsistent sharding rule " << printed << ": "
                        << error;
        ok = false;
      }
      auto func = op->getParentOfType<func::FuncOp>();
      llvm::outs() << "@" << (func ? func.getSymName() : "?") << " "
                   << op->getName() << ": " << rule << "\n";
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace

void mlir::loom::test::registerTestPrintShardingRulesPass() {
  PassRegistration<TestPrintShardingRulesPass>();
}

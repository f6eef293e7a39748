//===- ParameterGathersTest.cpp - ZeRO-3 gathers per unit, one ahead ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// scheduleParameterGathers on a hand-written step of three one-parameter
// "layers" read forward (layers 0, 1, 2) and back (2, 1, 0): each run of
// ops of one layer gets its own gather, issued before the previous run's
// first op; the turn (layer 2 read twice in a row) keeps one gather.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/ParameterGathers.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::loom::dist;

namespace {

constexpr const char *kStep = R"mlir(
dist.mesh @mesh shape [2] axes ["dp"]
func.func @train_step(
    %w0: tensor<4xf32> {loom.param = #loom.param<"h.0.w", init = zeros, decay = false>},
    %w1: tensor<4xf32> {loom.param = #loom.param<"h.1.w", init = zeros, decay = false>},
    %w2: tensor<4xf32> {loom.param = #loom.param<"h.2.w", init = zeros, decay = false>},
    %x: tensor<4xf32>) -> tensor<4xf32> {
  %g0 = dist.reshard %w0 from <@mesh, [["dp"]]> to <@mesh, [[]]> : tensor<4xf32>
  %g1 = dist.reshard %w1 from <@mesh, [["dp"]]> to <@mesh, [[]]> : tensor<4xf32>
  %g2 = dist.reshard %w2 from <@mesh, [["dp"]]> to <@mesh, [[]]> : tensor<4xf32>
  %a = loom.add %x, %g0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = loom.add %a, %g1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = loom.add %b, %g2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = loom.mul %c, %g2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = loom.mul %d, %g1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %f = loom.mul %e, %g0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}
)mlir";

/// The block as a list: `gather wN` for a reshard of argument N, else the
/// op's name.
std::vector<std::string> describe(func::FuncOp func) {
  std::vector<std::string> ops;
  for (Operation &op : func.getBody().front()) {
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      auto arg = cast<BlockArgument>(reshard.getInput());
      ops.push_back("gather w" + std::to_string(arg.getArgNumber()));
      continue;
    }
    ops.push_back(op.getName().getStringRef().str());
  }
  return ops;
}

TEST(ParameterGathersTest, EachUnitGathersOneUnitAhead) {
  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kStep, &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("train_step");

  ParameterGatherStats stats = scheduleParameterGathers(func);
  EXPECT_EQ(stats.gathersBefore, 3);
  // Units: [0: add] [1: add] [2: add, mul] [1: mul] [0: mul].
  EXPECT_EQ(stats.units, 5);
  EXPECT_EQ(stats.gathersAfter, 5);
  std::vector<std::string> expected = {
      "gather w0", "gather w1",  "loom.add", // unit 0's, then 1's ahead
      "gather w2", "loom.add",               // unit 2's, before unit 1
      "gather w1", "loom.add",   "loom.mul", // unit 3's, before unit 2
      "gather w0", "loom.mul",               // unit 4's, before unit 3
      "loom.mul",  "func.return"};
  EXPECT_EQ(describe(func), expected);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST(ParameterGathersTest, NothingToDoWithoutParameterGathers) {
  DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = loom.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("train_step");
  ParameterGatherStats stats = scheduleParameterGathers(func);
  EXPECT_EQ(stats.gathersBefore, 0);
  EXPECT_EQ(stats.units, 0);
  EXPECT_EQ(describe(func),
            (std::vector<std::string>{"loom.add", "func.return"}));
}

} // namespace

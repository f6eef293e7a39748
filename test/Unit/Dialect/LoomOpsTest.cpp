//===- LoomOpsTest.cpp - Building loom ops from C++ -----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The importers and model builders create ops from C++ and rely on result
// types being inferred; these tests pin down the inferred types and check that
// a bad build is reported through diagnostics, never an assert.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/InitAllDialects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom;

namespace {

/// Builds ops inside one function whose arguments have the given types.
class LoomOpsTest : public ::testing::Test {
protected:
  LoomOpsTest() : builder(&context) {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// Creates `func.func @f(<types>)` and returns its arguments.
  Block::BlockArgListType makeFunction(ArrayRef<Type> argTypes) {
    auto func = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                     builder.getFunctionType(argTypes, {}));
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToEnd(body);
    return body->getArguments();
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(LoomOpsTest, MatmulInfersBroadcastBatchAndTransposedShapes) {
  auto args = makeFunction({f32({4, 1, 32, 64}), f32({3, 128, 64})});
  auto matmul = MatmulOp::create(builder, builder.getUnknownLoc(), args[0],
                                 args[1], /*transpose_lhs=*/false,
                                 /*transpose_rhs=*/true);
  EXPECT_EQ(matmul.getType(), f32({4, 3, 32, 128}));
  EXPECT_TRUE(succeeded(verify(matmul)));
}

TEST_F(LoomOpsTest, MatmulTransposedLhsContractsItsRows) {
  auto args = makeFunction({f32({64, 32}), f32({64, 16})});
  auto matmul = MatmulOp::create(builder, builder.getUnknownLoc(), args[0],
                                 args[1], /*transpose_lhs=*/true,
                                 /*transpose_rhs=*/false);
  EXPECT_EQ(matmul.getType(), f32({32, 16}));
}

TEST_F(LoomOpsTest, AddBroadcastsNumpyStyle) {
  auto args = makeFunction({f32({8, 1, 768}), f32({5, 1})});
  auto add = AddOp::create(builder, builder.getUnknownLoc(), args[0], args[1]);
  EXPECT_EQ(add.getType(), f32({8, 5, 768}));
}

TEST_F(LoomOpsTest, ReduceSumDropsOrKeepsAxes) {
  auto args = makeFunction({f32({8, 128, 768})});
  auto dropped = ReduceSumOp::create(builder, builder.getUnknownLoc(), args[0],
                                     ArrayRef<int64_t>{0, 2},
                                     /*keepdims=*/false);
  auto kept = ReduceSumOp::create(builder, builder.getUnknownLoc(), args[0],
                                  ArrayRef<int64_t>{0, 2}, /*keepdims=*/true);
  auto scalar = ReduceSumOp::create(builder, builder.getUnknownLoc(), args[0],
                                    ArrayRef<int64_t>{0, 1, 2},
                                    /*keepdims=*/false);
  EXPECT_EQ(dropped.getType(), f32({128}));
  EXPECT_EQ(kept.getType(), f32({1, 128, 1}));
  EXPECT_EQ(scalar.getType(), f32({}));
}

TEST_F(LoomOpsTest, InferenceReportsMismatchedContractionThroughDiagnostics) {
  auto args = makeFunction({f32({32, 64}), f32({65, 16})});
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  SmallVector<Type> inferred;
  MatmulOp::Adaptor adaptor(ValueRange{args[0], args[1]});
  LogicalResult result = MatmulOp::inferReturnTypes(
      &context, builder.getUnknownLoc(), adaptor, inferred);
  EXPECT_TRUE(failed(result));
  EXPECT_TRUE(inferred.empty());
  EXPECT_EQ(message, "expects contracted dims of equal size, got lhs dim 1 "
                     "(size 64) and rhs dim 0 (size 65)");
}

TEST_F(LoomOpsTest, VerifierRejectsWrongDeclaredResultType) {
  // A result type that disagrees with inference (as a buggy importer might
  // write) must fail verification, not slip through.
  auto args = makeFunction({f32({2, 3}), f32({3})});
  OperationState state(builder.getUnknownLoc(), AddOp::getOperationName());
  state.addOperands({args[0], args[1]});
  state.addTypes(f32({3, 2}));
  Operation *op = builder.create(state);
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(verify(op)));
}

} // namespace

//===----------------------------------------------------------------------===//
// Reduction, softmax and normalization ops
//===----------------------------------------------------------------------===//

namespace {

TEST_F(LoomOpsTest, ReduceMeanAndMaxDropOrKeepAxes) {
  auto args = makeFunction({f32({8, 128, 768})});
  auto mean = ReduceMeanOp::create(builder, builder.getUnknownLoc(), args[0],
                                   ArrayRef<int64_t>{2}, /*keepdims=*/true);
  auto max = ReduceMaxOp::create(builder, builder.getUnknownLoc(), args[0],
                                 ArrayRef<int64_t>{0, 1}, /*keepdims=*/false);
  EXPECT_EQ(mean.getType(), f32({8, 128, 1}));
  EXPECT_EQ(max.getType(), f32({768}));
}

} // namespace

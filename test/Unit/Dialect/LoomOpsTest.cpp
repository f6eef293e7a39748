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

//===----------------------------------------------------------------------===//
// Elementwise and optimizer ops
//===----------------------------------------------------------------------===//

TEST_F(LoomOpsTest, SubMulDivBroadcastLikeAdd) {
  auto args = makeFunction({f32({8, 1, 768}), f32({5, 1})});
  Location loc = builder.getUnknownLoc();
  EXPECT_EQ(SubOp::create(builder, loc, args[0], args[1]).getType(),
            f32({8, 5, 768}));
  EXPECT_EQ(MulOp::create(builder, loc, args[1], args[0]).getType(),
            f32({8, 5, 768}));
  EXPECT_EQ(DivOp::create(builder, loc, args[0], args[1]).getType(),
            f32({8, 5, 768}));
}

TEST_F(LoomOpsTest, UnaryOpsKeepTheOperandType) {
  Type bf16 = RankedTensorType::get({4, 6}, builder.getBF16Type());
  auto args = makeFunction({bf16});
  Location loc = builder.getUnknownLoc();
  Value x = args[0];
  EXPECT_EQ(NegOp::create(builder, loc, x).getType(), bf16);
  EXPECT_EQ(ExpOp::create(builder, loc, x).getType(), bf16);
  EXPECT_EQ(LogOp::create(builder, loc, x).getType(), bf16);
  EXPECT_EQ(SqrtOp::create(builder, loc, x).getType(), bf16);
  EXPECT_EQ(RsqrtOp::create(builder, loc, x).getType(), bf16);
  EXPECT_EQ(TanhOp::create(builder, loc, x).getType(), bf16);
  EXPECT_EQ(SigmoidOp::create(builder, loc, x).getType(), bf16);
  EXPECT_EQ(ReluOp::create(builder, loc, x).getType(), bf16);
  EXPECT_EQ(SiluOp::create(builder, loc, x).getType(), bf16);
  auto scale = ScaleOp::create(builder, loc, x, builder.getF64FloatAttr(0.125));
  EXPECT_EQ(scale.getType(), bf16);
  auto dropout =
      DropoutOp::create(builder, loc, x, builder.getF64FloatAttr(0.1),
                        builder.getI64IntegerAttr(17));
  EXPECT_EQ(dropout.getType(), bf16);
  EXPECT_TRUE(succeeded(verify(dropout)));
}

TEST_F(LoomOpsTest, GeluAndItsGradientCarryTheApproximation) {
  auto args = makeFunction({f32({8, 3072}), f32({8, 3072})});
  Location loc = builder.getUnknownLoc();
  auto gelu = GeluOp::create(builder, loc, args[0], GeluApproximation::Tanh);
  auto grad =
      GeluGradOp::create(builder, loc, args[1], args[0], gelu.getApproximate());
  EXPECT_EQ(gelu.getType(), f32({8, 3072}));
  EXPECT_EQ(grad.getType(), f32({8, 3072}));
  EXPECT_EQ(grad.getApproximate(), GeluApproximation::Tanh);
  EXPECT_EQ(ReluGradOp::create(builder, loc, args[1], args[0]).getType(),
            f32({8, 3072}));
  EXPECT_EQ(SiluGradOp::create(builder, loc, args[1], args[0]).getType(),
            f32({8, 3072}));
}

TEST_F(LoomOpsTest, CastRejectsAShapeChangeThroughDiagnostics) {
  auto args = makeFunction({f32({4, 8})});
  Location loc = builder.getUnknownLoc();
  auto good = CastOp::create(
      builder, loc, RankedTensorType::get({4, 8}, builder.getI32Type()),
      args[0]);
  EXPECT_TRUE(succeeded(verify(good)));
  auto bad = CastOp::create(
      builder, loc, RankedTensorType::get({32}, builder.getF16Type()), args[0]);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(verify(bad)));
  EXPECT_EQ(message, "'loom.cast' op expects the operand and result to have "
                     "the same shape, got 'tensor<4x8xf32>' and "
                     "'tensor<32xf16>'");
}

TEST_F(LoomOpsTest, SgdUpdateReturnsABufferExactlyWithMomentum) {
  auto args = makeFunction({f32({768}), f32({768}), f32({768})});
  Location loc = builder.getUnknownLoc();
  auto withMomentum = SgdUpdateOp::create(
      builder, loc, args[0], args[1], args[2], builder.getF64FloatAttr(0.1),
      builder.getF64FloatAttr(0.9), builder.getF64FloatAttr(0.0),
      builder.getF64FloatAttr(0.0), builder.getUnitAttr());
  EXPECT_EQ(withMomentum->getNumResults(), 2u);
  EXPECT_EQ(withMomentum.getNewMomentumBuf().getType(), f32({768}));
  EXPECT_TRUE(succeeded(verify(withMomentum)));

  auto plain = SgdUpdateOp::create(
      builder, loc, args[0], args[1], /*momentum_buf=*/Value(),
      builder.getF64FloatAttr(0.1), builder.getF64FloatAttr(0.0),
      builder.getF64FloatAttr(0.0), builder.getF64FloatAttr(0.0),
      /*nesterov=*/nullptr);
  EXPECT_EQ(plain->getNumResults(), 1u);
  EXPECT_EQ(plain.getNewParam().getType(), f32({768}));
  EXPECT_TRUE(succeeded(verify(plain)));
}

TEST_F(LoomOpsTest, SgdInferenceReportsAMissingBufferThroughDiagnostics) {
  auto args = makeFunction({f32({768}), f32({768})});
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  // Momentum 0.9 without a buffer, as a buggy importer might build it.
  SgdUpdateOp::Properties properties;
  properties.lr = builder.getF64FloatAttr(0.1);
  properties.momentum = builder.getF64FloatAttr(0.9);
  properties.weight_decay = builder.getF64FloatAttr(0.0);
  // The adaptor keeps a reference to its operands: keep them alive.
  SmallVector<Value> operands = {args[0], args[1]};
  SgdUpdateOp::Adaptor adaptor(operands, /*attrs=*/nullptr, properties);
  SmallVector<Type> inferred;
  EXPECT_TRUE(failed(SgdUpdateOp::inferReturnTypes(
      &context, builder.getUnknownLoc(), adaptor, inferred)));
  EXPECT_EQ(message, "expects a momentum_buf exactly when momentum != 0, got "
                     "none with momentum 9.000000e-01");
}

TEST_F(LoomOpsTest, AdamwUpdateReturnsParamAndMoments) {
  auto step = RankedTensorType::get({}, builder.getI64Type());
  auto args = makeFunction(
      {f32({16, 64}), f32({16, 64}), f32({16, 64}), f32({16, 64}), step});
  auto update = AdamwUpdateOp::create(
      builder, builder.getUnknownLoc(), args[0], args[1], args[2], args[3],
      args[4], builder.getF64FloatAttr(6e-4), builder.getF64FloatAttr(0.9),
      builder.getF64FloatAttr(0.95), builder.getF64FloatAttr(1e-8),
      builder.getF64FloatAttr(0.1));
  EXPECT_EQ(update->getNumResults(), 3u);
  for (Type type : update->getResultTypes())
    EXPECT_EQ(type, f32({16, 64}));
  EXPECT_TRUE(succeeded(verify(update)));
}

TEST_F(LoomOpsTest, InitializerRejectsBadArgumentsThroughDiagnostics) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto emitError = [&] { return mlir::emitError(builder.getUnknownLoc()); };
  auto normal =
      InitializerAttr::getChecked(emitError, &context, InitKind::Normal,
                                  DenseF64ArrayAttr::get(&context, {0.02}));
  EXPECT_TRUE(normal);
  auto wrongArity =
      InitializerAttr::getChecked(emitError, &context, InitKind::Zeros,
                                  DenseF64ArrayAttr::get(&context, {1.0}));
  EXPECT_FALSE(wrongArity);
  EXPECT_EQ(message, "initializer `zeros` takes 0 argument(s), got 1");
}

TEST_F(LoomOpsTest, ArgumentAttributesAreOnlyValidOnFuncArguments) {
  // A region argument of another op (here the module itself) is not a model
  // input, whatever attribute it carries.
  auto init = InitializerAttr::get(&context, InitKind::Zeros,
                                   DenseF64ArrayAttr::get(&context, {}));
  NamedAttribute param(builder.getStringAttr("loom.param"),
                       ParamAttr::get(&context, "w", init, /*decay=*/false));
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  Dialect *loom = context.getLoadedDialect<LoomDialect>();
  EXPECT_TRUE(failed(
      loom->verifyRegionArgAttribute(module->getOperation(), 0, 0, param)));
  EXPECT_EQ(message, "`loom.param` is only valid on func.func arguments");
}

} // namespace

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
  // A ValueRange over a braced list would dangle; keep the operands alive.
  SmallVector<Value> operands{args[0], args[1]};
  MatmulOp::Adaptor adaptor(operands);
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

// ===== Shape ops =====

TEST_F(LoomOpsTest, ReshapeTakesItsResultTypeAndChecksTheElementCount) {
  auto args = makeFunction({f32({2, 128, 768})});
  auto heads = ReshapeOp::create(builder, builder.getUnknownLoc(),
                                 f32({2, 128, 12, 64}), args[0]);
  EXPECT_TRUE(succeeded(verify(heads)));
  auto wrong = ReshapeOp::create(builder, builder.getUnknownLoc(),
                                 f32({2, 128, 12, 63}), args[0]);
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(verify(wrong)));
}

TEST_F(LoomOpsTest, TransposeInfersThePermutedShape) {
  auto args = makeFunction({f32({2, 128, 12, 64})});
  auto transpose = TransposeOp::create(builder, builder.getUnknownLoc(),
                                       args[0], ArrayRef<int64_t>{0, 2, 1, 3});
  EXPECT_EQ(transpose.getType(), f32({2, 12, 128, 64}));
  // The inverse permutation, its VJP, restores the shape.
  auto back = TransposeOp::create(builder, builder.getUnknownLoc(), transpose,
                                  ArrayRef<int64_t>{0, 2, 1, 3});
  EXPECT_EQ(back.getType(), args[0].getType());
}

TEST_F(LoomOpsTest, PadWithInteriorZerosUndoesAStridedSlice) {
  // Rows 1, 4, 7 of 9 (stride 3); the VJP pads them back into place with
  // low = start, interior = stride - 1 and the rest of the dim as high.
  auto args = makeFunction({f32({9, 16})});
  auto slice = SliceOp::create(
      builder, builder.getUnknownLoc(), args[0], ArrayRef<int64_t>{1, 0},
      ArrayRef<int64_t>{9, 16}, ArrayRef<int64_t>{3, 1});
  EXPECT_EQ(slice.getType(), f32({3, 16}));
  auto pad = PadOp::create(builder, builder.getUnknownLoc(), slice,
                           ArrayRef<int64_t>{1, 0}, ArrayRef<int64_t>{1, 0},
                           ArrayRef<int64_t>{2, 0});
  EXPECT_EQ(pad.getType(), args[0].getType());
}

TEST_F(LoomOpsTest, ConcatAndSplitInvertEachOther) {
  auto args = makeFunction({f32({8, 768}), f32({8, 256})});
  auto concat = ConcatOp::create(builder, builder.getUnknownLoc(),
                                 ValueRange{args[0], args[1]}, /*axis=*/1);
  EXPECT_EQ(concat.getType(), f32({8, 1024}));
  auto split = SplitOp::create(builder, builder.getUnknownLoc(), concat,
                               /*axis=*/1, ArrayRef<int64_t>{768, 256});
  ASSERT_EQ(split.getNumResults(), 2u);
  EXPECT_EQ(split.getResult(0).getType(), args[0].getType());
  EXPECT_EQ(split.getResult(1).getType(), args[1].getType());
}

TEST_F(LoomOpsTest, SplitInferenceReportsAWrongSumThroughDiagnostics) {
  auto args = makeFunction({f32({4, 8})});
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  SmallVector<Type> inferred;
  SplitOp::Properties properties;
  properties.axis = builder.getI64IntegerAttr(1);
  properties.sizes = builder.getDenseI64ArrayAttr({3, 4});
  SmallVector<Value> operands{args[0]};
  SplitOp::Adaptor adaptor(operands, /*attrs=*/nullptr, properties);
  LogicalResult result = SplitOp::inferReturnTypes(
      &context, builder.getUnknownLoc(), adaptor, inferred);
  EXPECT_TRUE(failed(result));
  EXPECT_TRUE(inferred.empty());
  EXPECT_EQ(message, "expects sizes adding up to 8 (the size of dim 1), got 7");
}

// ===== Transformer ops =====

TEST_F(LoomOpsTest, EmbeddingAppendsHiddenDimAndGradRestoresTable) {
  auto i64 = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getI64Type());
  };
  auto args = makeFunction({f32({100, 16}), i64({2, 8}), f32({2, 8, 16})});
  auto lookup =
      EmbeddingOp::create(builder, builder.getUnknownLoc(), args[0], args[1],
                          /*offset=*/Value());
  auto grad = EmbeddingGradOp::create(builder, builder.getUnknownLoc(), args[2],
                                      args[1], /*offset=*/Value(),
                                      /*vocab_size=*/100);
  EXPECT_EQ(lookup.getType(), f32({2, 8, 16}));
  EXPECT_EQ(grad.getType(), f32({100, 16}));
  EXPECT_TRUE(succeeded(verify(lookup)));
  EXPECT_TRUE(succeeded(verify(grad)));
}

TEST_F(LoomOpsTest, AttentionInfersGroupedQueryCrossAttentionShapes) {
  // 8 query heads over 2 key/value heads; 16 queries attend 24 keys; the
  // value head size (64) differs from the query/key one (32).
  auto args = makeFunction({f32({2, 8, 16, 32}), f32({2, 2, 24, 32}),
                            f32({2, 2, 24, 64}), f32({16, 24})});
  auto attention = AttentionOp::create(builder, builder.getUnknownLoc(),
                                       args[0], args[1], args[2], args[3],
                                       /*causal=*/true, /*scale=*/FloatAttr());
  EXPECT_EQ(attention.getType(), f32({2, 8, 16, 64}));
  // Without a scale attribute the scale is 1 / sqrt(D).
  EXPECT_NEAR(attention.getScaleOrDefault(), 0.17677669529663687, 1e-15);

  auto grad = AttentionGradOp::create(builder, builder.getUnknownLoc(), args[0],
                                      args[1], args[2], attention, attention,
                                      /*mask=*/Value(), /*causal=*/true,
                                      builder.getF64FloatAttr(0.5));
  EXPECT_EQ(grad.getDquery().getType(), f32({2, 8, 16, 32}));
  EXPECT_EQ(grad.getDkey().getType(), f32({2, 2, 24, 32}));
  EXPECT_EQ(grad.getDvalue().getType(), f32({2, 2, 24, 64}));
  EXPECT_DOUBLE_EQ(grad.getScaleOrDefault(), 0.5);
  EXPECT_TRUE(succeeded(verify(attention)));
  EXPECT_TRUE(succeeded(verify(grad)));
}

TEST_F(LoomOpsTest, AttentionRuleSplitsQueryHeadsWithKeyValueHeads) {
  // The query head dim is (hkv, g) with hkv major, so splitting the
  // key/value heads splits the query heads into matching blocks.
  auto args = makeFunction(
      {f32({2, 8, 16, 32}), f32({2, 2, 16, 32}), f32({2, 2, 16, 32})});
  auto attention =
      AttentionOp::create(builder, builder.getUnknownLoc(), args[0], args[1],
                          args[2], /*mask=*/Value(), /*causal=*/false,
                          /*scale=*/FloatAttr());
  OpShardingRule rule = attention.getShardingRule();
  ArrayRef<int64_t> kvHeads = rule.getOperandDimFactors(1, 1);
  ArrayRef<int64_t> queryHeads = rule.getOperandDimFactors(0, 1);
  ASSERT_EQ(kvHeads.size(), 1u);
  ASSERT_EQ(queryHeads.size(), 2u);
  EXPECT_EQ(queryHeads[0], kvHeads[0]);
  EXPECT_EQ(rule.getFactors()[queryHeads[1]].size, 4);
  EXPECT_EQ(rule.getResultDimFactors(0, 1), queryHeads);
}

TEST_F(LoomOpsTest, RopeKeepsTheInputType) {
  auto args = makeFunction(
      {f32({2, 4, 16, 8}), RankedTensorType::get({16}, builder.getI32Type())});
  auto rope = RopeOp::create(builder, builder.getUnknownLoc(), args[0], args[1],
                             APFloat(500000.0), /*inverse=*/true);
  EXPECT_EQ(rope.getType(), f32({2, 4, 16, 8}));
  EXPECT_TRUE(succeeded(verify(rope)));
}

TEST_F(LoomOpsTest, CrossEntropyIsRankZeroAndItsGradHasTheLogitsType) {
  auto args = makeFunction({f32({2, 8, 100}),
                            RankedTensorType::get({2, 8}, builder.getI64Type()),
                            f32({})});
  auto loss = CrossEntropyOp::create(builder, builder.getUnknownLoc(), args[0],
                                     args[1], /*offset=*/Value());
  auto grad = CrossEntropyGradOp::create(builder, builder.getUnknownLoc(),
                                         args[0], args[1], args[2],
                                         /*offset=*/Value());
  EXPECT_EQ(loss.getType(), f32({}));
  EXPECT_EQ(loss.getIgnoreIndex(), static_cast<uint64_t>(-100));
  EXPECT_EQ(grad.getType(), f32({2, 8, 100}));
  EXPECT_TRUE(succeeded(verify(loss)));
  EXPECT_TRUE(succeeded(verify(grad)));
}

TEST_F(LoomOpsTest, AttentionInferenceReportsUnevenHeadGroups) {
  auto args = makeFunction(
      {f32({1, 6, 8, 16}), f32({1, 4, 8, 16}), f32({1, 4, 8, 16})});
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  SmallVector<Type> inferred;
  SmallVector<Value> operands{args[0], args[1], args[2]};
  AttentionOp::Adaptor adaptor(operands);
  LogicalResult result = AttentionOp::inferReturnTypes(
      &context, builder.getUnknownLoc(), adaptor, inferred);
  EXPECT_TRUE(failed(result));
  EXPECT_TRUE(inferred.empty());
  EXPECT_EQ(message, "expects the key/value head count 4 to be positive and "
                     "divide the query head count 6");
}

} // namespace

//===----------------------------------------------------------------------===//
// Reduction, softmax and normalization ops
//===----------------------------------------------------------------------===//

namespace {

/// The default epsilon of the norms, as their builders take it.
llvm::APFloat defaultEps() { return llvm::APFloat(1.0e-5); }

TEST_F(LoomOpsTest, ReduceMeanAndMaxDropOrKeepAxes) {
  auto args = makeFunction({f32({8, 128, 768})});
  auto mean = ReduceMeanOp::create(builder, builder.getUnknownLoc(), args[0],
                                   ArrayRef<int64_t>{2}, /*keepdims=*/true);
  auto max = ReduceMaxOp::create(builder, builder.getUnknownLoc(), args[0],
                                 ArrayRef<int64_t>{0, 1}, /*keepdims=*/false);
  EXPECT_EQ(mean.getType(), f32({8, 128, 1}));
  EXPECT_EQ(max.getType(), f32({768}));
}

TEST_F(LoomOpsTest, SoftmaxFamilyKeepsTheInputType) {
  auto args = makeFunction({f32({2, 4, 16, 16}), f32({2, 4, 16, 16})});
  Location loc = builder.getUnknownLoc();
  auto softmax = SoftmaxOp::create(builder, loc, args[0], /*axis=*/3);
  auto softmaxGrad =
      SoftmaxGradOp::create(builder, loc, softmax, args[1], /*axis=*/3);
  auto logSoftmax = LogSoftmaxOp::create(builder, loc, args[0], /*axis=*/1);
  auto logSoftmaxGrad =
      LogSoftmaxGradOp::create(builder, loc, logSoftmax, args[1], /*axis=*/1);
  for (Operation *op :
       {softmax.getOperation(), softmaxGrad.getOperation(),
        logSoftmax.getOperation(), logSoftmaxGrad.getOperation()}) {
    EXPECT_EQ(op->getResult(0).getType(), f32({2, 4, 16, 16}));
    EXPECT_TRUE(succeeded(verify(op)));
  }
}

TEST_F(LoomOpsTest, NormsKeepTheInputTypeWithOrWithoutParameters) {
  auto args = makeFunction({f32({8, 128, 768}), f32({768}), f32({768})});
  Location loc = builder.getUnknownLoc();
  auto affine = LayerNormOp::create(builder, loc, args[0], args[1], args[2],
                                    defaultEps());
  auto plain = LayerNormOp::create(builder, loc, args[0], Value(), Value(),
                                   defaultEps());
  auto rms =
      RmsNormOp::create(builder, loc, args[0], args[1], llvm::APFloat(1.0e-6));
  EXPECT_EQ(affine.getType(), f32({8, 128, 768}));
  EXPECT_EQ(plain.getType(), f32({8, 128, 768}));
  EXPECT_EQ(rms.getType(), f32({8, 128, 768}));
  EXPECT_FALSE(plain.getGamma());
  EXPECT_EQ(rms.getEps().convertToDouble(), 1.0e-6);
  for (Operation *op :
       {affine.getOperation(), plain.getOperation(), rms.getOperation()})
    EXPECT_TRUE(succeeded(verify(op)));
}

TEST_F(LoomOpsTest, NormGradsReturnParameterGradientsExactlyWithGamma) {
  auto args = makeFunction({f32({4, 8}), f32({4, 8}), f32({8})});
  Location loc = builder.getUnknownLoc();
  auto layerGrad = LayerNormGradOp::create(builder, loc, args[0], args[1],
                                           args[2], defaultEps());
  ASSERT_EQ(layerGrad->getNumResults(), 3u);
  EXPECT_EQ(layerGrad.getDx().getType(), f32({4, 8}));
  EXPECT_EQ(layerGrad.getDgamma().getType(), f32({8}));
  EXPECT_EQ(layerGrad.getDbeta().getType(), f32({8}));

  auto layerGradPlain = LayerNormGradOp::create(builder, loc, args[0], args[1],
                                                Value(), defaultEps());
  EXPECT_EQ(layerGradPlain->getNumResults(), 1u);
  EXPECT_FALSE(layerGradPlain.getDgamma());
  EXPECT_FALSE(layerGradPlain.getDbeta());

  auto rmsGrad = RmsNormGradOp::create(builder, loc, args[0], args[1], args[2],
                                       defaultEps());
  ASSERT_EQ(rmsGrad->getNumResults(), 2u);
  EXPECT_EQ(rmsGrad.getDgamma().getType(), f32({8}));
  auto rmsGradPlain = RmsNormGradOp::create(builder, loc, args[0], args[1],
                                            Value(), defaultEps());
  EXPECT_EQ(rmsGradPlain->getNumResults(), 1u);
  EXPECT_FALSE(rmsGradPlain.getDgamma());
  for (Operation *op : {layerGrad.getOperation(), layerGradPlain.getOperation(),
                        rmsGrad.getOperation(), rmsGradPlain.getOperation()})
    EXPECT_TRUE(succeeded(verify(op)));
}

TEST_F(LoomOpsTest, LayerNormInferenceReportsGammaWithoutBeta) {
  auto args = makeFunction({f32({4, 8}), f32({8})});
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  LayerNormOp::Properties properties;
  properties.setEps(builder.getF64FloatAttr(1.0e-5));
  properties.setOperandSegmentSizes({1, 1, 0});
  // The adaptor keeps a view of the operands: they must outlive it.
  SmallVector<Value> operands = {args[0], args[1]};
  LayerNormOp::Adaptor adaptor(operands, /*attrs=*/nullptr, properties);
  SmallVector<Type> inferred;
  LogicalResult result = LayerNormOp::inferReturnTypes(
      &context, builder.getUnknownLoc(), adaptor, inferred);
  EXPECT_TRUE(failed(result));
  EXPECT_TRUE(inferred.empty());
  EXPECT_EQ(message,
            "expects gamma and beta both present or both absent, got gamma "
            "only");
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
      builder, loc, args[0], args[1], args[2], /*lr_scale=*/Value(),
      builder.getF64FloatAttr(0.1), builder.getF64FloatAttr(0.9),
      builder.getF64FloatAttr(0.0), builder.getF64FloatAttr(0.0),
      builder.getUnitAttr());
  EXPECT_EQ(withMomentum->getNumResults(), 2u);
  EXPECT_EQ(withMomentum.getNewMomentumBuf().getType(), f32({768}));
  EXPECT_TRUE(succeeded(verify(withMomentum)));

  auto plain = SgdUpdateOp::create(
      builder, loc, args[0], args[1], /*momentum_buf=*/Value(),
      /*lr_scale=*/Value(), builder.getF64FloatAttr(0.1),
      builder.getF64FloatAttr(0.0), builder.getF64FloatAttr(0.0),
      builder.getF64FloatAttr(0.0),
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
  // param, grad; no momentum_buf, no lr_scale.
  properties.operandSegmentSizes = {1, 1, 0, 0};
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
      args[4], /*lr_scale=*/Value(), builder.getF64FloatAttr(6e-4),
      builder.getF64FloatAttr(0.9), builder.getF64FloatAttr(0.95),
      builder.getF64FloatAttr(1e-8), builder.getF64FloatAttr(0.1));
  EXPECT_EQ(update->getNumResults(), 3u);
  for (Type type : update->getResultTypes())
    EXPECT_EQ(type, f32({16, 64}));
  EXPECT_TRUE(succeeded(verify(update)));
}

TEST_F(LoomOpsTest, UpdatesTakeARankZeroLearningRateFactor) {
  auto step = RankedTensorType::get({}, builder.getI64Type());
  auto scale = RankedTensorType::get({}, builder.getF32Type());
  auto args =
      makeFunction({f32({8}), f32({8}), f32({8}), f32({8}), step, scale});
  Location loc = builder.getUnknownLoc();
  auto adamw = AdamwUpdateOp::create(
      builder, loc, args[0], args[1], args[2], args[3], args[4], args[5],
      builder.getF64FloatAttr(6e-4), builder.getF64FloatAttr(0.9),
      builder.getF64FloatAttr(0.95), builder.getF64FloatAttr(1e-8),
      builder.getF64FloatAttr(0.1));
  EXPECT_EQ(adamw.getLrScale(), args[5]);
  EXPECT_TRUE(succeeded(verify(adamw)));
  auto sgd = SgdUpdateOp::create(
      builder, loc, args[0], args[1], /*momentum_buf=*/args[2], args[5],
      builder.getF64FloatAttr(0.1), builder.getF64FloatAttr(0.9),
      builder.getF64FloatAttr(0.0), builder.getF64FloatAttr(0.0),
      /*nesterov=*/nullptr);
  EXPECT_EQ(sgd.getMomentumBuf(), args[2]);
  EXPECT_EQ(sgd.getLrScale(), args[5]);
  EXPECT_EQ(sgd->getNumResults(), 2u);
  EXPECT_TRUE(succeeded(verify(sgd)));
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

//===- MemoryAnalysisTest.cpp - Peak live bytes of hand-written steps -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// dist::analyzeMemory on small functions whose peaks are computed by hand in
// the comments: the liveness rules (definition to last use, unused values at
// their definition, loop-carried arguments to the end), the categories, and
// what recomputing a forward value in the backward removes.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom::dist;

namespace {

class MemoryAnalysisTest : public ::testing::Test {
protected:
  MemoryAnalysisTest() {
    DialectRegistry registry;
    mlir::loom::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `text` and returns its function `name`.
  func::FuncOp parse(StringRef text, StringRef name = "f") {
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text.str();
    if (!module)
      return {};
    auto func = module->lookupSymbol<func::FuncOp>(name);
    EXPECT_TRUE(func);
    return func;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(MemoryAnalysisTest, ValueBytesFollowTheDeclaredType) {
  Builder b(&context);
  EXPECT_EQ(getValueBytes(RankedTensorType::get({2, 3}, b.getF32Type())), 24);
  EXPECT_EQ(getValueBytes(RankedTensorType::get({2, 3}, b.getBF16Type())), 12);
  EXPECT_EQ(getValueBytes(RankedTensorType::get({2, 3}, b.getF64Type())), 48);
  EXPECT_EQ(getValueBytes(RankedTensorType::get({5}, b.getI1Type())), 5);
  EXPECT_EQ(getValueBytes(RankedTensorType::get({}, b.getI64Type())), 8);
  EXPECT_EQ(getValueBytes(b.getIndexType()), 8);
  EXPECT_EQ(getValueBytes(b.getI32Type()), 4);
  EXPECT_EQ(getValueBytes(
                RankedTensorType::get({ShapedType::kDynamic}, b.getF32Type())),
            0);
}

TEST_F(MemoryAnalysisTest, ChainPeaksWhereTwoValuesOverlap) {
  // x (64 B) -> a (64) -> b (64, a reshape) -> b2 (256) -> c (64), each
  // dying at its only reader: {x, a} 128, {a, b} 128, {b, b2} 320,
  // {b2, c} 320, {c} 64 at the return; all "other".
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
      %a = loom.tanh %x : tensor<16xf32>
      %b = loom.reshape %a : tensor<16xf32> to tensor<4x4xf32>
      %b2 = loom.concat %b, %b, %b, %b {axis = 0 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
      %c = loom.reduce_sum %b2 {axes = array<i64: 1>} : (tensor<16x4xf32>) -> tensor<16xf32>
      return %c : tensor<16xf32>
    })mlir");
  MemoryBreakdown memory = analyzeMemory(f);
  EXPECT_EQ(memory.getPeak(), 320);
  EXPECT_EQ(memory.other, 320);
  EXPECT_EQ(memory.parameters + memory.gradients + memory.optimizerStates +
                memory.activations,
            0);
}

TEST_F(MemoryAnalysisTest, LiveValuesAtThePeakLargestFirst) {
  // The chain above peaks first at the reshape's user (op 2, the concat):
  // b2 (256 B) and b (64 B) are live there, in that order, and sum to the
  // peak; x and a died before it.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
      %a = loom.tanh %x : tensor<16xf32>
      %b = loom.reshape %a : tensor<16xf32> to tensor<4x4xf32>
      %b2 = loom.concat %b, %b, %b, %b {axis = 0 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
      %c = loom.reduce_sum %b2 {axes = array<i64: 1>} : (tensor<16x4xf32>) -> tensor<16xf32>
      return %c : tensor<16xf32>
    })mlir");
  MemoryBreakdown memory = analyzeMemory(f);
  ASSERT_TRUE(memory.peakOp);
  EXPECT_EQ(memory.peakOp->getName().getStringRef(), "loom.concat");
  std::vector<LiveValue> live = getLiveValuesAtPeak(f);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].bytes, 256);
  EXPECT_EQ(live[0].value.getDefiningOp()->getName().getStringRef(),
            "loom.concat");
  EXPECT_EQ(live[1].bytes, 64);
  EXPECT_EQ(live[1].value.getDefiningOp()->getName().getStringRef(),
            "loom.reshape");
  EXPECT_EQ(live[0].category, MemoryCategory::Other);
  EXPECT_EQ(live[0].bytes + live[1].bytes, memory.getPeak());
}

TEST_F(MemoryAnalysisTest, UnusedValuesLiveAtTheirDefinitionOnly) {
  // %big (1024 B) is never read: it counts at its own op only, with x (64)
  // and y (64): 1152. Without the rule it would stay to the end.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
      %y = loom.tanh %x : tensor<16xf32>
      %big = loom.concat %y, %y, %y, %y, %y, %y, %y, %y, %y, %y, %y, %y, %y, %y, %y, %y {axis = 0 : i64} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<256xf32>
      %z = loom.exp %y : tensor<16xf32>
      return %z : tensor<16xf32>
    })mlir");
  // Op 0: x, y = 128. Op 1: y, big = 1088 (x died at op 0). Op 2: y, z.
  EXPECT_EQ(analyzeMemory(f).getPeak(), 1088);
}

TEST_F(MemoryAnalysisTest, LoopCarriedArgumentsLiveToTheEnd) {
  // p (param, 64 B) and s (named like a result) are carried: live through
  // the return although nothing reads them after op 0. d (a loom.name that
  // no result has) dies after op 0.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%p: tensor<16xf32> {loom.param = #loom.param<"p", init = zeros, decay = false>},
                 %s: tensor<16xf32> {loom.name = "p.exp_avg"},
                 %d: tensor<16xf32> {loom.name = "data"})
        -> (tensor<16xf32> {loom.name = "p.exp_avg"}, tensor<64xf32> {loom.name = "out"}) {
      %a = loom.add %p, %d : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %b = loom.concat %a, %a, %a, %a {axis = 0 : i64} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<64xf32>
      %c = loom.add %s, %s : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      return %c, %b : tensor<16xf32>, tensor<64xf32>
    })mlir");
  EXPECT_TRUE(isCarriedArgument(f, 0));
  EXPECT_TRUE(isCarriedArgument(f, 1));
  EXPECT_FALSE(isCarriedArgument(f, 2));
  // Op 0: p s d a = 256. Op 1: p s a b = 64*3 + 256 = 448. Op 2: p s b c =
  // 64 + 64 + 256 + 64 = 448. The first maximum (op 1): p is a parameter,
  // s an optimizer state (named `<param>.<state>`), a and b other.
  MemoryBreakdown memory = analyzeMemory(f);
  EXPECT_EQ(memory.getPeak(), 448);
  EXPECT_EQ(memory.parameters, 64);
  EXPECT_EQ(memory.optimizerStates, 64);
  EXPECT_EQ(memory.other, 320);
}

TEST_F(MemoryAnalysisTest, OptimizerUpdateSaysGradientsAndUpdatedCopies) {
  // AdamW on w (64 B) with two states. The update is the last reader of w,
  // m and v, so their new values take their storage (the in-place rule,
  // InPlaceReuseTest): at op 1 w, m, v, step (8), the loss (4) and the
  // gradient g are live, 268 B, and at the update as many, the new copies
  // in the old ones' place (460 if both were counted). The first maximum,
  // op 1: parameters 64, states 128, gradients 64, other 12.
  func::FuncOp f = parse(R"mlir(
    func.func @f(%w: tensor<16xf32> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                 %m: tensor<16xf32> {loom.name = "w.exp_avg"},
                 %v: tensor<16xf32> {loom.name = "w.exp_avg_sq"},
                 %step: tensor<i64> {loom.name = "step"})
        -> (tensor<f32> {loom.name = "loss"}, tensor<16xf32> {loom.name = "w"},
            tensor<16xf32> {loom.name = "w.exp_avg"}, tensor<16xf32> {loom.name = "w.exp_avg_sq"},
            tensor<i64> {loom.name = "step"}) {
      %l = loom.reduce_sum %w {axes = array<i64: 0>, loom.fwd = 0 : i64} : (tensor<16xf32>) -> tensor<f32>
      %g = loom.scale %w {factor = 2.0 : f64, loom.fwd = 0 : i64} : tensor<16xf32>
      %w2, %m2, %v2 = loom.adamw_update %w, %g, %m, %v, %step {beta1 = 9.0e-01 : f64, beta2 = 9.99e-01 : f64, eps = 1.0e-08 : f64, loom.fwd = 0 : i64, lr = 1.0e-03 : f64, weight_decay = 0.0 : f64}
          : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
      %one = arith.constant dense<1> : tensor<i64>
      %s2 = loom.add %step, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
      return %l, %w2, %m2, %v2, %s2 : tensor<f32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i64>
    })mlir");
  MemoryBreakdown memory = analyzeMemory(f);
  EXPECT_EQ(memory.parameters, 64);
  EXPECT_EQ(memory.optimizerStates, 128);
  EXPECT_EQ(memory.gradients, 64);
  EXPECT_EQ(memory.activations, 0);
  EXPECT_EQ(memory.other, 12);
  EXPECT_EQ(memory.getPeak(), 268);
}

// The same gradient computation twice: the second recomputes the forward's
// tanh in the backward, so what the backward reads from the forward is x
// alone (data, "other"), and the 512-byte activation is gone from the peak.
constexpr StringLiteral kKept = R"mlir(
  func.func @f(%w: tensor<4x4xf32> {loom.param = #loom.param<"h.0.w", init = zeros, decay = false>},
               %x: tensor<32x4xf32> {loom.name = "x"})
      -> (tensor<f32> {loom.name = "loss"}, tensor<4x4xf32> {loom.name = "h.0.w.grad"}) {
    %h = loom.matmul %x, %w {loom.fwd = 0 : i64} : (tensor<32x4xf32>, tensor<4x4xf32>) -> tensor<32x4xf32>
    %t = loom.tanh %h {loom.fwd = 1 : i64} : tensor<32x4xf32>
    %u = loom.exp %t {loom.fwd = 2 : i64} : tensor<32x4xf32>
    %l = loom.reduce_sum %u {axes = array<i64: 0, 1>, loom.fwd = 3 : i64} : (tensor<32x4xf32>) -> tensor<f32>
    %d = loom.mul %t, %t {loom.fwd = 1 : i64} : (tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<32x4xf32>
    %g = loom.matmul %x, %d {loom.fwd = 0 : i64, transpose_lhs} : (tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<4x4xf32>
    return %l, %g : tensor<f32>, tensor<4x4xf32>
  })mlir";
constexpr StringLiteral kRecomputed = R"mlir(
  func.func @f(%w: tensor<4x4xf32> {loom.param = #loom.param<"h.0.w", init = zeros, decay = false>},
               %x: tensor<32x4xf32> {loom.name = "x"})
      -> (tensor<f32> {loom.name = "loss"}, tensor<4x4xf32> {loom.name = "h.0.w.grad"}) {
    %h = loom.matmul %x, %w {loom.fwd = 0 : i64} : (tensor<32x4xf32>, tensor<4x4xf32>) -> tensor<32x4xf32>
    %t = loom.tanh %h {loom.fwd = 1 : i64} : tensor<32x4xf32>
    %u = loom.exp %t {loom.fwd = 2 : i64} : tensor<32x4xf32>
    %l = loom.reduce_sum %u {axes = array<i64: 0, 1>, loom.fwd = 3 : i64} : (tensor<32x4xf32>) -> tensor<f32>
    %h2 = loom.matmul %x, %w {loom.fwd = 0 : i64, loom.recompute} : (tensor<32x4xf32>, tensor<4x4xf32>) -> tensor<32x4xf32>
    %t2 = loom.tanh %h2 {loom.fwd = 1 : i64, loom.recompute} : tensor<32x4xf32>
    %d = loom.mul %t2, %t2 {loom.fwd = 1 : i64} : (tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<32x4xf32>
    %g = loom.matmul %x, %d {loom.fwd = 0 : i64, transpose_lhs} : (tensor<32x4xf32>, tensor<32x4xf32>) -> tensor<4x4xf32>
    return %l, %g : tensor<f32>, tensor<4x4xf32>
  })mlir";

TEST_F(MemoryAnalysisTest, ForwardValuesReadByTheBackwardAreActivations) {
  // w 64 B, x 512, each 32x4 value 512, the loss 4. Op 0: w x h = 1088.
  // Op 1: w x h t = 1600. Op 2: w x t u = 1600. Op 3: w x t u l = 1604, the
  // first maximum. Op 4: w x t l d = 1604 (u died at op 3). Op 5: w x l d g
  // = 1156. At op 3, t is an activation (the backward's mul reads it); u,
  // a forward temporary, x (data) and the loss are "other".
  MemoryBreakdown memory = analyzeMemory(parse(kKept));
  EXPECT_EQ(memory.getPeak(), 1604);
  EXPECT_EQ(memory.parameters, 64);
  EXPECT_EQ(memory.activations, 512);
  EXPECT_EQ(memory.other, 512 + 512 + 4);
}

TEST_F(MemoryAnalysisTest, RecomputeRemovesTheActivation) {
  // Op 3: w x u l = 1092 (t died at op 2). Op 4: w x l h2 = 1092. Op 5:
  // w x l h2 t2 = 1604 (h2 dies here). Op 6: w x l t2 d = 1604. Op 7:
  // w x l d g = 1156. The peak is the same height, now in the backward and
  // made of recomputed temporaries: no activation is kept.
  MemoryBreakdown kept = analyzeMemory(parse(kKept));
  MemoryBreakdown recomputed = analyzeMemory(parse(kRecomputed));
  EXPECT_EQ(recomputed.getPeak(), 1604);
  EXPECT_EQ(recomputed.activations, 0);
  EXPECT_EQ(kept.activations, 512);
  EXPECT_EQ(recomputed.other, 512 * 3 + 4);
}

TEST_F(MemoryAnalysisTest, ExternalFunctionHasNoMemory) {
  func::FuncOp f = parse("func.func private @f(tensor<4xf32>)");
  EXPECT_EQ(analyzeMemory(f).getPeak(), 0);
}

} // namespace

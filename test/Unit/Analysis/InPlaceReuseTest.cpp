//===- InPlaceReuseTest.cpp - The in-place rule on hand-written steps -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// dist::InPlaceReuse on steps where the rule applies (an optimizer update
// that is the last reader of the state it updates; a carried value computed
// after its argument's last read) and where it must not (the argument still
// read later, by the update through a second operand or through a reshape;
// a result of another size; an argument no result is carried into), then
// what the rule does to dist::analyzeMemory's peak and to the reference
// interpreter: its measured peak drops to the prediction, its results are
// unchanged, and the caller's arguments are never written.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/InPlaceReuse.h"
#include "loom/Analysis/Cost/MemoryAnalysis.h"
#include "loom/InitAllDialects.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Interpreter/KernelRegistry.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::loom::dist;
namespace interp = mlir::loom::interp;

namespace {

class InPlaceReuseTest : public ::testing::Test {
protected:
  InPlaceReuseTest() {
    DialectRegistry registry;
    mlir::loom::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  func::FuncOp parse(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text.str();
    if (!module)
      return {};
    auto func = module->lookupSymbol<func::FuncOp>("train_step");
    EXPECT_TRUE(func);
    return func;
  }

  /// The result of `entry` the return gives at `index`.
  static Value returned(func::FuncOp entry, unsigned index) {
    return entry.getBody().front().getTerminator()->getOperand(index);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// SGD with momentum on w (64 B): the update is the last reader of w and of
// its buffer m, so the new values take their storage.
constexpr StringLiteral kSgd = R"mlir(
  func.func @train_step(%w: tensor<16xf32> {loom.param = #loom.param<"w", init = zeros, decay = false>},
                        %m: tensor<16xf32> {loom.name = "w.momentum_buffer"})
      -> (tensor<f32> {loom.name = "loss"}, tensor<16xf32> {loom.name = "w"},
          tensor<16xf32> {loom.name = "w.momentum_buffer"}) {
    %l = loom.reduce_sum %w {axes = array<i64: 0>, loom.fwd = 0 : i64} : (tensor<16xf32>) -> tensor<f32>
    %g = loom.scale %w {factor = 2.0 : f64} : tensor<16xf32>
    %w2, %m2 = loom.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 5.0e-01 : f64, weight_decay = 0.0 : f64}
        : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    return %l, %w2, %m2 : tensor<f32>, tensor<16xf32>, tensor<16xf32>
  })mlir";

TEST_F(InPlaceReuseTest, AnUpdateThatIsTheLastReaderWritesInPlace) {
  func::FuncOp f = parse(kSgd);
  InPlaceReuse rule(f);
  ASSERT_EQ(rule.getDonor(returned(f, 1)), f.getArgument(0));
  ASSERT_EQ(rule.getDonor(returned(f, 2)), f.getArgument(1));
  EXPECT_TRUE(rule.readsDonor(returned(f, 1)));
  EXPECT_TRUE(rule.readsDonor(returned(f, 2)));
  EXPECT_FALSE(rule.getDonor(returned(f, 0)));
  EXPECT_EQ(rule.getDonors().size(), 2u);
  // Live bytes by op: {w m l} 132, {w m l g} 196, then at the update
  // {l g w2 m2} 196 (the old w and m gave their storage; 324 if both
  // copies were counted), {l w2 m2} 132 at the return.
  MemoryBreakdown memory = analyzeMemory(f);
  EXPECT_EQ(memory.getPeak(), 196);
  EXPECT_EQ(memory.parameters, 64);
  EXPECT_EQ(memory.optimizerStates, 64);
}

TEST_F(InPlaceReuseTest, NotWhenTheArgumentIsReadAfterTheUpdate) {
  // The update reads w, but so does the op after it (and a reshape of m):
  // the old values are still needed, so each new value is a copy.
  func::FuncOp f = parse(R"mlir(
    func.func @train_step(%w: tensor<16xf32> {loom.param = #loom.param<"w", init = zeros, decay = false>},
                          %m: tensor<16xf32> {loom.name = "w.momentum_buffer"})
        -> (tensor<f32> {loom.name = "loss"}, tensor<16xf32> {loom.name = "w"},
            tensor<16xf32> {loom.name = "w.momentum_buffer"}) {
      %g = loom.scale %w {factor = 2.0 : f64} : tensor<16xf32>
      %r = loom.reshape %m : tensor<16xf32> to tensor<4x4xf32>
      %w2, %m2 = loom.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 0.0 : f64}
          : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
      %l = loom.reduce_sum %w {axes = array<i64: 0>, loom.fwd = 0 : i64} : (tensor<16xf32>) -> tensor<f32>
      %k = loom.reduce_sum %r {axes = array<i64: 0, 1>} : (tensor<4x4xf32>) -> tensor<f32>
      %s = loom.add %l, %k : (tensor<f32>, tensor<f32>) -> tensor<f32>
      return %s, %w2, %m2 : tensor<f32>, tensor<16xf32>, tensor<16xf32>
    })mlir");
  EXPECT_TRUE(InPlaceReuse(f).getDonors().empty());
}

TEST_F(InPlaceReuseTest, NotWhenTheUpdateReadsTheStateTwice) {
  // w is the update's parameter and its gradient: the kernel would read
  // gradient elements it has already overwritten.
  func::FuncOp f = parse(R"mlir(
    func.func @train_step(%w: tensor<16xf32> {loom.param = #loom.param<"w", init = zeros, decay = false>})
        -> (tensor<16xf32> {loom.name = "w"}) {
      %w2 = loom.sgd_update %w, %w {lr = 1.0e-01 : f64, momentum = 0.0 : f64, weight_decay = 0.0 : f64}
          : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      return %w2 : tensor<16xf32>
    })mlir");
  EXPECT_TRUE(InPlaceReuse(f).getDonors().empty());
}

TEST_F(InPlaceReuseTest, NotForAResultOfAnotherSizeOrAnArgumentNotCarried) {
  // `w` is returned at another size (not the same bytes); `d` is no
  // result's name (data, not carried), so no value takes its storage
  // although nothing reads it after op 0.
  func::FuncOp f = parse(R"mlir(
    func.func @train_step(%w: tensor<16xf32> {loom.name = "w"},
                          %d: tensor<16xf32> {loom.name = "data"})
        -> (tensor<32xf32> {loom.name = "w"}, tensor<16xf32> {loom.name = "out"}) {
      %a = loom.add %w, %d : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
      %b = loom.concat %a, %a {axis = 0 : i64} : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
      %c = loom.exp %a : tensor<16xf32>
      return %b, %c : tensor<32xf32>, tensor<16xf32>
    })mlir");
  EXPECT_TRUE(InPlaceReuse(f).getDonors().empty());
}

TEST_F(InPlaceReuseTest, AValueComputedAfterTheLastReadTakesThePlace) {
  // ZeRO's shape: the state is read at op 0, its new value computed from
  // other values at op 2 (a gather, here a concat): it goes in w's storage
  // without reading it. A value computed while w is still read would not.
  func::FuncOp f = parse(R"mlir(
    func.func @train_step(%w: tensor<16xf32> {loom.name = "w"},
                          %u: tensor<8xf32> {loom.name = "u"})
        -> (tensor<f32> {loom.name = "loss"}, tensor<16xf32> {loom.name = "w"}) {
      %l = loom.reduce_sum %w {axes = array<i64: 0>} : (tensor<16xf32>) -> tensor<f32>
      %e = loom.exp %u : tensor<8xf32>
      %n = loom.concat %e, %u {axis = 0 : i64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
      return %l, %n : tensor<f32>, tensor<16xf32>
    })mlir");
  InPlaceReuse rule(f);
  ASSERT_EQ(rule.getDonor(returned(f, 1)), f.getArgument(0));
  EXPECT_FALSE(rule.readsDonor(returned(f, 1)));
  // Live bytes by op: {w u l} 100, {w u l e} 132, {u l e n} 132 (w's
  // storage is n's from op 2; 196 with both), {l n} 68 at the return.
  EXPECT_EQ(analyzeMemory(f).getPeak(), 132);
}

TEST_F(InPlaceReuseTest, InterpreterCountsOneCopyAndKeepsTheCallersArguments) {
  // The SGD step on one rank and on two (w and m split over `dp`, so each
  // rank owns its blocks and writes them in place): the same new values as
  // the update's formula, the caller's arguments unchanged, and each rank's
  // measured peak the prediction.
  const std::string spmd = R"mlir(
    dist.mesh @m shape [2] axes ["dp"]
    func.func @train_step(%w: tensor<8xf32> {loom.param = #loom.param<"w", init = zeros, decay = false>, dist.layout = #dist.layout<@m, [["dp"]]>},
                          %m: tensor<8xf32> {loom.name = "w.momentum_buffer", dist.layout = #dist.layout<@m, [["dp"]]>})
        -> (tensor<8xf32> {loom.name = "w", dist.layout = #dist.layout<@m, [["dp"]]>},
            tensor<8xf32> {loom.name = "w.momentum_buffer", dist.layout = #dist.layout<@m, [["dp"]]>}) {
      %g = loom.scale %w {factor = 2.0 : f64} : tensor<8xf32>
      %w2, %m2 = loom.sgd_update %w, %g, %m {lr = 1.0e-01 : f64, momentum = 5.0e-01 : f64, weight_decay = 0.0 : f64}
          : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
      return %w2, %m2 : tensor<8xf32>, tensor<8xf32>
    })mlir";
  for (const std::string &text : {std::string(kSgd), spmd}) {
    func::FuncOp f = parse(text);
    ASSERT_EQ(InPlaceReuse(f).getDonors().size(), 2u);
    interp::Interpreter run(f, interp::KernelRegistry::getDefault(), {});
    ASSERT_EQ(run.prepare(), std::nullopt);
    std::vector<interp::HostTensor> args;
    for (unsigned i = 0; i < 2; ++i) {
      args.push_back(interp::HostTensor::allocate(interp::StorageKind::F64,
                                                  run.getArgumentShape(i)));
      double *data = args.back().mutableData<double>();
      for (int64_t e = 0; e < args.back().getNumElements(); ++e)
        data[e] = 0.25 * static_cast<double>(e + 1) * (i ? -1.0 : 1.0);
    }
    std::vector<interp::HostTensor> before;
    for (const interp::HostTensor &arg : args)
      before.push_back(
          interp::HostTensor::allocate(arg.getKind(), arg.getShape()));
    for (auto [copy, arg] : llvm::zip_equal(before, args))
      std::copy_n(arg.data<double>(), arg.getNumElements(),
                  copy.mutableData<double>());
    std::vector<interp::HostTensor> results;
    ASSERT_EQ(run.run(args, results), std::nullopt);
    for (auto [copy, arg] : llvm::zip_equal(before, args))
      EXPECT_TRUE(copy.sameValues(arg));
    // torch.optim.SGD with momentum 0.5 from a buffer b: b' = 0.5 b + g,
    // w' = w - 0.1 b', with g = 2 w.
    size_t w2 = text == spmd ? 0 : 1;
    for (int64_t e = 0; e < args[0].getNumElements(); ++e) {
      double w = args[0].data<double>()[e], b = args[1].data<double>()[e];
      double b2 = 0.5 * b + 2.0 * w;
      EXPECT_DOUBLE_EQ(results[w2 + 1].data<double>()[e], b2);
      EXPECT_DOUBLE_EQ(results[w2].data<double>()[e], w - 0.1 * b2);
    }
    for (int64_t peak : run.getPeakLiveBytes())
      EXPECT_EQ(peak, analyzeMemory(f).getPeak());
  }
}

} // namespace

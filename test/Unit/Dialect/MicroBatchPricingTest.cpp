//===- MicroBatchPricingTest.cpp - Micro-batches at their own shapes -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// StrategyCostGraphBuilder::getMicroBatchCompute and getStageProblem on a
// step built by loom-autodiff: an embedding, one GEMM layer whose weight
// (4096 x 4096, f32) dwarfs its batch of 16 rows, a tanh and a sum. Split
// into 8 micro-batches:
//   - the GEMM and its backward are priced at the micro-batch's shapes,
//     which is what the same step written with a batch of 2 costs at one
//     micro-batch, and well above 1/8 of the batch's (its weight is read
//     whole by every micro-batch: memory bound on an A100);
//   - the tanh (every byte scales with the batch) costs 1/8 (its backward
//     within the scalar it reads whole);
//   - the stage problem's layer of one micro-batch, times 8, costs more
//     than the layer of the whole batch.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/PipelinePlan.h"
#include "loom/Dialect/Dist/Transforms/StrategyCostGraph.h"
#include "loom/InitAllDialects.h"
#include "loom/InitAllPasses.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "gtest/gtest.h"

#include <memory>
#include <string>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

/// The forward of the step with `batch` token ids.
std::string getForward(int64_t batch) {
  std::string b = std::to_string(batch);
  return R"mlir(
func.func @forward(
    %wte: tensor<512x4096xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
    %w0: tensor<4096x4096xf32> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
    %ids: tensor<)mlir" +
         b + R"mlir(xi64> {loom.input = #loom.input<input_ids>}) -> tensor<f32> {
  %e = loom.embedding %wte, %ids : (tensor<512x4096xf32>, tensor<)mlir" +
         b + R"mlir(xi64>) -> tensor<)mlir" + b + R"mlir(x4096xf32>
  %h = loom.matmul %e, %w0 : (tensor<)mlir" +
         b + R"mlir(x4096xf32>, tensor<4096x4096xf32>) -> tensor<)mlir" + b +
         R"mlir(x4096xf32>
  %t = loom.tanh %h : tensor<)mlir" +
         b + R"mlir(x4096xf32>
  %l = loom.reduce_sum %t {axes = array<i64: 0, 1>} : (tensor<)mlir" +
         b + R"mlir(x4096xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";
}

/// A step, its cost model and its analyzed cost graph on `dp=2,tp=2` of an
/// A100 cluster.
struct Analyzed {
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ClusterCostModel> model;
  std::unique_ptr<FixedStrategies> fixed;
  std::unique_ptr<StrategyCostGraphBuilder> builder;

  /// The node whose op is named `name`.
  unsigned getNode(StringRef name) const {
    for (auto [index, node] : llvm::enumerate(builder->getNodes()))
      if (node.op->getName().getStringRef() == name)
        return index;
    ADD_FAILURE() << "no node " << name.str();
    return 0;
  }
  /// The candidate of `node` with the strategy `axes`, or -1.
  int getCandidate(unsigned node, const FactorAxes &axes) const {
    const std::vector<FactorAxes> &candidates =
        builder->getNodes()[node].candidates;
    for (auto [index, candidate] : llvm::enumerate(candidates))
      if (candidate == axes)
        return int(index);
    return -1;
  }
};

class MicroBatchPricingTest : public ::testing::Test {
protected:
  MicroBatchPricingTest() {
    mlir::loom::registerAllDialects(registry);
    mlir::loom::registerAllPasses();
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
  }

  /// The step of `batch` ids, built by loom-autodiff, analyzed.
  Analyzed analyze(int64_t batch) {
    Analyzed result;
    result.module = parseSourceString<ModuleOp>(getForward(batch), &*context);
    EXPECT_TRUE(result.module);
    PassManager pm(&*context);
    EXPECT_TRUE(succeeded(parsePassPipeline(
        "loom-autodiff{optimizer=sgd lr=0.1 weight-decay=0.0}",
        pm)));
    EXPECT_TRUE(succeeded(pm.run(*result.module)));
    auto func = result.module->lookupSymbol<func::FuncOp>("train_step");
    EXPECT_TRUE(func);
    ValueOrError<ClusterSpec> spec = getClusterPreset("dgx-a100-80g");
    EXPECT_TRUE(bool(spec));
    ValueOrError<Mesh> mesh = Mesh::parse("dp=2,tp=2");
    EXPECT_TRUE(bool(mesh));
    ValueOrError<ClusterCostModel> model = ClusterCostModel::get(*spec, *mesh);
    EXPECT_TRUE(bool(model));
    result.model = std::make_unique<ClusterCostModel>(*model);
    FailureOr<FixedStrategies> fixed = resolveFixedStrategies(
        func, *mesh, FlatSymbolRefAttr::get(&*context, "mesh"),
        ShardingSpec());
    EXPECT_TRUE(succeeded(fixed));
    result.fixed = std::make_unique<FixedStrategies>(std::move(*fixed));
    result.builder = std::make_unique<StrategyCostGraphBuilder>(
        func, *result.model, *result.fixed, Layout::AxisList{"dp"});
    EXPECT_TRUE(succeeded(result.builder->analyze()));
    return result;
  }

  DialectRegistry registry;
  std::unique_ptr<MLIRContext> context;
};

constexpr int64_t kBatch = 16;
constexpr int64_t kMicro = 8;

TEST_F(MicroBatchPricingTest, GemmWithLargeWeightsCostsMoreThanItsShare) {
  Analyzed step = analyze(kBatch);
  // The same step written with one micro-batch's ids: what a micro-batch
  // of the split step really is.
  Analyzed micro = analyze(kBatch / kMicro);
  unsigned node = step.getNode("loom.matmul");
  unsigned microNode = micro.getNode("loom.matmul");
  const SearchNode &gemm = step.builder->getNodes()[node];
  int compared = 0;
  for (auto [c, candidate] : llvm::enumerate(gemm.candidates)) {
    const CandidateCost &whole = gemm.costs[c];
    MicroBatchCompute priced =
        step.builder->getMicroBatchCompute(node, c, kMicro);
    int other = micro.getCandidate(microNode, candidate);
    if (other < 0)
      continue; // Splits the batch further than a micro-batch has rows.
    ++compared;
    const CandidateCost &reference =
        micro.builder->getNodes()[microNode].costs[other];
    EXPECT_DOUBLE_EQ(priced.forwardSeconds, reference.forwardSeconds)
        << "candidate " << c;
    EXPECT_DOUBLE_EQ(priced.followerSeconds,
                     reference.followerSeconds - reference.updateSeconds)
        << "candidate " << c;
    // Every micro-batch reads the whole weight block: far above 1/M.
    EXPECT_GT(priced.forwardSeconds, 2 * whole.forwardSeconds / kMicro)
        << "candidate " << c;
    EXPECT_GT(priced.followerSeconds,
              2 * (whole.followerSeconds - whole.updateSeconds) / kMicro)
        << "candidate " << c;
  }
  EXPECT_GT(compared, 1);
}

TEST_F(MicroBatchPricingTest, ElementwiseChainCostsItsShare) {
  Analyzed step = analyze(kBatch);
  unsigned node = step.getNode("loom.tanh");
  const SearchNode &tanh = step.builder->getNodes()[node];
  ASSERT_FALSE(tanh.candidates.empty());
  for (unsigned c = 0; c < tanh.candidates.size(); ++c) {
    const CandidateCost &whole = tanh.costs[c];
    MicroBatchCompute priced =
        step.builder->getMicroBatchCompute(node, c, kMicro);
    ASSERT_GT(whole.forwardSeconds, 0);
    EXPECT_NEAR(priced.forwardSeconds, whole.forwardSeconds / kMicro,
                1e-12 * whole.forwardSeconds);
    // Its backward (1 - t * t) * dt also reads the scalar 1, four bytes
    // every micro-batch reads whole: equal to 1/M within those.
    double share = (whole.followerSeconds - whole.updateSeconds) / kMicro;
    EXPECT_NEAR(priced.followerSeconds, share, 1e-4 * share);
    EXPECT_GE(priced.followerSeconds, share);
  }
}

TEST_F(MicroBatchPricingTest, StageProblemPricesTheLayerPerMicroBatch) {
  Analyzed step = analyze(kBatch);
  LayerGroups groups = getLayerGroups(*step.builder);
  ASSERT_EQ(groups.layerIds.size(), 1u);
  // The replicated plan (every node's first candidate uses no axis).
  std::vector<unsigned> choice(step.builder->getNodes().size(), 0);
  StrategyChoice outer;
  pipeline::StageProblem one =
      getStageProblem(*step.builder, groups, choice, outer, 1, 4);
  pipeline::StageProblem eight =
      getStageProblem(*step.builder, groups, choice, outer, kMicro, 4);
  // A 1/M estimate would make these equal.
  EXPECT_GT(eight.layers[0].forwardSeconds * kMicro,
            1.5 * one.layers[0].forwardSeconds);
  EXPECT_GT(eight.layers[0].backwardSeconds * kMicro,
            1.5 * one.layers[0].backwardSeconds);
  // Gradient synchronization is once per step either way.
  EXPECT_DOUBLE_EQ(eight.layers[0].stepSeconds, one.layers[0].stepSeconds);
}

} // namespace

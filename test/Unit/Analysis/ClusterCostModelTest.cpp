//===- ClusterCostModelTest.cpp - Compute and collective times ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Checks the cluster cost model against values computed by hand from the
// formulas of docs/CostModel.md and the preset numbers (A100 node: NVLink
// 300 GB/s and 3 us per step, IB 25 GB/s per GPU and 6 us), the placement
// of meshes on nodes, the guarantees the redistribution planner relies on,
// and the plans the planner picks when it prices steps with this model.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/ClusterCostModel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

Mesh makeMesh(std::vector<Mesh::Axis> axes) {
  ValueOrError<Mesh> mesh = Mesh::get(std::move(axes));
  EXPECT_TRUE(mesh.ok()) << mesh.error();
  return *mesh;
}

ClusterSpec getPreset(const char *name) {
  ValueOrError<ClusterSpec> spec = getClusterPreset(name);
  EXPECT_TRUE(spec.ok()) << spec.error();
  return *spec;
}

ClusterCostModel makeModel(const char *preset, std::vector<Mesh::Axis> axes) {
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(getPreset(preset), makeMesh(std::move(axes)));
  EXPECT_TRUE(model.ok()) << model.error();
  return *model;
}

/// Relative closeness: the values span microseconds to seconds.
void expectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, expected * 1e-12) << "expected " << expected;
}

// A100 preset links.
constexpr double kAlphaIn = 3e-6, kBetaIn = 300e9;
constexpr double kAlphaOut = 6e-6, kBetaOut = 25e9;

//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

TEST(MeshPlacementTest, TensorParallelInsideDataParallelAcross) {
  ValueOrError<MeshPlacement> placement = MeshPlacement::get(
      getPreset("dgx-h100"), makeMesh({{"dp", 16}, {"tp", 8}}));
  ASSERT_TRUE(placement.ok()) << placement.error();
  EXPECT_EQ(placement->devicesPerNodeOnAxis, (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(placement->numNodes, 16);
}

TEST(MeshPlacementTest, AnAxisStraddlingTheNodeBoundaryIsSplit) {
  // Ranks dp * 4 + tp: node 0 holds dp 0 and 1, so 2 of dp's 4 share it.
  ValueOrError<MeshPlacement> placement = MeshPlacement::get(
      getPreset("dgx-a100-80g"), makeMesh({{"dp", 4}, {"tp", 4}}));
  ASSERT_TRUE(placement.ok()) << placement.error();
  EXPECT_EQ(placement->devicesPerNodeOnAxis, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(placement->numNodes, 2);
}

TEST(MeshPlacementTest, ASmallMeshFitsInOneNode) {
  ValueOrError<MeshPlacement> placement = MeshPlacement::get(
      getPreset("dgx-a100-80g"), makeMesh({{"dp", 2}, {"tp", 2}}));
  ASSERT_TRUE(placement.ok()) << placement.error();
  EXPECT_EQ(placement->devicesPerNodeOnAxis, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(placement->numNodes, 1);
}

TEST(MeshPlacementTest, MeshesThatDoNotFitFail) {
  ValueOrError<MeshPlacement> partial =
      MeshPlacement::get(getPreset("dgx-a100-80g"), makeMesh({{"dp", 12}}));
  ASSERT_FALSE(partial.ok());
  EXPECT_EQ(partial.error(),
            "mesh {dp:12} has 12 devices, which do not fill whole nodes of 8 "
            "devices of cluster `dgx-a100-80g`");

  ValueOrError<MeshPlacement> uneven = MeshPlacement::get(
      getPreset("dgx-a100-80g"), makeMesh({{"a", 2}, {"b", 3}, {"c", 4}}));
  ASSERT_FALSE(uneven.ok());
  EXPECT_EQ(uneven.error(), "mesh axis `b` (size 3) of mesh {a:2, b:3, c:4} "
                            "straddles nodes of 8 devices unevenly (2 places "
                            "left in a node)");

  ClusterSpec small = getPreset("dgx-a100-80g");
  small.maxNodes = 2;
  ValueOrError<MeshPlacement> tooBig =
      MeshPlacement::get(small, makeMesh({{"dp", 4}, {"tp", 8}}));
  ASSERT_FALSE(tooBig.ok());
  EXPECT_EQ(tooBig.error(), "mesh {dp:4, tp:8} needs 4 nodes of 8 devices; "
                            "cluster `dgx-a100-80g` has at most 2");
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(small, makeMesh({{"dp", 4}, {"tp", 8}}));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error(), tooBig.error());
}

TEST(ClusterCostModelTest, RejectsSpecsItCannotDivideBy) {
  ClusterSpec spec = getPreset("host");
  spec.interNode.bandwidthBytesPerSecond = 0;
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(spec, makeMesh({{"dp", 2}}));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error(), "cluster `host`: inter_node needs a positive "
                           "bandwidth and a finite latency >= 0");
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

TEST(ClusterCostModelTest, LargeGemmIsComputeBound) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"tp", 8}});
  // bf16 [8192 x 8192] x [8192 x 8192]: 2 * 8192^3 FLOPs at 0.7 of 312
  // TFLOP/s = 5.03 ms; its 402 MB of traffic would take 0.28 ms.
  OpCost cost;
  cost.opClass = OpClass::Gemm;
  cost.flops = 2.0 * 8192 * 8192 * 8192;
  cost.bytesRead = 2 * 8192 * 8192 * 2;
  cost.bytesWritten = 8192 * 8192 * 2;
  ValueOrError<double> seconds = model.getComputeSeconds(cost, "bf16");
  ASSERT_TRUE(seconds.ok()) << seconds.error();
  expectSeconds(*seconds, 1099511627776.0 / (312e12 * 0.7));

  // The same GEMM in f32 runs at the IEEE rate, 16x slower.
  ValueOrError<double> f32 = model.getComputeSeconds(cost, "f32");
  ASSERT_TRUE(f32.ok());
  expectSeconds(*f32, 1099511627776.0 / (19.5e12 * 0.7));
}

TEST(ClusterCostModelTest, ElementwiseIsBandwidthBound) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"tp", 8}});
  // A bf16 add of 2^28 elements: reads 1 GiB, writes 0.5 GiB, at 0.8 of
  // 2,039 GB/s; its 2^28 FLOPs would take under a microsecond.
  OpCost cost;
  cost.opClass = OpClass::Elementwise;
  cost.flops = double(int64_t(1) << 28);
  cost.bytesRead = int64_t(1) << 30;
  cost.bytesWritten = int64_t(1) << 29;
  ValueOrError<double> seconds = model.getComputeSeconds(cost, "bf16");
  ASSERT_TRUE(seconds.ok());
  expectSeconds(*seconds, 1610612736.0 / (2039e9 * 0.8));
}

TEST(ClusterCostModelTest, ClassFractionsComeFromTheSpec) {
  ClusterSpec spec = getPreset("dgx-a100-80g");
  spec.achievableFraction["gemm"] = 0.5;
  // A class absent from a hand-built spec uses the default.
  spec.achievableFraction.erase("attention");
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(spec, makeMesh({{"tp", 8}}));
  ASSERT_TRUE(model.ok());
  OpCost cost;
  cost.opClass = OpClass::Gemm;
  cost.flops = 312e12;
  expectSeconds(*model->getComputeSeconds(cost, "f16"), 2.0);
  cost.opClass = OpClass::Attention;
  expectSeconds(*model->getComputeSeconds(cost, "f16"),
                1.0 / getDefaultAchievableFraction("attention"));
}

TEST(ClusterCostModelTest, ADtypeWithoutAPeakIsAnError) {
  ClusterCostModel model = makeModel("p3-v100", {{"dp", 8}});
  OpCost cost;
  cost.opClass = OpClass::Gemm;
  cost.flops = 1e9;
  ValueOrError<double> seconds = model.getComputeSeconds(cost, "bf16");
  ASSERT_FALSE(seconds.ok());
  EXPECT_EQ(seconds.error(), "device `V100-SXM2-16GB` of cluster `p3-v100` "
                             "has no peak FLOP/s for `bf16` (it has f16, "
                             "f32, f64)");
  // Pure data movement needs no peak: an i64 gather is priced by bytes.
  OpCost gather;
  gather.opClass = OpClass::DataMovement;
  gather.bytesRead = 900000000;
  ValueOrError<double> moved = model.getComputeSeconds(gather, "i64");
  ASSERT_TRUE(moved.ok()) << moved.error();
  expectSeconds(*moved, 900e6 / (900e9 * 0.5));
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

TEST(ClusterCostModelTest, AllReduceInsideOneNodeIsARingOverNVLink) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"tp", 8}});
  // 2 GB over 8 GPUs: 2 * 7 steps of 3 us, 2 * 7/8 * 2 GB at 300 GB/s.
  CollectiveTime time =
      model.getCollectiveTime(CollectiveKind::AllReduce, {"tp"}, 2e9, 2e9);
  EXPECT_EQ(time.algorithm, CollectiveAlgorithm::Ring);
  expectSeconds(time.seconds, 14 * kAlphaIn + 1.75 * 2e9 / kBetaIn);
  // = 11.709 ms.
  EXPECT_NEAR(time.seconds, 0.0117087, 1e-7);
}

TEST(ClusterCostModelTest, AllReduceAcrossEightNodesIsARingOverInfiniBand) {
  // dp groups hold one GPU of each of 8 nodes; each GPU has its 25 GB/s
  // share of the node's eight 200 Gb/s NICs.
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"dp", 8}, {"tp", 8}});
  CollectiveTime time =
      model.getCollectiveTime(CollectiveKind::AllReduce, {"dp"}, 2e9, 2e9);
  EXPECT_EQ(time.algorithm, CollectiveAlgorithm::Ring);
  expectSeconds(time.seconds, 14 * kAlphaOut + 1.75 * 2e9 / kBetaOut);
  EXPECT_NEAR(time.seconds, 0.140084, 1e-7);
}

TEST(ClusterCostModelTest, TwoNodesOfEightPickRingHierarchicalOrTreeBySize) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"dp", 2}, {"tp", 8}});
  Layout::AxisList group = {"dp", "tp"};
  // A 16-GPU ring spanning 2 nodes: 30 steps at the slower latency (6 us);
  // each node's 8 GPUs drive 8 NIC shares, 200 GB/s < NVLink's 300.
  auto ring = [](double b) { return 30 * kAlphaOut + 1.875 * b / 200e9; };
  // Hierarchical: reduce_scatter over 8 in the node, all_reduce of b / 8
  // over 2 nodes, all_gather over 8 (each phase a ring for these sizes).
  auto hierarchical = [](double b) {
    double intra = 7 * kAlphaIn + 0.875 * b / kBetaIn;
    double inter = 2 * kAlphaOut + 1.0 * (b / 8) / kBetaOut;
    return intra + inter + intra;
  };
  // Tree: reduce then broadcast, each 3 NVLink steps and 1 IB step of the
  // whole message.
  auto tree = [](double b) {
    return 2 * (3 * (kAlphaIn + b / kBetaIn) + (kAlphaOut + b / 200e9));
  };

  // 2 GB: bandwidth decides; the flat ring moves 15/16 where the
  // hierarchy moves 7/8 twice over NVLink plus 1/8 over IB.
  CollectiveTime big =
      model.getCollectiveTime(CollectiveKind::AllReduce, group, 2e9, 2e9);
  EXPECT_EQ(big.algorithm, CollectiveAlgorithm::Ring);
  expectSeconds(big.seconds, ring(2e9));
  EXPECT_LT(ring(2e9), hierarchical(2e9));

  // 16 MB: the ring's 30 latencies (180 us) dominate; the hierarchy pays
  // 14 NVLink and 2 IB latencies.
  CollectiveTime medium =
      model.getCollectiveTime(CollectiveKind::AllReduce, group, 16e6, 16e6);
  EXPECT_EQ(medium.algorithm, CollectiveAlgorithm::Hierarchical);
  expectSeconds(medium.seconds, hierarchical(16e6));
  EXPECT_NEAR(medium.seconds, 227.333e-6, 1e-9);
  EXPECT_LT(hierarchical(16e6), ring(16e6));
  EXPECT_LT(hierarchical(16e6), tree(16e6));

  // 64 KiB: latency only; the tree's 8 steps win.
  CollectiveTime small =
      model.getCollectiveTime(CollectiveKind::AllReduce, group, 65536, 65536);
  EXPECT_EQ(small.algorithm, CollectiveAlgorithm::Tree);
  expectSeconds(small.seconds, tree(65536));
}

TEST(ClusterCostModelTest, AllGatherAndReduceScatterUseTheirFullSize) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"dp", 8}, {"tp", 8}});
  // all_gather over tp from 1 GB to 8 GB per device: 7 steps, 7/8 of 8 GB.
  CollectiveTime gather =
      model.getCollectiveTime(CollectiveKind::AllGather, {"tp"}, 1e9, 8e9);
  EXPECT_EQ(gather.algorithm, CollectiveAlgorithm::Ring);
  expectSeconds(gather.seconds, 7 * kAlphaIn + 0.875 * 8e9 / kBetaIn);
  // reduce_scatter over dp from 8 GB to 1 GB: the same over IB.
  CollectiveTime scatter =
      model.getCollectiveTime(CollectiveKind::ReduceScatter, {"dp"}, 8e9, 1e9);
  EXPECT_EQ(scatter.algorithm, CollectiveAlgorithm::Ring);
  expectSeconds(scatter.seconds, 7 * kAlphaOut + 0.875 * 8e9 / kBetaOut);
}

TEST(ClusterCostModelTest, AllToAllSendsAllButItsOwnShare) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"dp", 2}, {"tp", 8}});
  // Inside a node: 7/8 of 1 GB over NVLink, 7 latencies.
  CollectiveTime intra =
      model.getCollectiveTime(CollectiveKind::AllToAll, {"tp"}, 1e9, 1e9);
  EXPECT_EQ(intra.algorithm, CollectiveAlgorithm::Ring);
  expectSeconds(intra.seconds, 7 * kAlphaIn + 0.875 * 1e9 / kBetaIn);
  // Over both nodes: 8/16 of the data leaves the node through the GPU's
  // own NIC share (the slower part), 15 latencies at IB's.
  CollectiveTime both =
      model.getCollectiveTime(CollectiveKind::AllToAll, {"dp", "tp"}, 1e9, 1e9);
  expectSeconds(both.seconds, 15 * kAlphaOut + 0.5 * 1e9 / kBetaOut);
}

TEST(ClusterCostModelTest, SliceIsFreeAndTrivialGroupsCostNothing) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"dp", 2}, {"tp", 8}});
  EXPECT_EQ(model.getCollectiveTime(CollectiveKind::AllSlice, {"dp"}, 1e9, 5e8)
                .seconds,
            0);
  ClusterCostModel single = makeModel("dgx-a100-80g", {{"x", 1}, {"tp", 8}});
  EXPECT_EQ(single.getCollectiveTime(CollectiveKind::AllReduce, {"x"}, 1e9, 1e9)
                .seconds,
            0);
}

TEST(ClusterCostModelTest, PlannerGuaranteesHoldAtEverySize) {
  // all_slice is 0; reduce_scatter never costs more than all_reduce (so
  // partial -> split is never all_reduce + slice); reduce_scatter +
  // all_gather never undercuts all_reduce (equal on a ring).
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"dp", 4}, {"tp", 8}});
  for (const Layout::AxisList &group :
       {Layout::AxisList{"tp"}, Layout::AxisList{"dp"},
        Layout::AxisList{"dp", "tp"}}) {
    for (double bytes = 1024; bytes <= 1e11; bytes *= 7) {
      SCOPED_TRACE(std::to_string(bytes));
      double n = group.size() == 2 ? 32 : (group[0] == "tp" ? 8 : 4);
      CollectiveTime reduce = model.getCollectiveTime(CollectiveKind::AllReduce,
                                                      group, bytes, bytes);
      CollectiveTime scatter = model.getCollectiveTime(
          CollectiveKind::ReduceScatter, group, bytes, bytes / n);
      CollectiveTime gather = model.getCollectiveTime(CollectiveKind::AllGather,
                                                      group, bytes / n, bytes);
      EXPECT_LE(scatter.seconds, reduce.seconds);
      EXPECT_LE(reduce.seconds, scatter.seconds + gather.seconds);
      if (reduce.algorithm == CollectiveAlgorithm::Ring &&
          scatter.algorithm == CollectiveAlgorithm::Ring)
        EXPECT_DOUBLE_EQ(reduce.seconds, scatter.seconds + gather.seconds);
    }
  }
}

TEST(ClusterCostModelTest, StepCostIsTheCollectiveTime) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"dp", 2}, {"tp", 8}});
  EXPECT_EQ(model.getName(), "cluster:dgx-a100-80g");
  Layout before = *Layout::get(model.getMesh(), {{}, {}}, {"tp"});
  Layout after = *Layout::get(model.getMesh(), {{"tp"}, {}});
  std::vector<int64_t> shapeBefore = {64, 1024}, shapeAfter = {8, 1024};
  Layout::AxisList axes = {"tp"};
  StepCostQuery query{model.getMesh(),
                      CollectiveKind::ReduceScatter,
                      0,
                      0,
                      axes,
                      8,
                      before,
                      after,
                      shapeBefore,
                      shapeAfter,
                      64 * 1024 * 4,
                      8 * 1024 * 4};
  EXPECT_EQ(model.getStepCost(query),
            model
                .getCollectiveTime(CollectiveKind::ReduceScatter, axes,
                                   64 * 1024 * 4, 8 * 1024 * 4)
                .seconds);
}

//===----------------------------------------------------------------------===//
// The redistribution planner priced by the cluster
//===----------------------------------------------------------------------===//

RedistributionPlanner makePlanner(const ClusterCostModel &model) {
  return RedistributionPlanner(std::make_shared<ClusterCostModel>(model));
}

TEST(ClusterPlannerTest, PartialToSplitIsOneReduceScatter) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"node", 2}, {"gpu", 8}});
  RedistributionPlanner planner = makePlanner(model);
  const Mesh &mesh = model.getMesh();
  Layout from = *Layout::get(mesh, {{}, {}}, {"node", "gpu"});
  Layout to = *Layout::get(mesh, {{"node", "gpu"}, {}});
  ValueOrError<RedistributionPlan> plan =
      planner.plan(mesh, {4096, 4096}, 2, from, to);
  ASSERT_TRUE(plan.ok()) << plan.error();
  ASSERT_EQ(plan->steps.size(), 1u) << plan->toString();
  EXPECT_EQ(plan->steps[0].kind, CollectiveKind::ReduceScatter);
  EXPECT_EQ(plan->steps[0].axes, (Layout::AxisList{"node", "gpu"}));
}

TEST(ClusterPlannerTest, PartialToReplicatedIsOneAllReduce) {
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"node", 2}, {"gpu", 8}});
  RedistributionPlanner planner = makePlanner(model);
  const Mesh &mesh = model.getMesh();
  Layout from = *Layout::get(mesh, {{}, {}}, {"node", "gpu"});
  Layout to = Layout::getReplicated(2);
  // 32 MiB of bf16, where the two-level algorithm wins.
  ValueOrError<RedistributionPlan> plan =
      planner.plan(mesh, {4096, 4096}, 2, from, to);
  ASSERT_TRUE(plan.ok()) << plan.error();
  ASSERT_EQ(plan->steps.size(), 1u) << plan->toString();
  EXPECT_EQ(plan->steps[0].kind, CollectiveKind::AllReduce);
  CollectiveTime time =
      model.getCollectiveTime(CollectiveKind::AllReduce, {"node", "gpu"},
                              4096.0 * 4096 * 2, 4096.0 * 4096 * 2);
  EXPECT_EQ(time.algorithm, CollectiveAlgorithm::Hierarchical);
  EXPECT_EQ(plan->cost, time.seconds);
}

TEST(ClusterPlannerTest, MovesStayInsideNodesWhenTheyCan) {
  // Dim 0 split over `gpu` becomes dim 0 split over `node`. Pricing all
  // links alike, the planner gathers over `gpu` and then runs an all_to_all
  // over `node`, across nodes; priced by the cluster, it reaches the same
  // layout with an all_to_all and an all_gather that both stay in the node.
  ClusterCostModel model = makeModel("dgx-a100-80g", {{"node", 2}, {"gpu", 8}});
  RedistributionPlanner planner = makePlanner(model);
  RedistributionPlanner uniform;
  const Mesh &mesh = model.getMesh();
  Layout from = *Layout::get(mesh, {{"gpu"}, {}});
  Layout to = *Layout::get(mesh, {{"node"}, {}});
  ValueOrError<RedistributionPlan> plan =
      planner.plan(mesh, {4096, 4096}, 2, from, to);
  ASSERT_TRUE(plan.ok()) << plan.error();
  for (const RedistributionStep &step : plan->steps)
    if (step.kind != CollectiveKind::AllSlice)
      EXPECT_EQ(step.axes, (Layout::AxisList{"gpu"})) << plan->toString();

  ValueOrError<RedistributionPlan> uniformPlan =
      uniform.plan(mesh, {4096, 4096}, 2, from, to);
  ASSERT_TRUE(uniformPlan.ok()) << uniformPlan.error();
  bool crossesNodes = false;
  for (const RedistributionStep &step : uniformPlan->steps)
    crossesNodes |= step.kind != CollectiveKind::AllSlice &&
                    step.axes == Layout::AxisList{"node"};
  EXPECT_TRUE(crossesNodes) << uniformPlan->toString();
  // Re-price the uniform plan's steps on the cluster: the cluster's own
  // plan is cheaper.
  double uniformPlanOnCluster = 0;
  Layout at = from;
  for (const RedistributionStep &step : uniformPlan->steps) {
    std::vector<int64_t> before = *at.getLocalShape(mesh, {4096, 4096});
    std::vector<int64_t> after = *step.result.getLocalShape(mesh, {4096, 4096});
    double bytesBefore = 2.0 * before[0] * before[1];
    double bytesAfter = 2.0 * after[0] * after[1];
    uniformPlanOnCluster +=
        model.getCollectiveTime(step.kind, step.axes, bytesBefore, bytesAfter)
            .seconds;
    at = step.result;
  }
  EXPECT_LT(plan->cost, uniformPlanOnCluster);
}
//===----------------------------------------------------------------------===//
// Calibrated curves
//===----------------------------------------------------------------------===//

/// The host preset with synthetic curves whose values make the expected
/// times easy to compute by hand: the f32 GEMM rate depends on M only
/// (1 GFLOP/s at M = 16, 100 GFLOP/s at M = 1024), the elementwise bandwidth
/// is 1 GB/s at 1 kB and 10 GB/s at 1 MB, and all_reduce over two ranks
/// takes 10 us + bytes / 1 GB/s.
ClusterSpec getCalibratedHost() {
  ClusterSpec spec = getPreset("host");
  auto calibration = std::make_shared<Calibration>();
  GemmCurve gemm;
  gemm.m = {16, 1024};
  gemm.n = {16, 1024};
  gemm.k = {16, 1024};
  gemm.flopsPerSecond = {{{1e9, 1e9}, {1e9, 1e9}},
                         {{1e11, 1e11}, {1e11, 1e11}}};
  calibration->gemm["f32"] = gemm;
  calibration->attention["f32"] = {{1e6, 1e9}, {1e9, 1e10}};
  calibration->elementwise = {{1e3, 1e6}, {1e9, 1e10}};
  calibration->rowKernel = {{1e3, 1e6}, {5e8, 5e9}};
  calibration->collectives["all_reduce"] = {{2, 1e-5, 1e9}};
  calibration->collectives["send_recv"] = {{2, 4e-6, 2e9}};
  spec.calibration = std::move(calibration);
  return spec;
}

OpCost makeGemm(int64_t batch, int64_t m, int64_t n, int64_t k) {
  OpCost cost;
  cost.opClass = OpClass::Gemm;
  cost.flops = 2.0 * batch * m * n * k;
  cost.bytesRead = 4 * batch * (m * k + k * n);
  cost.bytesWritten = 4 * batch * m * n;
  cost.gemmBatch = batch;
  cost.gemmM = m;
  cost.gemmN = n;
  cost.gemmK = k;
  return cost;
}

TEST(CalibratedCostTest, GemmRateInterpolatesInLogSpace) {
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(getCalibratedHost(), makeMesh({{"dp", 2}}));
  ASSERT_TRUE(model.ok()) << model.error();
  // M = 128 is halfway between 16 and 1024 in log space, so the rate is
  // the geometric mean sqrt(1e9 x 1e11) = 1e10 FLOP/s.
  OpCost middle = makeGemm(3, 128, 64, 64);
  expectSeconds(*model->getComputeSeconds(middle, "f32"),
                2.0 * 3 * 128 * 64 * 64 / 1e10);
  // Outside the grid the end rate holds (no extrapolation).
  expectSeconds(*model->getComputeSeconds(makeGemm(1, 4096, 16, 16), "f32"),
                2.0 * 4096 * 16 * 16 / 1e11);
  expectSeconds(*model->getComputeSeconds(makeGemm(1, 4, 16, 16), "f32"),
                2.0 * 4 * 16 * 16 / 1e9);
}

TEST(CalibratedCostTest, SmallGemmsCostMorePerFlop) {
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(getCalibratedHost(), makeMesh({{"dp", 2}}));
  ASSERT_TRUE(model.ok());
  // The same FLOPs as 64 products of M = 16 or one of M = 1024: the small
  // ones run at 1 GFLOP/s, 100 times slower than the large one.
  OpCost small = makeGemm(64, 16, 256, 256);
  OpCost large = makeGemm(1, 1024, 256, 256);
  ASSERT_EQ(small.flops, large.flops);
  double smallSeconds = *model->getComputeSeconds(small, "f32");
  double largeSeconds = *model->getComputeSeconds(large, "f32");
  expectSeconds(smallSeconds, small.flops / 1e9);
  expectSeconds(largeSeconds, large.flops / 1e11);
  EXPECT_NEAR(smallSeconds / largeSeconds, 100.0, 1e-9);
}

TEST(CalibratedCostTest, UncoveredCasesFallBackToPeaks) {
  ClusterSpec spec = getCalibratedHost();
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(spec, makeMesh({{"dp", 2}}));
  ASSERT_TRUE(model.ok());
  double fraction = spec.achievableFraction.at("gemm");
  // A GEMM of unknown shape, and a dtype without a curve (f64).
  OpCost unknown = makeGemm(1, 128, 64, 64);
  unknown.gemmM = 0;
  expectSeconds(*model->getComputeSeconds(unknown, "f32"),
                std::max(unknown.flops / (78.2e9 * fraction),
                         double(unknown.bytesRead + unknown.bytesWritten) /
                             (5e9 * spec.achievableFraction.at("gemm"))));
  OpCost f64 = makeGemm(1, 128, 64, 64);
  expectSeconds(
      *model->getComputeSeconds(f64, "f64"),
      std::max(f64.flops / (39.1e9 * fraction),
               double(f64.bytesRead + f64.bytesWritten) / (5e9 * fraction)));
}

TEST(CalibratedCostTest, MemoryBoundClassesUseTheBandwidthCurves) {
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(getCalibratedHost(), makeMesh({{"dp", 2}}));
  ASSERT_TRUE(model.ok());
  OpCost add;
  add.opClass = OpClass::Elementwise;
  add.flops = 250;
  add.bytesRead = 600;
  add.bytesWritten = 400;
  // 1 kB at 1 GB/s.
  expectSeconds(*model->getComputeSeconds(add, "f32"), 1e-6);
  // The optimizer streams like elementwise; sqrt(1e3 x 1e6) bytes sit
  // halfway, at sqrt(1e9 x 1e10) bytes/s.
  OpCost update;
  update.opClass = OpClass::Optimizer;
  update.bytesRead = 31623;
  expectSeconds(
      *model->getComputeSeconds(update, "f32"),
      31623.0 /
          std::exp((std::log(1e9) * (std::log(1e6) - std::log(31623.0)) +
                    std::log(1e10) * (std::log(31623.0) - std::log(1e3))) /
                   (std::log(1e6) - std::log(1e3))));
  // Reductions use the row-kernel curve: 1 MB at 5 GB/s.
  OpCost softmax;
  softmax.opClass = OpClass::Reduction;
  softmax.bytesRead = 500000;
  softmax.bytesWritten = 500000;
  expectSeconds(*model->getComputeSeconds(softmax, "f32"), 1e6 / 5e9);
  // Attention: 1e9 FLOPs at 1e10 FLOP/s.
  OpCost attention;
  attention.opClass = OpClass::Attention;
  attention.flops = 1e9;
  expectSeconds(*model->getComputeSeconds(attention, "f32"), 0.1);
}

TEST(CalibratedCostTest, MeasuredCollectivesReplaceTheLinkModel) {
  ClusterSpec spec = getCalibratedHost();
  ValueOrError<ClusterCostModel> model =
      ClusterCostModel::get(spec, makeMesh({{"dp", 2}}));
  ASSERT_TRUE(model.ok());
  CollectiveTime measured =
      model->getCollectiveTime(CollectiveKind::AllReduce, {"dp"}, 1e6, 1e6);
  EXPECT_EQ(measured.algorithm, CollectiveAlgorithm::Measured);
  expectSeconds(measured.seconds, 1e-5 + 1e6 / 1e9);
  // all_gather was not measured: the link model prices it, as without a
  // calibration.
  spec.calibration = nullptr;
  ValueOrError<ClusterCostModel> plain =
      ClusterCostModel::get(spec, makeMesh({{"dp", 2}}));
  ASSERT_TRUE(plain.ok());
  CollectiveTime gather =
      model->getCollectiveTime(CollectiveKind::AllGather, {"dp"}, 5e5, 1e6);
  EXPECT_NE(gather.algorithm, CollectiveAlgorithm::Measured);
  EXPECT_EQ(
      gather.seconds,
      plain->getCollectiveTime(CollectiveKind::AllGather, {"dp"}, 5e5, 1e6)
          .seconds);
  // Point to point inside the node: the send_recv fit; without it the link.
  expectSeconds(model->getPointToPointSeconds(1e6, 1), 4e-6 + 1e6 / 2e9);
  expectSeconds(plain->getPointToPointSeconds(1e6, 1), 1e-6 + 1e6 / 3.5e9);
}

} // namespace

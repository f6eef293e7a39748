//===- PipelineTimelineTest.cpp - The predicted pipeline timeline ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The Chrome trace parses, holds 2M unit events per rank, and its bubble
// (last end minus the busiest stage's busy time) equals the simulation's;
// from a module with the search's `dist.pipeline`, the trace's bubble is
// the plan's predicted bubble; without predicted times, the unit times are
// the pipelined IR's ops priced by the cost model, averaged per unit.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Pipeline/StageAssignment.h"
#include "loom/Analysis/Pipeline/Timeline.h"
#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Dist/Transforms/PipelinePlan.h"
#include "loom/Dialect/Dist/Transforms/PipelineTimeline.h"
#include "loom/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;
using namespace ::loom::pipeline;
using json = nlohmann::json;

namespace {

/// Per (pid, tid): the complete events' [start, end) in microseconds.
std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>>
getUnitEvents(const json &trace) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>>
      events;
  for (const json &event : trace["traceEvents"]) {
    if (event["ph"] != "X")
      continue;
    double start = event["ts"].get<double>();
    events[{event["pid"].get<int64_t>(), event["tid"].get<int64_t>()}]
        .push_back({start, start + event["dur"].get<double>()});
  }
  return events;
}

/// Last end minus the busiest rank's busy time, in seconds.
double getTraceBubble(const json &trace) {
  double last = 0, busiest = 0;
  for (auto &[key, spans] : getUnitEvents(trace)) {
    double busy = 0;
    for (auto [start, end] : spans) {
      busy += end - start;
      last = std::max(last, end);
    }
    busiest = std::max(busiest, busy);
  }
  return (last - busiest) * 1e-6;
}

TEST(PipelineTimeline, TraceHoldsEveryUnitOfEveryRank) {
  std::vector<StageTimes> stages = {{1.0, 2.0}, {1.5, 2.5}, {0.5, 1.0}};
  for (ScheduleKind kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
    Simulation simulation = simulatePipeline(kind, stages, 4, 0.1);
    json trace = json::parse(getTimelineJSON(simulation, kind, 4, 2),
                             nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(trace.is_discarded());
    auto events = getUnitEvents(trace);
    ASSERT_EQ(events.size(), 6u); // 3 stages x 2 ranks
    for (auto &[key, spans] : events) {
      EXPECT_EQ(spans.size(), 8u); // 2M
      EXPECT_EQ(key.second / 2, key.first) << "rank outside its stage";
    }
    EXPECT_NEAR(getTraceBubble(trace), simulation.bubble, 1e-9);
    int forwards = 0;
    for (const json &event : trace["traceEvents"])
      if (event["ph"] == "X" && event["name"] == "F3")
        ++forwards;
    EXPECT_EQ(forwards, 6);
  }
}

class PipelineTimelineModule : public ::testing::Test {
protected:
  PipelineTimelineModule() {
    DialectRegistry registry;
    mlir::loom::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    cluster = *getClusterPreset("dgx-a100-80g");
  }

  json writeAndRead(ModuleOp module) {
    SmallString<128> path;
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("timeline", "json", path));
    EXPECT_TRUE(succeeded(writePipelineTimeline(module, cluster, path)));
    auto buffer = llvm::MemoryBuffer::getFile(path);
    llvm::sys::fs::remove(path);
    if (!buffer)
      return json();
    return json::parse((*buffer)->getBuffer().str(), nullptr, false);
  }

  MLIRContext context;
  ClusterSpec cluster;
};

TEST_F(PipelineTimelineModule, BubbleIsThePlansPrediction) {
  // The search's path: a stage assignment written as `dist.pipeline`.
  StageProblem problem;
  for (int i = 0; i < 7; ++i)
    problem.layers.push_back({1e-3, 2e-3, 1e-4, 1e9, 1e8});
  problem.head = {2e-3, 4e-3, 0, 1e9, 0};
  problem.stages = 3;
  problem.microBatches = 4;
  problem.p2pSeconds = 5e-5;
  problem.memoryLimit = 80e9;
  StageAssignment assignment = assignStages(problem);
  ASSERT_TRUE(assignment.feasible) << assignment.error;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "dist.mesh @mesh shape [2, 4] axes [\"dp\", \"tp\"]", &context);
  ASSERT_TRUE(module);
  PipelinePlan plan{3, 4, ScheduleKind::OneFOneB, assignment,
                    {0, 1, 2, 3, 4, 5, 6}};
  writePipelineAttr(*module, plan);

  json trace = writeAndRead(*module);
  ASSERT_FALSE(trace.is_discarded());
  auto events = getUnitEvents(trace);
  EXPECT_EQ(events.size(), 3u * 8u); // every rank of the 8 per stage
  for (auto &[key, spans] : events)
    EXPECT_EQ(spans.size(), 8u);
  auto pipeline = (*module)->getAttrOfType<PipelineAttr>("dist.pipeline");
  ASSERT_TRUE(pipeline && pipeline.getPredicted());
  double bubble = pipeline.getPredicted().getBubble();
  EXPECT_GT(bubble, 0.0);
  EXPECT_NEAR(getTraceBubble(trace), bubble, 1e-12);
}

TEST_F(PipelineTimelineModule, EstimatesUnitTimesFromTheIR) {
  // Two stages, two micro-batches; stage 1's matmuls are 4x stage 0's, and
  // the backward ones twice the forward ones.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    module attributes {dist.pipeline = #dist.pipeline<stages = 2,
        micro_batches = 2, schedule = "gpipe",
        stage_layers = [[0, 1], [1, 2]]>} {
      dist.mesh @mesh shape [2] axes ["pp"]
      func.func @train_step(%a: tensor<256x256xf32>, %b: tensor<256x1024xf32>) {
        %0 = loom.matmul %a, %a {dist.stage = 0 : i64, loom.micro_batch = 0 : i64} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
        %1 = loom.matmul %a, %a {dist.stage = 0 : i64, loom.micro_batch = 1 : i64} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
        %2 = loom.matmul %a, %a {dist.stage = 0 : i64, loom.micro_batch = 0 : i64, loom.backward} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
        %3 = loom.matmul %a, %a {dist.stage = 0 : i64, loom.micro_batch = 0 : i64, loom.backward} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
        %4 = loom.matmul %a, %a {dist.stage = 0 : i64, loom.micro_batch = 1 : i64, loom.backward} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
        %5 = loom.matmul %a, %a {dist.stage = 0 : i64, loom.micro_batch = 1 : i64, loom.backward} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
        %6 = loom.matmul %a, %b {dist.stage = 1 : i64, loom.micro_batch = 0 : i64} : (tensor<256x256xf32>, tensor<256x1024xf32>) -> tensor<256x1024xf32>
        %7 = loom.matmul %a, %b {dist.stage = 1 : i64, loom.micro_batch = 1 : i64} : (tensor<256x256xf32>, tensor<256x1024xf32>) -> tensor<256x1024xf32>
        return
      }
    })mlir",
                                                              &context);
  ASSERT_TRUE(module);
  FailureOr<PipelineTimelineInput> input =
      getPipelineTimelineInput(*module, cluster);
  ASSERT_TRUE(succeeded(input));
  EXPECT_FALSE(input->predicted);
  EXPECT_EQ(input->ranksPerStage, 1);
  EXPECT_EQ(input->schedule, ScheduleKind::GPipe);
  ASSERT_EQ(input->stages.size(), 2u);
  EXPECT_GT(input->stages[0].forward, 0.0);
  EXPECT_NEAR(input->stages[0].backward, 2 * input->stages[0].forward,
              1e-12);
  EXPECT_EQ(input->stages[1].backward, 0.0);
  EXPECT_GT(input->stages[1].forward, input->stages[0].forward);

  json trace = writeAndRead(*module);
  ASSERT_FALSE(trace.is_discarded());
  Simulation simulation =
      simulatePipeline(ScheduleKind::GPipe, input->stages, 2, 0.0);
  EXPECT_NEAR(getTraceBubble(trace), simulation.bubble, 1e-12);
  EXPECT_EQ(getUnitEvents(trace).size(), 2u);
}

TEST_F(PipelineTimelineModule, NoPipelineIsAnError) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "dist.mesh @mesh shape [2] axes [\"dp\"]", &context);
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(getPipelineTimelineInput(*module, cluster)));
  EXPECT_NE(message.find("no `dist.pipeline` attribute"), std::string::npos)
      << message;
}

} // namespace

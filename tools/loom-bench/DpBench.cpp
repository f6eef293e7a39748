//===- DpBench.cpp - loom-bench dp: time the strategy search's solver -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom-bench dp [--layers N] [--candidates K] [--seed S] [--repeat R]
//               [--memory-fraction F] [--distinct-layers]
//
// Builds the synthetic Transformer cost graph (SyntheticGraphs.h: 28 nodes a
// layer, K candidates each) and times solveByElimination on it R times,
// printing the graph's size, the fastest and the median solve (wall time),
// the fastest in process CPU time, and what the solver did. With --memory-fraction F the memory limit is F times the
// unconstrained plan's memory, which times the Lagrangian search as well.
//
//===----------------------------------------------------------------------===//

#include "BenchCommands.h"

#include "loom/Analysis/Search/CostGraph.h"
#include "loom/Analysis/Search/SyntheticGraphs.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <ctime>

using namespace mlir::loom::dist;
namespace cl = llvm::cl;

llvm::cl::SubCommand mlir::loom::bench::dpCommand(
    "dp", "Time the DP solver on a synthetic Transformer cost graph");

static cl::opt<unsigned> layers("layers", cl::desc("Transformer layers"),
                                cl::init(96),
                                cl::sub(mlir::loom::bench::dpCommand));
static cl::opt<unsigned> candidates("candidates",
                                    cl::desc("Candidates of every node"),
                                    cl::init(30),
                                    cl::sub(mlir::loom::bench::dpCommand));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random costs"),
                              cl::init(1),
                              cl::sub(mlir::loom::bench::dpCommand));
static cl::opt<unsigned> repeat("repeat", cl::desc("Timed solves"),
                                cl::init(5),
                                cl::sub(mlir::loom::bench::dpCommand));
static cl::opt<double> memoryFraction(
    "memory-fraction",
    cl::desc("Memory limit as a fraction of the unconstrained plan's memory "
             "(0: no limit)"),
    cl::init(0), cl::sub(mlir::loom::bench::dpCommand));
static cl::opt<bool> distinctLayers(
    "distinct-layers",
    cl::desc("Draw every layer's costs anew instead of repeating one layer"),
    cl::init(false), cl::sub(mlir::loom::bench::dpCommand));

/// Seconds since `start`.
static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

int mlir::loom::bench::runDpBench() {
  if (candidates == 0 || repeat == 0) {
    llvm::errs() << "loom-bench dp: error: --"
                 << (candidates == 0 ? "candidates" : "repeat")
                 << " must be at least 1, got 0\n";
    return 1;
  }
  if (memoryFraction < 0) {
    llvm::errs() << "loom-bench dp: error: --memory-fraction must not be "
                    "negative, got "
                 << llvm::format("%g", memoryFraction.getValue()) << "\n";
    return 1;
  }
  SyntheticTransformerOptions graphOptions;
  graphOptions.layers = layers;
  graphOptions.candidates = candidates;
  graphOptions.seed = seed;
  graphOptions.identicalLayers = !distinctLayers;
  auto buildStart = std::chrono::steady_clock::now();
  CostGraph graph = buildSyntheticTransformer(graphOptions);
  double buildSeconds = secondsSince(buildStart);

  SearchOptions options;
  if (memoryFraction > 0)
    options.memoryLimit =
        memoryFraction * solveByElimination(graph).memory;

  // Wall time and process CPU time: on a shared machine the second is the
  // one to compare (docs/Performance.md).
  std::vector<double> times, cpuTimes;
  SearchSolution solution;
  for (unsigned run = 0; run < repeat; ++run) {
    auto start = std::chrono::steady_clock::now();
    std::clock_t cpuStart = std::clock();
    solution = solveByElimination(graph, options);
    cpuTimes.push_back(double(std::clock() - cpuStart) / CLOCKS_PER_SEC);
    times.push_back(secondsSince(start));
  }
  std::sort(times.begin(), times.end());
  std::sort(cpuTimes.begin(), cpuTimes.end());

  llvm::outs() << "nodes: " << graph.getNodes().size() << "\n"
               << "edges: " << graph.getEdges().size() << "\n"
               << "candidates: " << candidates << "\n"
               << "build_s: " << llvm::format("%.4f", buildSeconds) << "\n"
               << "solve_s: " << llvm::format("%.4f", times.front())
               << " (fastest of " << repeat << ")\n"
               << "solve_median_s: "
               << llvm::format("%.4f", times[times.size() / 2]) << "\n"
               << "solve_cpu_s: " << llvm::format("%.4f", cpuTimes.front())
               << " (fastest of " << repeat << ")\n";
  if (solution.choice.empty()) {
    llvm::outs() << "plan: none fits\n";
    return 0;
  }
  llvm::outs() << "cost_s: " << llvm::format("%.6g", solution.cost) << "\n"
               << "memory_bytes: " << llvm::format("%.6g", solution.memory)
               << "\n";
  if (options.memoryLimit < kInfiniteCost)
    llvm::outs() << "memory_limit_bytes: "
                 << llvm::format("%.6g", options.memoryLimit) << "\n"
                 << "lambda_s_per_byte: "
                 << llvm::format("%.6g", solution.lambda) << "\n";
  llvm::outs() << "exact: " << (solution.exact ? "yes" : "no") << "\n"
               << "eliminations: operator " << solution.nodeEliminations
               << ", edge " << solution.edgeEliminations << ", merge "
               << solution.mergeEliminations << ", contract "
               << solution.contractEliminations << "; enumerated "
               << solution.enumeratedNodes << "\n";
  return 0;
}

//===- CostGraph.h - The graph the strategy search solves -------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The strategy search's problem, free of IR: nodes with a few candidate
// strategies each, a cost and a memory per candidate; directed edges with a
// cost per (source candidate, destination candidate) pair. The total cost of
// a choice of one candidate per node is the sum of the chosen node costs and
// edge costs; its memory is the sum of the chosen node memories. The search
// minimizes cost subject to memory ≤ a limit.
//
// In Loom a node is a forward op carrying its backward and optimizer
// followers (so one decision prices forward + backward + update) and an
// edge is a tensor, priced by redistribution forward and backward; but the
// solver knows nothing of that, which keeps it testable against exhaustive
// enumeration on random graphs.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_SEARCH_COSTGRAPH_H
#define LOOM_ANALYSIS_SEARCH_COSTGRAPH_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace mlir::loom::dist {

/// A cost that rules a choice out (an invalid strategy pair).
inline constexpr double kInfiniteCost = std::numeric_limits<double>::infinity();

class CostGraph {
public:
  struct Node {
    std::string name;
    /// Per candidate: time in seconds and memory in bytes.
    std::vector<double> cost;
    std::vector<double> memory;
  };
  struct Edge {
    unsigned source;
    unsigned destination;
    /// cost[i * numDestinationCandidates + j]: the cost when the source takes
    /// candidate i and the destination candidate j (kInfiniteCost forbids).
    std::vector<double> cost;
  };

  /// Adds a node; `cost` and `memory` have one entry per candidate (at least
  /// one). Returns its id.
  unsigned addNode(std::string name, std::vector<double> cost,
                   std::vector<double> memory);
  /// Adds an edge; `cost` is row-major [source candidates][destination
  /// candidates]. Several edges between the same nodes are allowed.
  void addEdge(unsigned source, unsigned destination, std::vector<double> cost);

  const std::vector<Node> &getNodes() const { return nodes; }
  const std::vector<Edge> &getEdges() const { return edges; }
  size_t getNumCandidates(unsigned node) const {
    return nodes[node].cost.size();
  }

  /// The total cost and memory of `choice` (one candidate per node).
  double evaluateCost(const std::vector<unsigned> &choice) const;
  double evaluateMemory(const std::vector<unsigned> &choice) const;

private:
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

/// A solution.
struct SearchSolution {
  /// One candidate per node; empty when nothing fits.
  std::vector<unsigned> choice;
  double cost = kInfiniteCost;
  double memory = 0;
  /// The number of elimination steps of each kind, for reports and tests.
  int64_t nodeEliminations = 0, edgeEliminations = 0, mergeEliminations = 0,
          contractEliminations = 0, enumeratedNodes = 0;
  /// False when what remained after elimination was too large to enumerate
  /// and was settled by iterated conditional modes (a local optimum).
  bool exact = true;
  /// The Lagrange multiplier (seconds per byte) whose scalarized problem
  /// cost + lambda * memory gave `choice`; 0 when the memory limit did not
  /// bind, infinity when only the smallest-memory plan fits.
  double lambda = 0;
  /// Whether the repeated layers named in SearchOptions::layers were solved
  /// once and chained. False without a hint or when the hint failed a check;
  /// `layeredFallback` then says which (the plain solve ran instead, so the
  /// plan is as good either way).
  bool layered = false;
  std::string layeredFallback;
};

struct SearchOptions {
  /// The memory limit (bytes, summed node memory); infinity for none.
  double memoryLimit = std::numeric_limits<double>::infinity();
  /// The most candidate combinations the solver enumerates for one connected
  /// component left after elimination; larger ones fall back to iterated
  /// conditional modes and clear SearchSolution::exact.
  double maxEnumeratedCombinations = 1e6;
  /// A hint: the graph's repeated layers, layers[k][j] the id of layer k's
  /// j-th node. When layers 1..L-1 repeat layer 1 exactly (candidates,
  /// costs, memories, edges within a layer and from the previous one, edges
  /// from outside nodes) and consecutive layers meet through one node of
  /// the earlier layer (the residual stream), one layer is reduced per
  /// objective and chained (docs/Search.md, "Repeated layers"); otherwise
  /// the plain solve runs. Layer 0 may differ (it is solved with the rest).
  std::vector<std::vector<unsigned>> layers;
};

/// Solves by graph elimination (MindSpore's operator, edge, merge and
/// contract eliminations), then backtracks to read every node's candidate.
/// Exact for the unconstrained problem on graphs that eliminate fully
/// (series-parallel); what remains is solved by enumerating the remaining
/// nodes' candidates. Under a memory limit the solver minimizes
/// cost + λ·memory and searches λ (docs/Search.md: a Lagrangian relaxation,
/// exact whenever it returns a plan on the lower convex hull). With
/// `options.layers`, every solve reduces one repeated layer instead of all.
SearchSolution solveByElimination(const CostGraph &graph,
                                  const SearchOptions &options = {});

/// Tries every choice; for tests on small graphs.
SearchSolution solveExhaustively(const CostGraph &graph,
                                 const SearchOptions &options = {});

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_SEARCH_COSTGRAPH_H

//===- MemoryLimit.cpp - The memory limit by Lagrangian relaxation --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// solveByElimination: the cheapest plan whose memory fits the limit, found
// by solving the unconstrained problem min cost + lambda * memory for a few
// multipliers lambda ≥ 0 (docs/Search.md, "The memory limit"):
//
//  1. lambda = 0: the cheapest plan (the least memory among equally cheap
//     ones). If it fits, it is the answer, exact whenever elimination was.
//  2. Memory first (lambda → ∞ exactly): the smallest-memory plan. If even
//     that does not fit, no plan does: return an empty choice.
//  3. Walk the lower convex hull of the (memory, cost) points of all plans
//     between a feasible plan F and an infeasible one I, both on the hull:
//     solve at the slope lambda = (cost F − cost I) / (memory I − memory F),
//     where F and I score the same. A plan strictly below that score is a
//     hull point between them and replaces F if it fits, else I. When none
//     is, F and I are neighbours on the hull and F is the answer.
//  4. If the walk ended with F and I neighbours on the hull, every plan on
//     the segment between them scores the same at its slope, and the DP,
//     preferring less memory, returned F. Repeated layers make such ties
//     the rule: "k of 96 layers recompute" is one segment with 95 plans
//     inside. Sweep the segment by flipping the tie-breaker to "more
//     memory" for the nodes below a threshold t, bisecting t on the limit
//     (about log2(nodes) more solves, spent only when a probe at the middle
//     finds a plan strictly inside the segment).
//  5. Polish F under the limit: sweep the nodes, moving each to the
//     cheapest candidate (its edges priced at the neighbours' current
//     candidates) that keeps the total memory within the limit, until a
//     sweep changes nothing. This only ever lowers the cost; it reaches
//     plans on a hull segment's interior (collinear plans all score the
//     same at its slope, and the walk returns the segment's end) and plans
//     in dents that one node's move can reach.
//
// Every solve goes through the layered path when the options name repeated
// layers that pass analyzeLayers (Layered.cpp), else the plain one.
//
// Each walk step finds a new hull vertex, so it ends after at most as many
// solves as the hull has vertices between the two ends (a handful in
// practice; capped at 64). The answer is never worse than the cheapest
// feasible plan on the lower convex hull; a cheaper feasible plan off the
// hull (in a dent of the trade-off curve) is found only if the polish
// reaches it. That is the price of relaxation, and CostGraphTest measures
// how often it is paid on random graphs.
//
//===----------------------------------------------------------------------===//

#include "Elimination.h"
#include "Layered.h"

#include <cmath>
#include <optional>

using namespace mlir::loom::dist;
using namespace mlir::loom::dist::detail;

/// Every solve goes through the layered path when the options name repeated
// layers that pass analyzeLayers (Layered.cpp), else the plain one.
//
// Each walk step finds a new hull vertex; this bounds the walk should
/// rounding keep producing "new" ones.
static constexpr int kMaxHullSteps = 64;

/// A solution's score must undercut the line through F and I by this much
/// (relative) to count as a new hull point rather than a rounding artifact.
static constexpr double kHullTolerance = 1e-9;

/// The most polish sweeps; each costs one pass over every node's candidates
/// and edges.
static constexpr int kMaxPolishSweeps = 20;

/// Step 5: first-improvement coordinate descent on cost under the limit.
static void polishUnderLimit(const CostGraph &graph, SearchSolution &solution,
                             double memoryLimit) {
  const std::vector<CostGraph::Node> &nodes = graph.getNodes();
  const std::vector<CostGraph::Edge> &edges = graph.getEdges();
  std::vector<std::vector<unsigned>> incident(nodes.size());
  for (unsigned e = 0; e < edges.size(); ++e) {
    incident[edges[e].source].push_back(e);
    if (edges[e].destination != edges[e].source)
      incident[edges[e].destination].push_back(e);
  }
  std::vector<unsigned> original = solution.choice;
  std::vector<unsigned> &choice = solution.choice;
  // Node `v`'s own cost and its edges' at candidate `c`, the rest fixed.
  auto localCost = [&](unsigned v, unsigned c) {
    double total = nodes[v].cost[c];
    for (unsigned e : incident[v]) {
      const CostGraph::Edge &edge = edges[e];
      unsigned source = edge.source == v ? c : choice[edge.source];
      unsigned destination =
          edge.destination == v ? c : choice[edge.destination];
      total += edge.cost[source * graph.getNumCandidates(edge.destination) +
                         destination];
    }
    return total;
  };
  double memory = solution.memory;
  bool improved = false;
  for (int sweep = 0; sweep < kMaxPolishSweeps; ++sweep) {
    bool changed = false;
    for (unsigned v = 0; v < nodes.size(); ++v) {
      unsigned was = choice[v];
      double wasCost = localCost(v, was);
      double rest = memory - nodes[v].memory[was];
      detail::BestScore best;
      best.offer({wasCost, nodes[v].memory[was]});
      unsigned pick = was;
      for (unsigned c = 0; c < nodes[v].cost.size(); ++c)
        if (c != was && rest + nodes[v].memory[c] <= memoryLimit &&
            best.offer({localCost(v, c), nodes[v].memory[c]}))
          pick = c;
      if (pick == was || !(best.get().key < wasCost))
        continue; // only strictly cheaper moves, so the descent terminates
      choice[v] = pick;
      memory = rest + nodes[v].memory[pick];
      changed = improved = true;
    }
    if (!changed)
      break;
  }
  if (!improved)
    return;
  // The running memory total drifts by rounding; never let that break the
  // limit.
  double finalMemory = graph.evaluateMemory(choice);
  if (finalMemory > memoryLimit) {
    choice = std::move(original);
    return;
  }
  solution.cost = graph.evaluateCost(choice);
  solution.memory = finalMemory;
}

/// Step 4: the plans on the hull segment from F to I all score the same at
/// its slope; the DP returns the one with the least memory (F). Flipping the
/// tie-breaker to "more memory" for the nodes below a threshold t walks
/// along the segment as t grows (for repeated layers: the first t nodes'
/// layers take I's strategies, the rest F's). Probe the middle; if it gives
/// neither F nor I the segment has interior plans, and bisecting t on the
/// limit finds the one that fills the memory best. Memory need not be
/// monotone in t, so the cheapest feasible plan seen is kept.
static void sweepTies(const CostGraph &graph, const SearchOptions &options,
                      const LayerStructure *layers, SearchSolution &feasible,
                      const SearchSolution &infeasible) {
  Objective sweep;
  sweep.lambda =
      (feasible.cost - infeasible.cost) / (infeasible.memory - feasible.memory);
  if (!(sweep.lambda > 0) || !std::isfinite(sweep.lambda))
    return;
  auto isEndpoint = [&](const SearchSolution &solution) {
    double tolerance = kHullTolerance * infeasible.memory;
    return std::fabs(solution.memory - feasible.memory) <= tolerance ||
           std::fabs(solution.memory - infeasible.memory) <= tolerance;
  };
  unsigned low = 0, high = graph.getNodes().size();
  bool probed = false;
  while (high - low > 1) {
    sweep.moreMemoryBelow = low + (high - low) / 2;
    SearchSolution probe = solveForObjective(graph, sweep, options, layers);
    if (probe.choice.empty())
      return;
    if (!probed && isEndpoint(probe))
      return; // no plan inside the segment (the usual case off symmetry)
    probed = true;
    if (probe.memory <= options.memoryLimit) {
      if (probe.cost < feasible.cost) {
        probe.lambda = sweep.lambda;
        feasible = std::move(probe);
      }
      low = sweep.moreMemoryBelow;
    } else {
      high = sweep.moreMemoryBelow;
    }
  }
}

SearchSolution
mlir::loom::dist::solveByElimination(const CostGraph &graph,
                                     const SearchOptions &options) {
  std::optional<LayerStructure> structure;
  std::string whyNot;
  if (!options.layers.empty())
    structure = analyzeLayers(graph, options.layers, whyNot);
  const LayerStructure *layers = structure ? &*structure : nullptr;
  auto tell = [&](SearchSolution solution) {
    solution.layered = layers != nullptr;
    solution.layeredFallback = whyNot;
    return solution;
  };

  SearchSolution cheapest =
      solveForObjective(graph, Objective{}, options, layers);
  if (cheapest.choice.empty() || cheapest.memory <= options.memoryLimit)
    return tell(std::move(cheapest));

  Objective memoryFirst;
  memoryFirst.memoryFirst = true;
  SearchSolution feasible =
      solveForObjective(graph, memoryFirst, options, layers);
  feasible.lambda = kInfiniteCost;
  if (feasible.choice.empty() || feasible.memory > options.memoryLimit) {
    SearchSolution none = feasible;
    none.choice.clear();
    none.cost = kInfiniteCost;
    none.memory = 0;
    return tell(std::move(none));
  }

  SearchSolution infeasible = std::move(cheapest);
  // Whether the walk ended with F and I neighbours on the hull.
  bool adjacent = false;
  for (int step = 0; step < kMaxHullSteps; ++step) {
    double memoryGap = infeasible.memory - feasible.memory;
    double costGap = feasible.cost - infeasible.cost;
    if (!(memoryGap > 0) || !(costGap > 0))
      break;
    Objective slope;
    slope.lambda = costGap / memoryGap;
    SearchSolution next = solveForObjective(graph, slope, options, layers);
    if (next.choice.empty())
      break;
    double line = feasible.cost + slope.lambda * feasible.memory;
    double score = next.cost + slope.lambda * next.memory;
    if (!(score < line - kHullTolerance * std::fabs(line))) {
      adjacent = true;
      break;
    }
    next.lambda = slope.lambda;
    if (next.memory <= options.memoryLimit)
      feasible = std::move(next);
    else
      infeasible = std::move(next);
  }
  if (adjacent)
    sweepTies(graph, options, layers, feasible, infeasible);
  polishUnderLimit(graph, feasible, options.memoryLimit);
  return tell(std::move(feasible));
}

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
//
// Each walk step finds a new hull vertex, so it ends after at most as many
// solves as the hull has vertices between the two ends (a handful in
// practice; capped at 64). The answer is the cheapest feasible plan on the
// lower convex hull; a cheaper feasible plan off the hull (in a dent of the
// trade-off curve) is never found. That is the price of relaxation, and
// CostGraphTest measures how often it is paid on random graphs.
//
//===----------------------------------------------------------------------===//

#include "Elimination.h"

#include <cmath>

using namespace mlir::loom::dist;
using namespace mlir::loom::dist::detail;

/// Each walk step finds a new hull vertex; this bounds the walk should
/// rounding keep producing "new" ones.
static constexpr int kMaxHullSteps = 64;

/// A solution's score must undercut the line through F and I by this much
/// (relative) to count as a new hull point rather than a rounding artifact.
static constexpr double kHullTolerance = 1e-9;

SearchSolution mlir::loom::dist::solveByElimination(
    const CostGraph &graph, const SearchOptions &options) {
  SearchSolution cheapest = solveForObjective(graph, Objective{}, options);
  if (cheapest.choice.empty() || cheapest.memory <= options.memoryLimit)
    return cheapest;

  Objective memoryFirst;
  memoryFirst.memoryFirst = true;
  SearchSolution feasible = solveForObjective(graph, memoryFirst, options);
  feasible.lambda = kInfiniteCost;
  if (feasible.choice.empty() || feasible.memory > options.memoryLimit) {
    SearchSolution none = feasible;
    none.choice.clear();
    none.cost = kInfiniteCost;
    none.memory = 0;
    return none;
  }

  SearchSolution infeasible = std::move(cheapest);
  for (int step = 0; step < kMaxHullSteps; ++step) {
    double memoryGap = infeasible.memory - feasible.memory;
    double costGap = feasible.cost - infeasible.cost;
    if (!(memoryGap > 0) || !(costGap > 0))
      break;
    Objective slope;
    slope.lambda = costGap / memoryGap;
    SearchSolution next = solveForObjective(graph, slope, options);
    if (next.choice.empty())
      break;
    double line = feasible.cost + slope.lambda * feasible.memory;
    double score = next.cost + slope.lambda * next.memory;
    if (!(score < line - kHullTolerance * std::fabs(line)))
      break;
    next.lambda = slope.lambda;
    if (next.memory <= options.memoryLimit)
      feasible = std::move(next);
    else
      infeasible = std::move(next);
  }
  return feasible;
}

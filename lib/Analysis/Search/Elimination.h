//===- Elimination.h - One scalarized solve of a cost graph -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Internal to LoomSearch. The memory-limit search (MemoryLimit.cpp) solves
// the cost graph several times, each time for one scalar objective: either
// cost + lambda * memory, or memory first (cost breaking ties, forbidden
// pairs still forbidden). Elimination.cpp reduces the graph for such an
// objective and backtracks; Remainder.cpp settles what elimination leaves.
//
// Every value the solver adds up is a `Score`: the objective's key and the
// tie-breaker, both additive, so (key, tie) is the (cost, memory) pair in the
// objective's coordinates: (cost + lambda * memory, memory) or (memory,
// cost). Carrying the pair through every node and edge record lets the
// solver prefer the smaller memory among plans of equal cost, which is what
// the memory-limit search needs at the breakpoints of lambda.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_ANALYSIS_SEARCH_ELIMINATION_H
#define LOOM_LIB_ANALYSIS_SEARCH_ELIMINATION_H

#include "loom/Analysis/Search/CostGraph.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace mlir::loom::dist::detail {

/// Keys closer than this (relative) are ties, decided by the tie-breaker.
/// Sums taken in different orders differ by a few ulps; a tie must not be
/// decided by rounding.
inline constexpr double kTieTolerance = 1e-12;

/// What one solve minimizes.
struct Objective {
  /// Seconds per byte; ignored when `memoryFirst`.
  double lambda = 0;
  /// Minimize memory, then cost (the limit of lambda → ∞ done exactly).
  bool memoryFirst = false;
  /// Among plans of equal cost + lambda * memory, nodes with ids below this
  /// prefer more memory and the others less (the memory-limit search's tie
  /// sweep); 0 prefers less memory everywhere. Ignored when `memoryFirst`.
  unsigned moreMemoryBelow = 0;
};

/// An objective value: the key and the tie-breaker (both additive).
struct Score {
  double key;
  double tie;
};

inline Score operator+(Score a, Score b) {
  return {a.key + b.key, a.tie + b.tie};
}

/// The running minimum of a scan over scores: strictly smaller keys win;
/// keys within kTieTolerance of the best go to the smaller tie-breaker.
class BestScore {
public:
  BestScore() { reset(); }
  void reset() {
    best = {kInfiniteCost, kInfiniteCost};
    low = high = kInfiniteCost;
  }
  /// Takes `score` if it beats the best so far; says whether it did.
  bool offer(Score score) {
    if (score.key < low || (score.key <= high && score.tie < best.tie)) {
      best = score;
      if (std::isfinite(score.key)) {
        double tolerance = kTieTolerance * std::fabs(score.key);
        low = score.key - tolerance;
        high = score.key + tolerance;
      } else {
        low = high = score.key;
      }
      return true;
    }
    return false;
  }
  Score get() const { return best; }

private:
  Score best;
  double low, high;
};

/// The score of an edge entry, or of candidate of node `node`, under
/// `objective`.
inline Score makeScore(const Objective &objective, double cost, double memory,
                       unsigned node = ~0u) {
  if (objective.memoryFirst)
    return {std::isinf(cost) ? kInfiniteCost : memory, cost};
  double tie = node < objective.moreMemoryBelow ? -memory : memory;
  return {cost + objective.lambda * memory, tie};
}

/// A connected piece of the graph that elimination could not reduce: its
/// nodes (ids of the original graph), their candidate scores, and the edges
/// among them (scores row-major over [first node][second node]).
struct Remainder {
  std::vector<unsigned> nodes;
  std::vector<std::vector<Score>> nodeScores;
  struct Edge {
    /// Positions in `nodes`.
    unsigned first, second;
    std::vector<Score> scores;
  };
  std::vector<Edge> edges;
};

/// Picks one candidate per remainder node (positions parallel to
/// `remainder.nodes`). Enumerates every combination when there are at most
/// `maxCombinations` of them; otherwise runs iterated conditional modes from
/// a greedy start and clears `exact`.
std::vector<unsigned> solveRemainder(const Remainder &remainder,
                                     double maxCombinations, bool &exact);

/// A cost graph in one objective's scores: what elimination works on. The
/// layered solve (Layered.cpp) builds such graphs for one layer and for
/// what surrounds the layers.
struct ScoredGraph {
  std::vector<std::vector<Score>> nodes;
  struct Edge {
    unsigned source, destination;
    /// scores[i * nodes[destination].size() + j].
    std::vector<Score> scores;
  };
  std::vector<Edge> edges;
};

/// `graph` in `objective`'s scores; false when a node has no candidate or
/// mismatched vectors, or an edge a wrong-sized matrix.
bool scoreGraph(const CostGraph &graph, const Objective &objective,
                ScoredGraph &scored);

/// The score of `choice` on `graph` (a self-loop counts its diagonal).
Score evaluateScore(const ScoredGraph &graph,
                    const std::vector<unsigned> &choice);

class EliminatorImpl;

/// Graph elimination on a scored graph (Elimination.cpp): load, reduce
/// (optionally keeping some nodes), settle what remains, backtrack.
class Eliminator {
public:
  /// Elimination counts and exactness are added to `counts`.
  explicit Eliminator(SearchSolution &counts);
  ~Eliminator();
  Eliminator(Eliminator &&);
  Eliminator &operator=(Eliminator &&);

  /// Step 1: takes the graph, summing parallel edges and folding self-loops
  /// into their node.
  void load(ScoredGraph graph);
  /// Step 2: eliminates nodes of degree 1 and 2 until none is left, except
  /// those `keep` marks (indexed by node; empty keeps none).
  void reduce(const std::vector<bool> &keep = {});
  /// Step 3: picks the candidates of every node still alive.
  void solveRemainders(const SearchOptions &options,
                       std::vector<unsigned> &choice);
  /// Step 4: the eliminated nodes' candidates from those of the nodes still
  /// alive (already in `choice`, one entry per node).
  void backtrack(std::vector<unsigned> &choice) const;

  bool isAlive(unsigned node) const;
  /// A node's scores after the folds into it.
  const std::vector<Score> &getScores(unsigned node) const;
  /// The live edge between `a` and `b` oriented [a's][b's candidates];
  /// empty when there is none.
  std::vector<Score> getEdgeScores(unsigned a, unsigned b) const;

private:
  std::unique_ptr<EliminatorImpl> impl;
};

/// Solves `scored` (loaded, reduced, settled, backtracked) into `choice`.
void solveScored(ScoredGraph scored, const SearchOptions &options,
                 SearchSolution &counts, std::vector<unsigned> &choice);

struct LayerStructure;

/// Solves `graph` for one objective by elimination, remainder enumeration
/// and backtracking; with `layers` (checked by analyzeLayers), by reducing
/// one repeated layer per objective variant and chaining it (Layered.cpp).
/// The solution's cost and memory are evaluated on `graph`; its choice is
/// empty when every plan has infinite cost (or a node has no candidate).
SearchSolution solveForObjective(const CostGraph &graph,
                                 const Objective &objective,
                                 const SearchOptions &options,
                                 const LayerStructure *layers = nullptr);

} // namespace mlir::loom::dist::detail

#endif // LOOM_LIB_ANALYSIS_SEARCH_ELIMINATION_H

//===- Remainder.cpp - What graph elimination leaves behind ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Settles one connected component that elimination could not reduce (every
// node has three or more neighbours, or the component is a single node):
//
//  1. If the product of its candidate counts is at most the limit, enumerate
//     every combination depth-first in breadth-first node order, adding each
//     node's score and its edges to earlier nodes as the node is fixed. When
//     no score is negative, a partial sum already worse than the best
//     complete one prunes the subtree. Exact.
//  2. Otherwise: a greedy start (each node in order takes the candidate best
//     against the nodes already fixed), then iterated conditional modes
//     (each node in turn moves to its best candidate given all its
//     neighbours) until a sweep changes nothing or 100 sweeps have run. A
//     local optimum only, so the caller's solution is marked inexact.
//
//===----------------------------------------------------------------------===//

#include "Elimination.h"

#include <algorithm>

using namespace mlir::loom::dist;
using namespace mlir::loom::dist::detail;

namespace {

/// One end of a remainder edge, seen from the node at that end.
struct Incidence {
  const Remainder::Edge *edge;
  /// Whether the node is the edge's first (row) end.
  bool isFirst;
  /// The position of the node at the other end.
  unsigned other;
};

class RemainderSolver {
public:
  explicit RemainderSolver(const Remainder &remainder) : remainder(remainder) {
    size_t count = remainder.nodes.size();
    incidences.resize(count);
    earlier.resize(count);
    for (const Remainder::Edge &edge : remainder.edges) {
      incidences[edge.first].push_back({&edge, true, edge.second});
      incidences[edge.second].push_back({&edge, false, edge.first});
      unsigned later = std::max(edge.first, edge.second);
      earlier[later].push_back(
          {&edge, later == edge.first, std::min(edge.first, edge.second)});
    }
  }

  std::vector<unsigned> enumerate();
  std::vector<unsigned> iteratedConditionalModes();

private:
  size_t numCandidates(unsigned position) const {
    return remainder.nodeScores[position].size();
  }
  /// The edge's score when this end takes `mine` and the other `theirs`.
  Score edgeScore(const Incidence &incidence, unsigned mine,
                  unsigned theirs) const {
    const Remainder::Edge &edge = *incidence.edge;
    size_t columns = numCandidates(edge.second);
    return incidence.isFirst ? edge.scores[mine * columns + theirs]
                             : edge.scores[theirs * columns + mine];
  }
  /// Node `position` taking `candidate`, with its edges to the nodes in
  /// `neighbours` at their current choice.
  Score localScore(unsigned position, unsigned candidate,
                   const std::vector<Incidence> &neighbours) const {
    Score score = remainder.nodeScores[position][candidate];
    for (const Incidence &incidence : neighbours)
      score = score + edgeScore(incidence, candidate, current[incidence.other]);
    return score;
  }
  void descend(unsigned position, Score partial);

  const Remainder &remainder;
  std::vector<std::vector<Incidence>> incidences;
  /// Per position, the incidences whose other end comes earlier.
  std::vector<std::vector<Incidence>> earlier;
  std::vector<unsigned> current, best;
  BestScore bestScore;
  bool canPrune = false;
};

} // namespace

void RemainderSolver::descend(unsigned position, Score partial) {
  if (position == remainder.nodes.size()) {
    if (bestScore.offer(partial))
      best = current;
    return;
  }
  for (unsigned c = 0; c < numCandidates(position); ++c) {
    current[position] = c;
    Score score = partial + localScore(position, c, earlier[position]);
    if (std::isinf(score.key))
      continue;
    if (canPrune && score.key > bestScore.get().key * (1 + kTieTolerance))
      continue;
    descend(position + 1, score);
  }
}

std::vector<unsigned> RemainderSolver::enumerate() {
  canPrune = true;
  auto negative = [](const Score &score) { return score.key < 0; };
  for (const std::vector<Score> &scores : remainder.nodeScores)
    canPrune = canPrune && std::none_of(scores.begin(), scores.end(), negative);
  for (const Remainder::Edge &edge : remainder.edges)
    canPrune = canPrune &&
               std::none_of(edge.scores.begin(), edge.scores.end(), negative);
  current.assign(remainder.nodes.size(), 0);
  best = current;
  descend(0, Score{0, 0});
  return best;
}

std::vector<unsigned> RemainderSolver::iteratedConditionalModes() {
  size_t count = remainder.nodes.size();
  current.assign(count, 0);
  for (unsigned position = 0; position < count; ++position) {
    BestScore choice;
    for (unsigned c = 0; c < numCandidates(position); ++c)
      if (choice.offer(localScore(position, c, earlier[position])))
        current[position] = c;
  }
  constexpr int kMaxSweeps = 100;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed = false;
    for (unsigned position = 0; position < count; ++position) {
      // The current candidate goes first, so only a strict improvement (or a
      // tie with a smaller tie-breaker) moves the node.
      unsigned was = current[position];
      BestScore choice;
      choice.offer(localScore(position, was, incidences[position]));
      for (unsigned c = 0; c < numCandidates(position); ++c)
        if (c != was &&
            choice.offer(localScore(position, c, incidences[position]))) {
          current[position] = c;
          changed = true;
        }
    }
    if (!changed)
      break;
  }
  return current;
}

std::vector<unsigned> detail::solveRemainder(const Remainder &remainder,
                                             double maxCombinations,
                                             bool &exact) {
  double combinations = 1;
  for (const std::vector<Score> &scores : remainder.nodeScores)
    combinations *= scores.size();
  RemainderSolver solver(remainder);
  if (combinations <= maxCombinations) {
    exact = true;
    return solver.enumerate();
  }
  exact = false;
  return solver.iteratedConditionalModes();
}

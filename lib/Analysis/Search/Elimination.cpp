//===- Elimination.cpp - Graph elimination and backtracking ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Solves a cost graph for one scalar objective by MindSpore-style graph
// elimination (docs/Search.md, "The solver"):
//
//  1. Copy the graph into working form (scoreGraph, then load): per node its
//     candidate scores and an adjacency list of edge ids; per edge a flat
//     row-major score matrix.
//     Parallel edges are summed as they are added (edge elimination), with
//     the matrix transposed when the two run in opposite directions; a
//     self-loop's diagonal is added to its node.
//  2. Run a worklist over the nodes. A node with one edge is a leaf: folded
//     into its neighbour's candidate scores (merge elimination when the leaf
//     is the edge's source, contract elimination when it is the
//     destination). A node with two edges to two different neighbours u, w
//     is replaced by one edge u → w whose entry (i, k) is the best
//     u(i)–v(j)–w(k) path over v's candidates j (operator elimination). Each
//     fold keeps its argmin table. Nodes whose degree changes go back on the
//     worklist, so the whole reduction is linear in the graph size (times
//     the candidate products of the folds). Nodes the caller keeps (the
//     boundary of a repeated layer, Layered.cpp) are never eliminated.
//  3. What survives (nodes of degree ≥ 3, and one node per fully reduced
//     component) is split into connected components and handed to
//     solveRemainder.
//  4. Backtrack: replay the folds in reverse order, reading each eliminated
//     node's candidate from its argmin table given the candidates of the
//     nodes it was folded into (decided later, hence earlier in the replay).
//
//===----------------------------------------------------------------------===//

#include "Elimination.h"
#include "Layered.h"

#include <algorithm>
#include <unordered_map>

using namespace mlir::loom::dist;
using namespace mlir::loom::dist::detail;

namespace mlir::loom::dist::detail {

struct WorkNode {
  std::vector<Score> scores;
  /// Ids of incident edges; may hold dead ones until the next compaction.
  std::vector<unsigned> edges;
  bool alive = true;
};

struct WorkEdge {
  unsigned source, destination;
  /// scores[i * numCandidates(destination) + j].
  std::vector<Score> scores;
  bool alive = true;
};

/// How to read an eliminated node's candidate back.
struct Fold {
  enum class Kind { Leaf, Operator };
  Kind kind;
  unsigned node;
  /// Leaf: the node it was folded into (argmin indexed by its candidate).
  /// Operator: the two neighbours (argmin indexed [first][second]).
  unsigned first, second;
  std::vector<uint32_t> argmin;
};

class EliminatorImpl {
public:
  explicit EliminatorImpl(SearchSolution &counts) : counts(counts) {}

  void load(ScoredGraph graph);
  void reduce(const std::vector<bool> &keep);
  void solveRemainders(const SearchOptions &options,
                       std::vector<unsigned> &choice);
  void backtrack(std::vector<unsigned> &choice) const;

  size_t numCandidates(unsigned node) const {
    return nodes[node].scores.size();
  }
  void addEdge(unsigned source, unsigned destination,
               std::vector<Score> scores);
  /// The live edges of `node`, after dropping dead ids from its list.
  const std::vector<unsigned> &compactEdges(unsigned node);
  /// `edge`'s matrix oriented [from's candidates][other end's candidates].
  std::vector<Score> orientedFrom(unsigned edge, unsigned from) const;
  void push(unsigned node);
  void eliminateLeaf(unsigned node);
  void eliminateOperator(unsigned node);

  SearchSolution &counts;
  std::vector<WorkNode> nodes;
  std::vector<WorkEdge> edges;
  /// The live edge between two nodes, keyed by (min id, max id).
  std::unordered_map<uint64_t, unsigned> edgeBetween;
  std::vector<unsigned> worklist;
  std::vector<bool> queued;
  std::vector<Fold> folds;
};
} // namespace mlir::loom::dist::detail

static uint64_t pairKey(unsigned a, unsigned b) {
  if (a > b)
    std::swap(a, b);
  return (uint64_t(a) << 32) | b;
}

static std::vector<Score> transposed(const std::vector<Score> &scores,
                                     size_t rows, size_t columns) {
  std::vector<Score> result(scores.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < columns; ++j)
      result[j * rows + i] = scores[i * columns + j];
  return result;
}

void EliminatorImpl::addEdge(unsigned source, unsigned destination,
                             std::vector<Score> scores) {
  auto [it, inserted] =
      edgeBetween.try_emplace(pairKey(source, destination), edges.size());
  if (!inserted) {
    // Edge elimination: two edges between the same nodes price the same pair
    // of decisions, so one edge with the summed matrix replaces them.
    WorkEdge &existing = edges[it->second];
    if (existing.source != source)
      scores =
          transposed(scores, numCandidates(source), numCandidates(destination));
    for (size_t i = 0; i < scores.size(); ++i)
      existing.scores[i] = existing.scores[i] + scores[i];
    ++counts.edgeEliminations;
    return;
  }
  edges.push_back({source, destination, std::move(scores)});
  nodes[source].edges.push_back(it->second);
  nodes[destination].edges.push_back(it->second);
}

const std::vector<unsigned> &EliminatorImpl::compactEdges(unsigned node) {
  std::vector<unsigned> &list = nodes[node].edges;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](unsigned edge) { return !edges[edge].alive; }),
             list.end());
  return list;
}

std::vector<Score> EliminatorImpl::orientedFrom(unsigned edge,
                                                unsigned from) const {
  const WorkEdge &e = edges[edge];
  if (e.source == from)
    return e.scores;
  return transposed(e.scores, numCandidates(e.source),
                    numCandidates(e.destination));
}

void EliminatorImpl::push(unsigned node) {
  if (!queued[node]) {
    queued[node] = true;
    worklist.push_back(node);
  }
}

void EliminatorImpl::eliminateLeaf(unsigned node) {
  unsigned edge = nodes[node].edges.front();
  const WorkEdge &e = edges[edge];
  bool isSource = e.source == node;
  unsigned target = isSource ? e.destination : e.source;
  // Merge elimination folds a source leaf (e.g. a parameter's first user)
  // into its consumer, contract elimination a sink leaf into its producer;
  // MindSpore's names. The arithmetic is the same up to orientation.
  if (isSource)
    ++counts.mergeEliminations;
  else
    ++counts.contractEliminations;

  std::vector<Score> matrix = orientedFrom(edge, node); // [leaf][target]
  size_t leafCount = numCandidates(node), targetCount = numCandidates(target);
  const std::vector<Score> &leafScores = nodes[node].scores;
  std::vector<Score> &targetScores = nodes[target].scores;
  Fold fold{Fold::Kind::Leaf, node, target, 0, {}};
  fold.argmin.resize(targetCount);
  for (size_t j = 0; j < targetCount; ++j) {
    BestScore best;
    for (size_t i = 0; i < leafCount; ++i)
      if (best.offer(leafScores[i] + matrix[i * targetCount + j]))
        fold.argmin[j] = i;
    targetScores[j] = targetScores[j] + best.get();
  }
  folds.push_back(std::move(fold));

  nodes[node].alive = false;
  edges[edge].alive = false;
  edgeBetween.erase(pairKey(node, target));
  push(target);
}

void EliminatorImpl::eliminateOperator(unsigned node) {
  unsigned leftEdge = nodes[node].edges[0], rightEdge = nodes[node].edges[1];
  auto otherEnd = [&](unsigned edge) {
    const WorkEdge &e = edges[edge];
    return e.source == node ? e.destination : e.source;
  };
  unsigned left = otherEnd(leftEdge), right = otherEnd(rightEdge);
  ++counts.nodeEliminations;

  std::vector<Score> leftMatrix = orientedFrom(leftEdge, left);   // [u][v]
  std::vector<Score> rightMatrix = orientedFrom(rightEdge, node); // [v][w]
  size_t leftCount = numCandidates(left), count = numCandidates(node),
         rightCount = numCandidates(right);
  const std::vector<Score> &middle = nodes[node].scores;

  Fold fold{Fold::Kind::Operator, node, left, right, {}};
  fold.argmin.assign(leftCount * rightCount, 0);
  std::vector<Score> merged(leftCount * rightCount);
  // The right matrix's keys on their own, so the first pass below is a
  // plain running minimum over contiguous doubles (vectorized).
  std::vector<double> rightKeys(rightMatrix.size());
  for (size_t e = 0; e < rightMatrix.size(); ++e)
    rightKeys[e] = rightMatrix[e].key;
  std::vector<Score> base(count);
  std::vector<double> minKey(rightCount), high(rightCount);
  for (size_t i = 0; i < leftCount; ++i) {
    for (size_t j = 0; j < count; ++j)
      base[j] = leftMatrix[i * count + j] + middle[j];
    // Pass 1: the least key of every path u(i)–v(j)–w(k), per k.
    std::fill(minKey.begin(), minKey.end(), kInfiniteCost);
    for (size_t j = 0; j < count; ++j) {
      if (std::isinf(base[j].key))
        continue; // forbidden whatever w takes
      const double *row = &rightKeys[j * rightCount];
      double b = base[j].key;
      for (size_t k = 0; k < rightCount; ++k)
        minKey[k] = std::min(minKey[k], b + row[k]);
    }
    // Pass 2: among the paths within the tie window of that least key, the
    // one with the smallest tie-breaker (BestScore's order, in two passes).
    for (size_t k = 0; k < rightCount; ++k)
      high[k] = std::isinf(minKey[k])
                    ? minKey[k]
                    : minKey[k] + kTieTolerance * std::fabs(minKey[k]);
    Score *out = &merged[i * rightCount];
    uint32_t *argmin = &fold.argmin[i * rightCount];
    for (size_t k = 0; k < rightCount; ++k)
      out[k] = {kInfiniteCost, kInfiniteCost};
    for (size_t j = 0; j < count; ++j) {
      if (std::isinf(base[j].key))
        continue;
      const double *row = &rightKeys[j * rightCount];
      const Score *scores = &rightMatrix[j * rightCount];
      double b = base[j].key;
      for (size_t k = 0; k < rightCount; ++k) {
        if (b + row[k] > high[k])
          continue;
        Score path = base[j] + scores[k];
        if (path.tie < out[k].tie || std::isinf(out[k].key)) {
          out[k] = path;
          argmin[k] = j;
        }
      }
    }
  }
  folds.push_back(std::move(fold));

  nodes[node].alive = false;
  edges[leftEdge].alive = edges[rightEdge].alive = false;
  edgeBetween.erase(pairKey(node, left));
  edgeBetween.erase(pairKey(node, right));
  addEdge(left, right, std::move(merged));
  push(left);
  push(right);
}

void EliminatorImpl::solveRemainders(const SearchOptions &options,
                                     std::vector<unsigned> &choice) {
  std::vector<bool> visited(nodes.size(), false);
  std::vector<unsigned> position(nodes.size(), 0);
  for (unsigned start = 0; start < nodes.size(); ++start) {
    if (!nodes[start].alive || visited[start])
      continue;
    // Breadth-first order, so enumeration meets each node right after most
    // of its neighbours and can prune early.
    Remainder remainder;
    remainder.nodes.push_back(start);
    visited[start] = true;
    for (size_t next = 0; next < remainder.nodes.size(); ++next) {
      unsigned node = remainder.nodes[next];
      position[node] = next;
      for (unsigned edge : compactEdges(node)) {
        const WorkEdge &e = edges[edge];
        unsigned other = e.source == node ? e.destination : e.source;
        if (!visited[other]) {
          visited[other] = true;
          remainder.nodes.push_back(other);
        }
      }
    }
    for (unsigned node : remainder.nodes) {
      remainder.nodeScores.push_back(nodes[node].scores);
      for (unsigned edge : nodes[node].edges)
        if (edges[edge].source == node)
          remainder.edges.push_back({position[node],
                                     position[edges[edge].destination],
                                     edges[edge].scores});
    }
    bool exact = true;
    std::vector<unsigned> picked =
        solveRemainder(remainder, options.maxEnumeratedCombinations, exact);
    counts.exact = counts.exact && exact;
    counts.enumeratedNodes += remainder.nodes.size();
    for (size_t i = 0; i < remainder.nodes.size(); ++i)
      choice[remainder.nodes[i]] = picked[i];
  }
}

bool detail::scoreGraph(const CostGraph &graph, const Objective &objective,
                        ScoredGraph &scored) {
  const std::vector<CostGraph::Node> &graphNodes = graph.getNodes();
  unsigned numNodes = graphNodes.size();
  scored.nodes.assign(numNodes, {});
  for (unsigned v = 0; v < numNodes; ++v) {
    const CostGraph::Node &node = graphNodes[v];
    if (node.cost.empty() || node.cost.size() != node.memory.size())
      return false;
    std::vector<Score> &scores = scored.nodes[v];
    scores.reserve(node.cost.size());
    for (size_t i = 0; i < node.cost.size(); ++i)
      scores.push_back(makeScore(objective, node.cost[i], node.memory[i], v));
  }
  scored.edges.clear();
  scored.edges.reserve(graph.getEdges().size());
  for (const CostGraph::Edge &edge : graph.getEdges()) {
    if (edge.source >= numNodes || edge.destination >= numNodes ||
        edge.cost.size() != scored.nodes[edge.source].size() *
                                scored.nodes[edge.destination].size())
      return false;
    std::vector<Score> scores;
    scores.reserve(edge.cost.size());
    for (double cost : edge.cost)
      scores.push_back(makeScore(objective, cost, 0));
    scored.edges.push_back({edge.source, edge.destination, std::move(scores)});
  }
  return true;
}

Score detail::evaluateScore(const ScoredGraph &graph,
                            const std::vector<unsigned> &choice) {
  Score total{0, 0};
  for (size_t v = 0; v < graph.nodes.size(); ++v)
    total = total + graph.nodes[v][choice[v]];
  for (const ScoredGraph::Edge &edge : graph.edges)
    total =
        total +
        edge.scores[choice[edge.source] * graph.nodes[edge.destination].size() +
                    choice[edge.destination]];
  return total;
}

void EliminatorImpl::load(ScoredGraph graph) {
  unsigned numNodes = graph.nodes.size();
  nodes.assign(numNodes, {});
  for (unsigned v = 0; v < numNodes; ++v)
    nodes[v].scores = std::move(graph.nodes[v]);
  for (ScoredGraph::Edge &edge : graph.edges) {
    if (edge.source == edge.destination) {
      // A self-loop prices a node against itself: only its diagonal counts.
      size_t count = numCandidates(edge.source);
      for (size_t i = 0; i < count; ++i)
        nodes[edge.source].scores[i] =
            nodes[edge.source].scores[i] + edge.scores[i * count + i];
      ++counts.edgeEliminations;
      continue;
    }
    addEdge(edge.source, edge.destination, std::move(edge.scores));
  }
}

void EliminatorImpl::reduce(const std::vector<bool> &keep) {
  unsigned numNodes = nodes.size();
  queued.assign(numNodes, false);
  for (unsigned v = numNodes; v-- > 0;)
    push(v);
  while (!worklist.empty()) {
    unsigned node = worklist.back();
    worklist.pop_back();
    queued[node] = false;
    if (!nodes[node].alive || (!keep.empty() && keep[node]))
      continue;
    size_t degree = compactEdges(node).size();
    if (degree == 1)
      eliminateLeaf(node);
    else if (degree == 2)
      eliminateOperator(node);
  }
}

void EliminatorImpl::backtrack(std::vector<unsigned> &choice) const {
  for (auto fold = folds.rbegin(); fold != folds.rend(); ++fold) {
    size_t index = choice[fold->first];
    if (fold->kind == Fold::Kind::Operator)
      index = index * numCandidates(fold->second) + choice[fold->second];
    choice[fold->node] = fold->argmin[index];
  }
}

Eliminator::Eliminator(SearchSolution &counts)
    : impl(std::make_unique<EliminatorImpl>(counts)) {}
Eliminator::~Eliminator() = default;
Eliminator::Eliminator(Eliminator &&) = default;
Eliminator &Eliminator::operator=(Eliminator &&) = default;

void Eliminator::load(ScoredGraph graph) { impl->load(std::move(graph)); }
void Eliminator::reduce(const std::vector<bool> &keep) { impl->reduce(keep); }
void Eliminator::solveRemainders(const SearchOptions &options,
                                 std::vector<unsigned> &choice) {
  impl->solveRemainders(options, choice);
}
void Eliminator::backtrack(std::vector<unsigned> &choice) const {
  impl->backtrack(choice);
}
bool Eliminator::isAlive(unsigned node) const {
  return impl->nodes[node].alive;
}
const std::vector<Score> &Eliminator::getScores(unsigned node) const {
  return impl->nodes[node].scores;
}
std::vector<Score> Eliminator::getEdgeScores(unsigned a, unsigned b) const {
  auto it = impl->edgeBetween.find(pairKey(a, b));
  if (it == impl->edgeBetween.end())
    return {};
  return impl->orientedFrom(it->second, a);
}

void detail::solveScored(ScoredGraph scored, const SearchOptions &options,
                         SearchSolution &counts,
                         std::vector<unsigned> &choice) {
  EliminatorImpl eliminator(counts);
  eliminator.load(std::move(scored));
  eliminator.reduce({});
  choice.assign(eliminator.nodes.size(), 0);
  eliminator.solveRemainders(options, choice);
  eliminator.backtrack(choice);
}

SearchSolution detail::solveForObjective(const CostGraph &graph,
                                         const Objective &objective,
                                         const SearchOptions &options,
                                         const LayerStructure *layers) {
  SearchSolution solution;
  std::vector<unsigned> choice;
  if (layers) {
    if (!solveLayered(graph, *layers, objective, options, solution, choice))
      return solution;
  } else {
    ScoredGraph scored;
    if (!scoreGraph(graph, objective, scored))
      return solution;
    solveScored(std::move(scored), options, solution, choice);
  }
  double cost = graph.evaluateCost(choice);
  if (!(cost < kInfiniteCost))
    return solution; // every plan is forbidden (or, inexact, none was found)
  solution.cost = cost;
  solution.memory = graph.evaluateMemory(choice);
  solution.choice = std::move(choice);
  return solution;
}

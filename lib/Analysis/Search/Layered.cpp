//===- Layered.cpp - Repeated layers solved once --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A Transformer's cost graph is L copies of one layer joined by the
// residual stream, and plain elimination reduces every copy again for every
// objective the memory-limit search tries. With the layers named
// (SearchOptions::layers, layer k's j-th node matching layer 0's j-th):
//
//  1. analyzeLayers (once per solveByElimination): check that layers
//     1..L-1 are identical to layer 1 (nodes, edges within a layer, edges
//     from the previous layer, edges from outside nodes), that every edge
//     between layers joins consecutive ones through one separator node of
//     the earlier layer (the residual stream's last node), and that the
//     template reduces to its boundary. Layer 0 need not match: it stays in
//     the outer graph together with every outside node, so an embedding that
//     feeds layer 0 differently is no obstacle.
//  2. Per objective, per variant: a "unit" is one layer plus the previous
//     layer's separator as its entry. Reduce it by elimination with the
//     entry and the layer's own separator kept: what is left is a matrix
//     M[a][b], the best interior given entry candidate a and separator
//     candidate b, plus the folds that recover that interior. Layers share
//     a unit unless the objective treats them differently (the tie sweep's
//     threshold splits at most one layer); an outside node feeding layer
//     interiors (a rope table, a mask) is conditioned on: each of its
//     candidate combinations gets its own units and its own outer solve.
//  3. The outer graph: outside nodes, layer 0, and the separators x_1..x_L-1
//     chained by edges x_k-1 → x_k carrying M (the separators' own scores
//     are inside M). Elimination reduces that chain by operator eliminations
//     (K³ per layer) together with everything around it, and backtracks.
//  4. Expand: each layer's interior from its unit's folds at the candidates
//     of its two separators.
//
// Whatever fails a check falls back to the plain solve, so a wrong hint
// costs time, never correctness.
//
//===----------------------------------------------------------------------===//

#include "Layered.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir::loom::dist;
using namespace mlir::loom::dist::detail;

/// Conditioning on outside nodes multiplies the work by the number of their
/// candidate combinations; beyond this the plain solve is cheaper.
static constexpr size_t kMaxConditionedCombinations = 16;

namespace {

/// An edge of one layer in a form two layers can compare: its kind, its
/// layer-local ends and its matrix.
struct LayerEdgeKey {
  /// 0: within the unit (local ids); 1: from an outside node.
  int kind;
  unsigned a, b;
  /// The outside node's id (kind 1), else 0.
  unsigned outside;
  bool outsideIsSource;
  const std::vector<double> *cost;

  auto tie() const { return std::tie(kind, a, b, outside, outsideIsSource); }
  bool operator<(const LayerEdgeKey &other) const {
    if (tie() != other.tie())
      return tie() < other.tie();
    return *cost < *other.cost;
  }
  bool operator==(const LayerEdgeKey &other) const {
    return tie() == other.tie() && *cost == *other.cost;
  }
};

/// One reduced layer: the matrix between its two separators and the
/// eliminator whose folds give its interior.
struct Unit {
  std::vector<Score> matrix;
  Eliminator eliminator;
};

} // namespace

/// Builds layer `k`'s unit for `objective`, the outside nodes conditioned on
/// `combination` (one candidate per conditioned node); reduces it keeping
/// its two separators. False when other nodes survive.
static bool reduceUnit(const CostGraph &graph, const LayerStructure &structure,
                       const Objective &objective,
                       const std::vector<unsigned> &combination, unsigned k,
                       SearchSolution &counts, Unit &unit) {
  const std::vector<unsigned> &layer = structure.layers[k];
  unsigned n = layer.size(), exit = structure.separator;
  unsigned entryId = structure.layers[k - 1][exit];
  ScoredGraph scored;
  scored.nodes.resize(n + 1);
  for (unsigned j = 0; j < n; ++j) {
    const CostGraph::Node &node = graph.getNodes()[layer[j]];
    std::vector<Score> &scores = scored.nodes[j];
    for (size_t c = 0; c < node.cost.size(); ++c)
      scores.push_back(
          makeScore(objective, node.cost[c], node.memory[c], layer[j]));
  }
  // The entry's own score belongs to the previous layer's unit (or the
  // outer graph for layer 0).
  scored.nodes[n].assign(graph.getNumCandidates(entryId), Score{0, 0});
  for (const ConditionedEdge &edge : structure.conditionedEdges) {
    unsigned fixed = combination[edge.outside];
    std::vector<Score> &scores = scored.nodes[edge.position];
    size_t count = scores.size();
    size_t outsideCount =
        graph.getNumCandidates(structure.conditioned[edge.outside]);
    for (size_t c = 0; c < count; ++c) {
      double cost = edge.outsideIsSource
                        ? (*edge.cost)[fixed * count + c]
                        : (*edge.cost)[c * outsideCount + fixed];
      scores[c] = scores[c] + makeScore(objective, cost, 0);
    }
  }
  for (const UnitEdge &edge : structure.unitEdges) {
    std::vector<Score> scores;
    scores.reserve(edge.cost->size());
    for (double cost : *edge.cost)
      scores.push_back(makeScore(objective, cost, 0));
    scored.edges.push_back({edge.source, edge.destination, std::move(scores)});
  }

  std::vector<bool> keep(n + 1, false);
  keep[n] = keep[exit] = true;
  unit.eliminator.load(std::move(scored));
  unit.eliminator.reduce(keep);
  for (unsigned j = 0; j < n; ++j)
    if (j != exit && unit.eliminator.isAlive(j))
      return false;

  const std::vector<Score> &entry = unit.eliminator.getScores(n);
  const std::vector<Score> &own = unit.eliminator.getScores(exit);
  std::vector<Score> between = unit.eliminator.getEdgeScores(n, exit);
  size_t rows = entry.size(), columns = own.size();
  unit.matrix.resize(rows * columns);
  for (size_t a = 0; a < rows; ++a)
    for (size_t b = 0; b < columns; ++b) {
      Score score = entry[a] + own[b];
      if (!between.empty())
        score = score + between[a * columns + b];
      unit.matrix[a * columns + b] = score;
    }
  return true;
}

std::optional<LayerStructure>
detail::analyzeLayers(const CostGraph &graph,
                      const std::vector<std::vector<unsigned>> &layers,
                      std::string &whyNot) {
  const std::vector<CostGraph::Node> &nodes = graph.getNodes();
  const std::vector<CostGraph::Edge> &edges = graph.getEdges();
  size_t numLayers = layers.size();
  if (numLayers < 2) {
    whyNot = "fewer than two layers";
    return std::nullopt;
  }
  size_t n = layers[0].size();
  if (n == 0) {
    whyNot = "layer 0 is empty";
    return std::nullopt;
  }
  std::vector<int> layerOf(nodes.size(), -1);
  std::vector<unsigned> positionOf(nodes.size(), 0);
  for (size_t k = 0; k < numLayers; ++k) {
    if (layers[k].size() != n) {
      whyNot = "layer " + std::to_string(k) + " has " +
               std::to_string(layers[k].size()) + " nodes, layer 0 has " +
               std::to_string(n);
      return std::nullopt;
    }
    for (size_t j = 0; j < n; ++j) {
      unsigned id = layers[k][j];
      if (id >= nodes.size() || layerOf[id] >= 0) {
        whyNot = "node " + std::to_string(id) +
                 (id >= nodes.size() ? " does not exist" : " is listed twice");
        return std::nullopt;
      }
      layerOf[id] = k;
      positionOf[id] = j;
      if (nodes[id].cost.empty() ||
          nodes[id].cost.size() != nodes[id].memory.size()) {
        whyNot = "node " + std::to_string(id) + " has no candidate";
        return std::nullopt;
      }
      const CostGraph::Node &model = nodes[layers[1][j]];
      if (k >= 2 &&
          (nodes[id].cost != model.cost || nodes[id].memory != model.memory)) {
        whyNot = "node " + std::to_string(id) + " (layer " + std::to_string(k) +
                 ", position " + std::to_string(j) + ") differs from layer 1's";
        return std::nullopt;
      }
    }
  }

  // The separator: the one position of the earlier layer that every edge
  // between consecutive layers touches.
  std::optional<unsigned> separator;
  for (const CostGraph::Edge &edge : edges) {
    int from = layerOf[edge.source], to = layerOf[edge.destination];
    if (from < 0 || to < 0 || from == to)
      continue;
    if (std::abs(from - to) != 1) {
      whyNot = "an edge joins layers " + std::to_string(from) + " and " +
               std::to_string(to);
      return std::nullopt;
    }
    unsigned earlier = from < to ? edge.source : edge.destination;
    if (separator && *separator != positionOf[earlier]) {
      whyNot = "consecutive layers meet through more than one node "
               "(positions " +
               std::to_string(*separator) + " and " +
               std::to_string(positionOf[earlier]) + ")";
      return std::nullopt;
    }
    separator = positionOf[earlier];
  }
  if (!separator) {
    whyNot = "no edge joins consecutive layers";
    return std::nullopt;
  }

  LayerStructure structure;
  structure.layers = layers;
  structure.separator = *separator;
  auto isOuter = [&](unsigned id) {
    return layerOf[id] <= 0 || positionOf[id] == *separator;
  };
  // Per layer ≥ 1, its unit's edges and its edges from outside nodes.
  std::vector<std::vector<LayerEdgeKey>> perLayer(numLayers);
  std::map<unsigned, unsigned> conditionedIndex;
  for (unsigned index = 0; index < edges.size(); ++index) {
    const CostGraph::Edge *edge = &edges[index];
    int from = layerOf[edge->source], to = layerOf[edge->destination];
    int layer = std::max(from, to);
    if (from >= 0 && to >= 0 && layer >= 1) {
      // Within layer `layer`, or from layer - 1's separator into it.
      auto local = [&](unsigned id) {
        return layerOf[id] == layer ? positionOf[id] : unsigned(n);
      };
      perLayer[layer].push_back({0, local(edge->source),
                                 local(edge->destination), 0, false,
                                 &edge->cost});
      continue;
    }
    // Other edges between outer nodes stay in the outer graph.
    if (isOuter(edge->source) && isOuter(edge->destination)) {
      structure.outerEdges.push_back(index);
      continue;
    }
    // An outside node and an interior node of layer `layer` ≥ 1.
    bool outsideIsSource = from < 0;
    unsigned outside = outsideIsSource ? edge->source : edge->destination;
    unsigned inside = outsideIsSource ? edge->destination : edge->source;
    conditionedIndex.try_emplace(outside, 0);
    perLayer[layer].push_back(
        {1, positionOf[inside], 0, outside, outsideIsSource, &edge->cost});
  }
  for (std::vector<LayerEdgeKey> &list : perLayer)
    std::sort(list.begin(), list.end());
  for (size_t k = 2; k < numLayers; ++k)
    if (perLayer[k] != perLayer[1]) {
      whyNot =
          "the edges of layer " + std::to_string(k) + " differ from layer 1's";
      return std::nullopt;
    }

  for (auto &[id, index] : conditionedIndex) {
    index = structure.conditioned.size();
    structure.conditioned.push_back(id);
    structure.combinations *= graph.getNumCandidates(id);
    if (structure.combinations > kMaxConditionedCombinations) {
      whyNot = "the outside nodes feeding every layer have more than " +
               std::to_string(kMaxConditionedCombinations) +
               " candidate combinations";
      return std::nullopt;
    }
  }
  for (const LayerEdgeKey &key : perLayer[1]) {
    if (key.kind == 0)
      structure.unitEdges.push_back({key.a, key.b, key.cost});
    else
      structure.conditionedEdges.push_back({conditionedIndex[key.outside],
                                            key.a, key.outsideIsSource,
                                            key.cost});
  }

  structure.outerIndex.assign(nodes.size(), ~0u);
  for (unsigned id = 0; id < nodes.size(); ++id)
    if (isOuter(id)) {
      structure.outerIndex[id] = structure.outerNodes.size();
      structure.outerNodes.push_back(id);
    }

  // The template must reduce to its separators whatever the objective
  // (elimination's steps depend only on the graph's shape).
  SearchSolution counts;
  Unit unit{{}, Eliminator(counts)};
  if (!reduceUnit(graph, structure, Objective{},
                  std::vector<unsigned>(structure.conditioned.size(), 0), 1,
                  counts, unit)) {
    whyNot = "a layer does not reduce to its two separators";
    return std::nullopt;
  }
  return structure;
}

bool detail::solveLayered(const CostGraph &graph,
                          const LayerStructure &structure,
                          const Objective &objective,
                          const SearchOptions &options, SearchSolution &counts,
                          std::vector<unsigned> &choice) {
  const std::vector<CostGraph::Node> &nodes = graph.getNodes();
  const std::vector<CostGraph::Edge> &edges = graph.getEdges();
  for (const CostGraph::Node &node : nodes)
    if (node.cost.empty() || node.cost.size() != node.memory.size())
      return false;
  const std::vector<std::vector<unsigned>> &layers = structure.layers;
  size_t numLayers = layers.size(), n = layers[0].size();
  unsigned exit = structure.separator;

  // Which layers see the same objective: all of them unless the tie sweep's
  // threshold falls inside the layers.
  std::vector<unsigned> variantOf(numLayers, 0);
  std::vector<unsigned> representative = {1};
  if (!objective.memoryFirst && objective.moreMemoryBelow > 0) {
    std::map<std::vector<bool>, unsigned> variants;
    representative.clear();
    for (size_t k = 1; k < numLayers; ++k) {
      std::vector<bool> pattern(n);
      for (size_t j = 0; j < n; ++j)
        pattern[j] = layers[k][j] < objective.moreMemoryBelow;
      auto [it, inserted] =
          variants.try_emplace(pattern, representative.size());
      if (inserted)
        representative.push_back(k);
      variantOf[k] = it->second;
    }
  }

  BestScore best;
  std::vector<Unit> bestUnits;
  std::vector<unsigned> bestOuter;
  std::vector<unsigned> combination(structure.conditioned.size(), 0);
  for (size_t c = 0; c < structure.combinations; ++c) {
    // Combination c in mixed radix over the conditioned nodes.
    size_t rest = c;
    for (size_t i = 0; i < combination.size(); ++i) {
      size_t count = graph.getNumCandidates(structure.conditioned[i]);
      combination[i] = rest % count;
      rest /= count;
    }
    std::vector<Unit> units;
    for (unsigned k : representative) {
      units.push_back({{}, Eliminator(counts)});
      if (!reduceUnit(graph, structure, objective, combination, k, counts,
                      units.back()))
        return false; // analyzeLayers checked this; never for a sound hint
    }

    // The outer graph; the separators of layers 1..L-1 score zero there
    // (their scores are inside the chain's matrices).
    ScoredGraph outer;
    outer.nodes.resize(structure.outerNodes.size());
    for (size_t index = 0; index < structure.outerNodes.size(); ++index) {
      unsigned id = structure.outerNodes[index];
      const CostGraph::Node &node = nodes[id];
      std::vector<Score> &scores = outer.nodes[index];
      scores.reserve(node.cost.size());
      for (size_t i = 0; i < node.cost.size(); ++i)
        scores.push_back(
            makeScore(objective, node.cost[i], node.memory[i], id));
    }
    for (size_t k = 1; k < numLayers; ++k)
      std::fill(outer.nodes[structure.outerIndex[layers[k][exit]]].begin(),
                outer.nodes[structure.outerIndex[layers[k][exit]]].end(),
                Score{0, 0});
    for (size_t i = 0; i < combination.size(); ++i) {
      std::vector<Score> &scores =
          outer.nodes[structure.outerIndex[structure.conditioned[i]]];
      for (size_t candidate = 0; candidate < scores.size(); ++candidate)
        if (candidate != combination[i])
          scores[candidate] = {kInfiniteCost, kInfiniteCost};
    }
    for (unsigned e : structure.outerEdges) {
      const CostGraph::Edge &edge = edges[e];
      std::vector<Score> scores;
      scores.reserve(edge.cost.size());
      for (double cost : edge.cost)
        scores.push_back(makeScore(objective, cost, 0));
      outer.edges.push_back({structure.outerIndex[edge.source],
                             structure.outerIndex[edge.destination],
                             std::move(scores)});
    }
    for (size_t k = 1; k < numLayers; ++k)
      outer.edges.push_back({structure.outerIndex[layers[k - 1][exit]],
                             structure.outerIndex[layers[k][exit]],
                             units[variantOf[k]].matrix});

    std::vector<unsigned> outerChoice;
    if (structure.combinations == 1) {
      solveScored(std::move(outer), options, counts, outerChoice);
    } else {
      solveScored(outer, options, counts, outerChoice);
      if (!best.offer(evaluateScore(outer, outerChoice)) && !bestOuter.empty())
        continue;
    }
    bestOuter = std::move(outerChoice);
    bestUnits = std::move(units);
  }

  // Expand: the outer nodes, then each layer's interior between its
  // separators.
  choice.assign(nodes.size(), 0);
  for (size_t index = 0; index < structure.outerNodes.size(); ++index)
    choice[structure.outerNodes[index]] = bestOuter[index];
  std::vector<unsigned> local(n + 1);
  for (size_t k = 1; k < numLayers; ++k) {
    local[n] = choice[layers[k - 1][exit]];
    local[exit] = choice[layers[k][exit]];
    bestUnits[variantOf[k]].eliminator.backtrack(local);
    for (size_t j = 0; j < n; ++j)
      choice[layers[k][j]] = local[j];
  }
  return true;
}

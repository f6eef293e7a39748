//===- Layered.h - Repeated layers solved once ------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Internal to LoomSearch. When the caller names the graph's repeated layers
// (SearchOptions::layers), analyzeLayers checks once per solveByElimination
// that they really repeat and meet through one separator node, and records
// how the graph splits into the layer template and what surrounds it;
// solveLayered then solves one objective with the template reduced once per
// variant instead of once per layer (Layered.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_ANALYSIS_SEARCH_LAYERED_H
#define LOOM_LIB_ANALYSIS_SEARCH_LAYERED_H

#include "Elimination.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::loom::dist::detail {

/// An edge of the layer template in the unit's local ids: 0..n-1 are the
/// layer's nodes by position, n is the previous layer's separator.
struct UnitEdge {
  unsigned source, destination;
  const std::vector<double> *cost;
};

/// An edge between an outside node that feeds every layer and a layer node
/// other than the separator: priced per candidate of the outside node.
struct ConditionedEdge {
  /// Index into LayerStructure::conditioned.
  unsigned outside;
  unsigned position;
  bool outsideIsSource;
  const std::vector<double> *cost;
};

/// How a graph with repeated layers 0..L-1 splits. Layer 0 stays in the
/// outer graph with every node outside the layers; layers 1..L-1 repeat a
/// template (layer 1's) whose only contact with the previous layer is that
/// layer's separator node, so each reduces to a matrix between the two
/// separators. Points into the CostGraph it was made from.
struct LayerStructure {
  std::vector<std::vector<unsigned>> layers;
  /// The separator's position in a layer.
  unsigned separator = 0;
  /// The template's edges (layer 1's, equal in every later layer).
  std::vector<UnitEdge> unitEdges;
  /// Outside nodes with edges into the template's interior (every layer
  /// alike), their candidate combinations, and those edges.
  std::vector<unsigned> conditioned;
  size_t combinations = 1;
  std::vector<ConditionedEdge> conditionedEdges;
  /// The outer graph: outside nodes, layer 0 and the separators of layers
  /// 1..L-1 (in id order), each node's index in it (~0u when absent), and
  /// the ids of the graph's edges among them.
  std::vector<unsigned> outerNodes;
  std::vector<unsigned> outerIndex;
  std::vector<unsigned> outerEdges;
};

/// Checks `layers` against `graph`: equal sizes, distinct ids, layers
/// 1..L-1 identical to layer 1 (candidate counts, costs, memories, edges
/// within a layer and from the previous one, edges from outside nodes),
/// consecutive layers meeting through one separator, no edge skipping a
/// layer, at most 16 candidate combinations of the outside nodes feeding
/// layer interiors, and the template reducing to its two separators. On
/// failure returns nothing and says why in `whyNot`.
std::optional<LayerStructure>
analyzeLayers(const CostGraph &graph,
              const std::vector<std::vector<unsigned>> &layers,
              std::string &whyNot);

/// One objective's solve with the layers chained: fills `choice` (one
/// candidate per node of `graph`) and adds the elimination counts to
/// `counts`. False when a node has no candidate or mismatched vectors.
bool solveLayered(const CostGraph &graph, const LayerStructure &structure,
                  const Objective &objective, const SearchOptions &options,
                  SearchSolution &counts, std::vector<unsigned> &choice);

} // namespace mlir::loom::dist::detail

#endif // LOOM_LIB_ANALYSIS_SEARCH_LAYERED_H

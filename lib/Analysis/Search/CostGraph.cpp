//===- CostGraph.cpp - The strategy search's graph and its brute force ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Building and evaluating a cost graph, and the exhaustive solver the tests
// hold the elimination solver against: it tries every choice, so it is only
// for graphs with a few thousand combinations.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Search/CostGraph.h"

#include "Elimination.h"

#include <cassert>

using namespace mlir::loom::dist;

unsigned CostGraph::addNode(std::string name, std::vector<double> cost,
                            std::vector<double> memory) {
  assert(!cost.empty() && cost.size() == memory.size() &&
         "a node needs one cost and one memory per candidate");
  nodes.push_back({std::move(name), std::move(cost), std::move(memory)});
  return nodes.size() - 1;
}

void CostGraph::addEdge(unsigned source, unsigned destination,
                        std::vector<double> cost) {
  assert(source < nodes.size() && destination < nodes.size() &&
         cost.size() ==
             getNumCandidates(source) * getNumCandidates(destination) &&
         "an edge needs a [source][destination] candidate matrix");
  edges.push_back({source, destination, std::move(cost)});
}

/// Whether `choice` names one existing candidate of every node.
static bool isValidChoice(const std::vector<CostGraph::Node> &nodes,
                          const std::vector<unsigned> &choice) {
  if (choice.size() != nodes.size())
    return false;
  for (size_t v = 0; v < nodes.size(); ++v)
    if (choice[v] >= nodes[v].cost.size())
      return false;
  return true;
}

double CostGraph::evaluateCost(const std::vector<unsigned> &choice) const {
  if (!isValidChoice(nodes, choice))
    return kInfiniteCost;
  double total = 0;
  for (size_t v = 0; v < nodes.size(); ++v)
    total += nodes[v].cost[choice[v]];
  for (const Edge &edge : edges)
    total += edge.cost[choice[edge.source] *
                           getNumCandidates(edge.destination) +
                       choice[edge.destination]];
  return total;
}

double CostGraph::evaluateMemory(const std::vector<unsigned> &choice) const {
  if (!isValidChoice(nodes, choice))
    return kInfiniteCost;
  double total = 0;
  for (size_t v = 0; v < nodes.size(); ++v)
    total += nodes[v].memory[choice[v]];
  return total;
}

SearchSolution mlir::loom::dist::solveExhaustively(const CostGraph &graph,
                                                   const SearchOptions &options) {
  SearchSolution solution;
  const std::vector<CostGraph::Node> &nodes = graph.getNodes();
  solution.enumeratedNodes = nodes.size();
  if (nodes.empty()) {
    solution.cost = 0;
    return solution;
  }
  for (const CostGraph::Node &node : nodes)
    if (node.cost.empty())
      return solution;

  // The same order as the elimination solver: cost, then memory on ties.
  detail::BestScore best;
  std::vector<unsigned> choice(nodes.size(), 0);
  while (true) {
    double cost = graph.evaluateCost(choice);
    double memory = graph.evaluateMemory(choice);
    if (cost < kInfiniteCost && memory <= options.memoryLimit &&
        best.offer({cost, memory}))
      solution.choice = choice;
    // Odometer step, last node fastest.
    size_t v = nodes.size();
    while (v > 0 && ++choice[v - 1] == nodes[v - 1].cost.size())
      choice[--v] = 0;
    if (v == 0)
      break;
  }
  if (!solution.choice.empty()) {
    solution.cost = graph.evaluateCost(solution.choice);
    solution.memory = graph.evaluateMemory(solution.choice);
  }
  return solution;
}

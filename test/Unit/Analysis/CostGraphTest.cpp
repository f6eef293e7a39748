//===- CostGraphTest.cpp - The strategy search's DP solver ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Holds solveByElimination against hand-computed optima for each kind of
// elimination (chain, ring, diamond, star, parallel and opposite edges,
// self-loops, forbidden pairs), and against solveExhaustively on a few
// hundred random series-parallel and general graphs with fixed seeds. Under
// a memory limit the solver must be feasible, never beat the exhaustive
// constrained optimum, and reach the cheapest feasible plan on the lower
// convex hull of the (memory, cost) trade-off (computed by brute force);
// how often that equals the true constrained optimum is recorded.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Search/CostGraph.h"
#include "loom/Analysis/Search/SyntheticGraphs.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace mlir::loom::dist;

namespace {

constexpr double kInf = kInfiniteCost;

/// Relative closeness for costs summed in different orders.
::testing::AssertionResult near(double actual, double expected) {
  if (actual == expected)
    return ::testing::AssertionSuccess();
  double scale = std::max({std::fabs(actual), std::fabs(expected), 1e-300});
  if (std::fabs(actual - expected) <= 1e-9 * scale)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << actual << " differs from " << expected << " by more than 1e-9";
}

/// Node with the given costs and zero memory.
unsigned addFreeNode(CostGraph &graph, std::vector<double> cost) {
  std::vector<double> memory(cost.size(), 0);
  return graph.addNode("n" + std::to_string(graph.getNodes().size()),
                       std::move(cost), std::move(memory));
}

/// Checks what every solution must satisfy and returns it.
SearchSolution solveAndCheck(const CostGraph &graph,
                             const SearchOptions &options = {}) {
  SearchSolution solution = solveByElimination(graph, options);
  if (!solution.choice.empty()) {
    EXPECT_EQ(solution.choice.size(), graph.getNodes().size());
    EXPECT_TRUE(near(graph.evaluateCost(solution.choice), solution.cost));
    EXPECT_TRUE(near(graph.evaluateMemory(solution.choice), solution.memory));
    EXPECT_LE(solution.memory, options.memoryLimit);
  }
  return solution;
}

/// The number of nodes decided by folding or by the remainder.
int64_t decided(const SearchSolution &solution) {
  return solution.nodeEliminations + solution.mergeEliminations +
         solution.contractEliminations + solution.enumeratedNodes;
}

//===----------------------------------------------------------------------===//
// Hand-made cases, one per elimination
//===----------------------------------------------------------------------===//

TEST(CostGraphTest, EvaluatesCostAndMemoryOfAChoice) {
  CostGraph graph;
  graph.addNode("a", {1, 2}, {10, 20});
  graph.addNode("b", {3, 4, 5}, {30, 40, 50});
  graph.addEdge(0, 1, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(graph.evaluateCost({1, 2}), 2 + 5 + 5);
  EXPECT_EQ(graph.evaluateMemory({1, 2}), 20 + 50);
  EXPECT_EQ(graph.evaluateCost({0, 1}), 1 + 4 + 1);
  // A choice of the wrong size or with a missing candidate prices nothing.
  EXPECT_EQ(graph.evaluateCost({0}), kInf);
  EXPECT_EQ(graph.evaluateCost({0, 3}), kInf);
}

TEST(CostGraphTest, ChainFoldsLeavesIntoTheLastNode) {
  // a → b → c → d; the cheap node candidates disagree, so the optimum pays
  // for exactly one redistribution: a, b take 0, and c, d take 1 at edge
  // cost 1 rather than b's candidate 1 (cost 4) or c, d's candidate 0 (6).
  CostGraph graph;
  addFreeNode(graph, {0, 1});
  addFreeNode(graph, {0, 4});
  addFreeNode(graph, {3, 0});
  addFreeNode(graph, {3, 0});
  std::vector<double> mismatch = {0, 1, 1, 0};
  graph.addEdge(0, 1, mismatch);
  graph.addEdge(1, 2, mismatch);
  graph.addEdge(2, 3, mismatch);
  SearchSolution solution = solveAndCheck(graph);
  EXPECT_EQ(solution.choice, (std::vector<unsigned>{0, 0, 1, 1}));
  EXPECT_EQ(solution.cost, 1);
  EXPECT_TRUE(solution.exact);
  EXPECT_EQ(solution.lambda, 0);
  // A chain reduces to one node; every other node is a leaf when folded.
  EXPECT_EQ(solution.enumeratedNodes, 1);
  EXPECT_EQ(solution.mergeEliminations + solution.contractEliminations, 3);
  EXPECT_EQ(decided(solution), 4);
}

TEST(CostGraphTest, LeafFoldsInBothDirections) {
  // The same two-node problem written with the edge in either direction:
  // node 0 is the edge's source (merge elimination) or its destination
  // (contract elimination), and the asymmetric matrix must be read the
  // right way round in both. Optimum: leaf 1, other 0 at 5 + 0 + 1.
  for (bool leafIsSource : {true, false}) {
    CostGraph graph;
    graph.addNode("leaf", {5, 5}, {0, 0});
    graph.addNode("other", {0, 2}, {0, 0});
    // leaf→other: [leaf][other]; other→leaf: the transpose.
    std::vector<double> leafToOther = {7, 9, 1, 8};
    if (leafIsSource)
      graph.addEdge(0, 1, leafToOther);
    else
      graph.addEdge(1, 0, {7, 1, 9, 8});
    SearchSolution solution = solveAndCheck(graph);
    EXPECT_EQ(solution.choice, (std::vector<unsigned>{1, 0}));
    EXPECT_EQ(solution.cost, 6);
    EXPECT_EQ(solution.mergeEliminations, leafIsSource ? 1 : 0);
    EXPECT_EQ(solution.contractEliminations, leafIsSource ? 0 : 1);
    EXPECT_EQ(solution.enumeratedNodes, 1);
  }
}

TEST(CostGraphTest, RingNeedsOperatorAndEdgeEliminations) {
  // A 5-cycle has no leaf: the first folds must be operator eliminations,
  // and closing the last triangle makes two parallel edges. Node i prefers
  // candidate i % 2, but an odd cycle cannot alternate: the cheapest plan
  // breaks it at the single costliest-to-skip place.
  CostGraph graph;
  for (unsigned i = 0; i < 5; ++i)
    addFreeNode(graph, i % 2 ? std::vector<double>{3, 0}
                             : std::vector<double>{0, 3});
  // Equal candidates on both ends cost 2 (say, both replicated); opposite
  // ones are free.
  for (unsigned i = 0; i < 5; ++i)
    graph.addEdge(i, (i + 1) % 5, {2, 0, 0, 2});
  SearchSolution solution = solveAndCheck(graph);
  // Alternating 0,1,0,1,0 pays 2 on the edge 4→0: total 2. Any plan must
  // pay ≥ 2: some edge joins equal candidates, or a node takes its dear one.
  EXPECT_EQ(solution.cost, 2);
  EXPECT_TRUE(near(solveExhaustively(graph).cost, 2));
  EXPECT_EQ(solution.nodeEliminations, 3);
  EXPECT_EQ(solution.edgeEliminations, 1);
  EXPECT_EQ(solution.mergeEliminations + solution.contractEliminations, 1);
  EXPECT_EQ(solution.enumeratedNodes, 1);
}

TEST(CostGraphTest, DiamondIsSeriesParallel) {
  // s → {x, y} → t, the shape of a residual block. Candidate 1 is cheaper
  // everywhere except on x, but switching x alone costs both its edges.
  CostGraph graph;
  unsigned s = addFreeNode(graph, {4, 1});
  unsigned x = addFreeNode(graph, {0, 3});
  unsigned y = addFreeNode(graph, {4, 1});
  unsigned t = addFreeNode(graph, {4, 1});
  std::vector<double> mismatch = {0, 5, 5, 0};
  graph.addEdge(s, x, mismatch);
  graph.addEdge(s, y, mismatch);
  graph.addEdge(x, t, mismatch);
  graph.addEdge(y, t, mismatch);
  SearchSolution solution = solveAndCheck(graph);
  EXPECT_EQ(solution.choice, (std::vector<unsigned>{1, 1, 1, 1}));
  EXPECT_EQ(solution.cost, 6);
  EXPECT_EQ(solution.enumeratedNodes, 1);
  EXPECT_GE(solution.edgeEliminations, 1);
  EXPECT_EQ(decided(solution), 4);
}

TEST(CostGraphTest, StarFoldsEveryLeaf) {
  // A hub with two producers and two consumers, as a matmul with weight,
  // bias and two users. Each leaf's best candidate depends on the hub's.
  CostGraph graph;
  unsigned hub = addFreeNode(graph, {1, 0, 1});
  std::vector<double> leafCost = {0, 0, 0};
  // Leaf candidate i agrees with hub candidate i at no cost; disagreeing
  // costs 2, except that leaves cannot take hub candidate 1's pairing with
  // their own candidate 1 (forbidden), so with hub 1 each leaf pays 2.
  std::vector<double> hubToLeaf = {0, 2, 2, 2, kInf, 2, 2, 2, 0};
  std::vector<double> leafToHub = {0, 2, 2, 2, kInf, 2, 2, 2, 0};
  for (int i = 0; i < 2; ++i)
    graph.addEdge(addFreeNode(graph, leafCost), hub, leafToHub);
  for (int i = 0; i < 2; ++i)
    graph.addEdge(hub, addFreeNode(graph, leafCost), hubToLeaf);
  SearchSolution solution = solveAndCheck(graph);
  // Hub 0 (cost 1) with leaves agreeing beats hub 1 (0 + 4 × 2).
  EXPECT_EQ(solution.cost, 1);
  EXPECT_EQ(solution.choice[hub] == 0 || solution.choice[hub] == 2, true);
  for (unsigned leaf = 1; leaf < 5; ++leaf)
    EXPECT_EQ(solution.choice[leaf], solution.choice[hub]);
  // Each producer folds into the hub by merge elimination; once two leaves
  // are gone the hub itself has degree 2 and goes by operator elimination,
  // and the rest is a chain: five nodes, one left.
  EXPECT_GE(solution.mergeEliminations, 2);
  EXPECT_EQ(solution.enumeratedNodes, 1);
  EXPECT_EQ(decided(solution), 5);
}

TEST(CostGraphTest, ParallelAndOppositeEdgesAreSummed) {
  // Two edges a → b and one b → a (a tensor each way, as a parameter read
  // and its gradient written back). The edges are summed into one, the
  // opposite one transposed. The matrices are asymmetric so that reading
  // b → a untransposed would make (a=0, b=1) look cheaper (10 + 0 against
  // 1 + 20) and change the answer.
  CostGraph graph;
  unsigned a = addFreeNode(graph, {0, 0});
  unsigned b = addFreeNode(graph, {0, 0});
  graph.addEdge(a, b, {15, 5, 0, 15});
  graph.addEdge(a, b, {15, 5, 1, 15});
  graph.addEdge(b, a, {15, 0, 20, 15}); // [b][a]: (b=0, a=1) costs 0
  SearchSolution solution = solveAndCheck(graph);
  EXPECT_EQ(solution.choice, (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(solution.cost, 1);
  EXPECT_EQ(solution.edgeEliminations, 2);
  EXPECT_EQ(solution.enumeratedNodes, 1);
  EXPECT_EQ(decided(solution), 2);
}

TEST(CostGraphTest, TwoCycleInsideAChain) {
  // x → a ⇄ b → y: the 2-cycle between a and b collapses into one edge and
  // the rest is a chain; compare with brute force.
  CostGraph graph;
  unsigned x = addFreeNode(graph, {1, 2, 3});
  unsigned a = addFreeNode(graph, {3, 1, 2});
  unsigned b = addFreeNode(graph, {2, 3, 1});
  unsigned y = addFreeNode(graph, {1, 1, 1});
  graph.addEdge(x, a, {0, 1, 2, 1, 0, 1, 2, 1, 0});
  graph.addEdge(a, b, {0, 4, 1, 2, 0, 3, 1, 1, 0});
  graph.addEdge(b, a, {0, 1, 5, 2, 0, 1, 1, 2, 0});
  graph.addEdge(b, y, {0, 3, 3, 3, 0, 3, 3, 3, 0});
  SearchSolution solution = solveAndCheck(graph);
  SearchSolution reference = solveExhaustively(graph);
  EXPECT_TRUE(near(solution.cost, reference.cost));
  EXPECT_EQ(solution.edgeEliminations, 1);
  EXPECT_EQ(solution.enumeratedNodes, 1);
}

TEST(CostGraphTest, SelfLoopCountsItsDiagonal) {
  // An edge from a node to itself prices the node against itself: only the
  // diagonal can ever be paid.
  CostGraph graph;
  addFreeNode(graph, {1, 2});
  graph.addEdge(0, 0, {5, 0, 0, 0});
  SearchSolution solution = solveAndCheck(graph);
  EXPECT_EQ(solution.choice, (std::vector<unsigned>{1}));
  EXPECT_EQ(solution.cost, 2);
  EXPECT_EQ(solution.edgeEliminations, 1);
}

TEST(CostGraphTest, ForbiddenPairsAreAvoided) {
  // The cheap candidates of a and b may not meet (an invalid strategy
  // pair), so one of them pays for its dear candidate.
  CostGraph graph;
  unsigned a = addFreeNode(graph, {0, 3});
  unsigned b = addFreeNode(graph, {0, 2});
  unsigned c = addFreeNode(graph, {0, 0});
  graph.addEdge(a, b, {kInf, 0, 0, 0});
  graph.addEdge(b, c, {0, 0, 0, 0});
  SearchSolution solution = solveAndCheck(graph);
  EXPECT_EQ(solution.cost, 2);
  EXPECT_EQ(solution.choice[a], 0u);
  EXPECT_EQ(solution.choice[b], 1u);
}

TEST(CostGraphTest, EverythingForbiddenGivesNoChoice) {
  // Every pair on the ring is forbidden somewhere: no plan exists.
  CostGraph graph;
  for (int i = 0; i < 4; ++i)
    addFreeNode(graph, {0, 0});
  graph.addEdge(0, 1, {0, kInf, kInf, 0});
  graph.addEdge(1, 2, {0, kInf, kInf, 0});
  graph.addEdge(2, 3, {0, kInf, kInf, 0});
  graph.addEdge(3, 0, {kInf, 0, 0, kInf});
  SearchSolution solution = solveByElimination(graph);
  EXPECT_TRUE(solution.choice.empty());
  EXPECT_EQ(solution.cost, kInf);
  EXPECT_TRUE(solveExhaustively(graph).choice.empty());
  // The same with a memory limit: nothing to trade.
  SearchOptions limited;
  limited.memoryLimit = 1;
  EXPECT_TRUE(solveByElimination(graph, limited).choice.empty());
}

TEST(CostGraphTest, CompleteGraphIsEnumerated) {
  // K4 has no node of degree below 3: elimination can do nothing and the
  // four nodes are enumerated (3^4 = 81 combinations).
  CostGraph graph;
  for (int i = 0; i < 4; ++i)
    addFreeNode(graph, {double(i), 1, 2});
  for (unsigned i = 0; i < 4; ++i)
    for (unsigned j = i + 1; j < 4; ++j)
      graph.addEdge(i, j, {0, 1, 3, 2, 0, 1, 1, 3, 0});
  SearchSolution solution = solveAndCheck(graph);
  EXPECT_EQ(solution.enumeratedNodes, 4);
  EXPECT_EQ(solution.nodeEliminations + solution.mergeEliminations +
                solution.contractEliminations,
            0);
  EXPECT_TRUE(solution.exact);
  EXPECT_TRUE(near(solution.cost, solveExhaustively(graph).cost));
}

TEST(CostGraphTest, LargeRemainderFallsBackToLocalSearch) {
  // The same K4 with an enumeration limit below 81: iterated conditional
  // modes settles it, the solution says it is inexact, and it is a valid
  // plan no better than the optimum and locally optimal.
  CostGraph graph;
  for (int i = 0; i < 4; ++i)
    addFreeNode(graph, {double(i), 1, 2});
  for (unsigned i = 0; i < 4; ++i)
    for (unsigned j = i + 1; j < 4; ++j)
      graph.addEdge(i, j, {0, 1, 3, 2, 0, 1, 1, 3, 0});
  SearchOptions options;
  options.maxEnumeratedCombinations = 80;
  SearchSolution solution = solveAndCheck(graph, options);
  EXPECT_FALSE(solution.exact);
  ASSERT_EQ(solution.choice.size(), 4u);
  EXPECT_GE(solution.cost, solveExhaustively(graph).cost - 1e-12);
  for (unsigned node = 0; node < 4; ++node)
    for (unsigned c = 0; c < 3; ++c) {
      std::vector<unsigned> moved = solution.choice;
      moved[node] = c;
      EXPECT_GE(graph.evaluateCost(moved), solution.cost - 1e-12);
    }
}

TEST(CostGraphTest, DisconnectedPiecesAreSolvedSeparately) {
  // Two components and an isolated node; each is solved on its own.
  CostGraph graph;
  addFreeNode(graph, {2, 1});
  addFreeNode(graph, {1, 2});
  addFreeNode(graph, {5, 4, 3});
  addFreeNode(graph, {0, 1});
  graph.addEdge(0, 1, {0, 1, 1, 0});
  graph.addEdge(3, 3, {1, 0, 0, 0});
  SearchSolution solution = solveAndCheck(graph);
  EXPECT_TRUE(near(solution.cost, solveExhaustively(graph).cost));
  EXPECT_EQ(solution.choice[2], 2u);
  EXPECT_EQ(solution.enumeratedNodes, 3);
}

//===----------------------------------------------------------------------===//
// The memory limit
//===----------------------------------------------------------------------===//

/// One node whose candidates are the given (cost, memory) plans.
CostGraph planGraph(std::vector<double> cost, std::vector<double> memory) {
  CostGraph graph;
  graph.addNode("plans", std::move(cost), std::move(memory));
  return graph;
}

TEST(CostGraphTest, MemoryLimitPicksTheCheapestPlanThatFits) {
  // Plans (memory, cost) (30, 1), (20, 1.5), (10, 3): all vertices of the
  // lower convex hull, so each limit's cheapest fitting plan is found by
  // the hull walk alone.
  CostGraph graph = planGraph({1, 1.5, 3}, {30, 20, 10});
  SearchOptions options;
  options.memoryLimit = 25;
  SearchSolution solution = solveAndCheck(graph, options);
  EXPECT_EQ(solution.choice, (std::vector<unsigned>{1}));
  EXPECT_GT(solution.lambda, 0);
  options.memoryLimit = 30;
  EXPECT_EQ(solveAndCheck(graph, options).choice,
            (std::vector<unsigned>{0}));
  options.memoryLimit = 10;
  EXPECT_EQ(solveAndCheck(graph, options).choice,
            (std::vector<unsigned>{2}));
  options.memoryLimit = 9;
  SearchSolution none = solveByElimination(graph, options);
  EXPECT_TRUE(none.choice.empty());
  EXPECT_EQ(none.cost, kInf);
}

TEST(CostGraphTest, CollinearPlansArePolished) {
  // (30, 1), (20, 2), (10, 3) lie on one line: at its slope all three score
  // the same and the hull walk ends at the smallest plan; the polish under
  // the limit then moves the node to the cheaper plan that still fits.
  CostGraph graph = planGraph({1, 2, 3}, {30, 20, 10});
  SearchOptions options;
  options.memoryLimit = 25;
  EXPECT_EQ(solveAndCheck(graph, options).choice,
            (std::vector<unsigned>{1}));
}

/// Nodes a and b whose candidates must agree (other pairs are forbidden),
/// with a's candidates the given plans and b free: no single node can
/// change its candidate alone.
CostGraph lockedPlanGraph(std::vector<double> cost,
                          std::vector<double> memory) {
  CostGraph graph;
  size_t count = cost.size();
  graph.addNode("a", std::move(cost), std::move(memory));
  graph.addNode("b", std::vector<double>(count, 0),
                std::vector<double>(count, 0));
  std::vector<double> agree(count * count, kInf);
  for (size_t i = 0; i < count; ++i)
    agree[i * count + i] = 0;
  graph.addEdge(0, 1, agree);
  return graph;
}

TEST(CostGraphTest, LagrangianMissesPlansAboveTheHull) {
  // The documented gap of the relaxation: plan 1 (memory 20, cost 2.9) lies
  // above the segment from plan 0 (30, 1) to plan 2 (10, 3), so no lambda
  // makes it optimal, and the polish cannot reach it by moving one node.
  // Under a limit of 25 the solver returns plan 2 although plan 1 fits and
  // is cheaper. Move plan 1 below the segment and it is found.
  SearchOptions options;
  options.memoryLimit = 25;
  CostGraph dented = lockedPlanGraph({1, 2.9, 3}, {30, 20, 10});
  EXPECT_EQ(solveAndCheck(dented, options).choice,
            (std::vector<unsigned>{2, 2}));
  EXPECT_EQ(solveExhaustively(dented, options).choice,
            (std::vector<unsigned>{1, 1}));
  CostGraph convex = lockedPlanGraph({1, 1.9, 3}, {30, 20, 10});
  EXPECT_EQ(solveAndCheck(convex, options).choice,
            (std::vector<unsigned>{1, 1}));
}

TEST(CostGraphTest, RepeatedLayersFillTheMemoryLimit) {
  // Eight identical layers, each two nodes whose candidates must agree, so
  // no single node can move alone: a layer is fast (cost 1, memory 10) or
  // lean (cost 2, memory 5), as with and without activation recompute.
  // Every mix of k fast layers lies on one hull segment, and at its slope
  // all score the same. Under a limit of 55 the best plan has three fast
  // layers (cost 13); the hull walk alone stops at all lean (cost 16), the
  // tie sweep finds a three-fast mix.
  CostGraph graph;
  std::vector<double> agree = {0, kInf, kInf, 0};
  for (int layer = 0; layer < 8; ++layer) {
    unsigned a = graph.addNode("a", {1, 2}, {10, 5});
    unsigned b = graph.addNode("b", {0, 0}, {0, 0});
    graph.addEdge(a, b, agree);
    if (layer > 0)
      graph.addEdge(a - 1, a, {0, 0, 0, 0});
  }
  SearchOptions options;
  options.memoryLimit = 55;
  SearchSolution solution = solveAndCheck(graph, options);
  EXPECT_EQ(solution.cost, 13);
  EXPECT_EQ(solution.memory, 55);
  EXPECT_TRUE(near(solveExhaustively(graph, options).cost, 13));
}

TEST(CostGraphTest, EqualCostPrefersLessMemory) {
  // Two plans of equal cost: the solver returns the smaller one even
  // without a limit, so a limit between them needs no trade-off.
  CostGraph graph;
  graph.addNode("a", {1, 1}, {20, 10});
  graph.addNode("b", {0, 0}, {5, 5});
  graph.addEdge(0, 1, {0, 0, 0, 0});
  SearchSolution solution = solveAndCheck(graph);
  EXPECT_EQ(solution.choice[0], 1u);
  EXPECT_EQ(solution.memory, 15);
  EXPECT_EQ(solution.lambda, 0);
}

//===----------------------------------------------------------------------===//
// Random graphs against brute force
//===----------------------------------------------------------------------===//

class RandomGraphs {
public:
  explicit RandomGraphs(uint64_t seed) : engine(seed) {}

  /// Uniform in [0, 1), independent of the standard library's distributions.
  double uniform() { return double(engine() >> 11) * 0x1.0p-53; }
  unsigned below(unsigned bound) { return unsigned(uniform() * bound); }

  unsigned addNode(CostGraph &graph) {
    unsigned count = 1 + below(4);
    std::vector<double> cost(count), memory(count);
    for (unsigned i = 0; i < count; ++i) {
      cost[i] = uniform() * 10;
      memory[i] = std::floor(uniform() * 100);
    }
    return graph.addNode("n", cost, memory);
  }

  void addEdge(CostGraph &graph, unsigned source, unsigned destination,
               double forbidden) {
    size_t size = graph.getNumCandidates(source) *
                  graph.getNumCandidates(destination);
    std::vector<double> cost(size);
    for (double &entry : cost)
      entry = uniform() < forbidden ? kInf : uniform() * 10;
    graph.addEdge(source, destination, cost);
  }

  /// A two-terminal series-parallel graph built by random series and
  /// parallel compositions, with random edge directions and a few leaves.
  CostGraph seriesParallel(unsigned maxNodes) {
    CostGraph graph;
    addNode(graph);
    addNode(graph);
    std::vector<std::pair<unsigned, unsigned>> edges = {{0, 1}};
    while (graph.getNodes().size() < maxNodes) {
      unsigned pick = below(edges.size());
      auto [from, to] = edges[pick];
      double kind = uniform();
      if (kind < 0.45) { // series: subdivide the edge
        unsigned middle = addNode(graph);
        edges[pick] = {from, middle};
        edges.push_back({middle, to});
      } else if (kind < 0.85) { // parallel: a second path of length two
        unsigned middle = addNode(graph);
        edges.push_back({from, middle});
        edges.push_back({middle, to});
      } else { // a leaf hanging off one end
        unsigned leaf = addNode(graph);
        edges.push_back({uniform() < 0.5 ? from : to, leaf});
      }
      if (uniform() < 0.1) // and now and then a parallel edge
        edges.push_back(edges[below(edges.size())]);
    }
    for (auto [from, to] : edges) {
      if (uniform() < 0.5)
        std::swap(from, to);
      addEdge(graph, from, to, 0.1);
    }
    return graph;
  }

  /// Any graph: each pair connected with probability `density`, sometimes
  /// twice, sometimes both ways; now and then a self-loop.
  CostGraph general(unsigned maxNodes, double density) {
    CostGraph graph;
    unsigned count = 2 + below(maxNodes - 1);
    for (unsigned i = 0; i < count; ++i)
      addNode(graph);
    for (unsigned i = 0; i < count; ++i) {
      if (uniform() < 0.05)
        addEdge(graph, i, i, 0.1);
      for (unsigned j = i + 1; j < count; ++j)
        while (uniform() < density) {
          bool forward = uniform() < 0.5;
          addEdge(graph, forward ? i : j, forward ? j : i, 0.15);
          density *= 0.3;
        }
    }
    return graph;
  }

private:
  std::mt19937_64 engine;
};

/// The cheapest plan with memory ≤ `limit` among the vertices of the lower
/// convex hull of all finite plans' (memory, cost) points: what the
/// Lagrangian search promises. Infinity when no hull vertex fits.
double bestFeasibleHullVertex(const CostGraph &graph, double limit) {
  std::vector<std::pair<double, double>> points; // (memory, cost)
  std::vector<unsigned> choice(graph.getNodes().size(), 0);
  while (true) {
    double cost = graph.evaluateCost(choice);
    if (cost < kInf)
      points.push_back({graph.evaluateMemory(choice), cost});
    size_t v = choice.size();
    while (v > 0 && ++choice[v - 1] == graph.getNumCandidates(v - 1))
      choice[--v] = 0;
    if (v == 0)
      break;
  }
  std::sort(points.begin(), points.end());
  // The Pareto front, memory ascending and cost strictly descending...
  std::vector<std::pair<double, double>> front;
  for (const auto &point : points)
    if (front.empty() || point.second < front.back().second)
      front.push_back(point);
  // ... and its lower convex hull (strict vertices only).
  std::vector<std::pair<double, double>> hull;
  for (const auto &point : front) {
    while (hull.size() >= 2) {
      const auto &a = hull[hull.size() - 2], &b = hull.back();
      double cross = (b.first - a.first) * (point.second - a.second) -
                     (b.second - a.second) * (point.first - a.first);
      if (cross > 0)
        break;
      hull.pop_back();
    }
    hull.push_back(point);
  }
  double best = kInf;
  for (const auto &[memory, cost] : hull)
    if (memory <= limit)
      best = std::min(best, cost);
  return best;
}

/// Unconstrained: the elimination solver's cost equals brute force.
void expectExactOn(const CostGraph &graph, const std::string &what) {
  SCOPED_TRACE(what);
  SearchSolution solution = solveAndCheck(graph);
  SearchSolution reference = solveExhaustively(graph);
  ASSERT_EQ(solution.choice.empty(), reference.choice.empty());
  if (reference.choice.empty())
    return;
  EXPECT_TRUE(solution.exact);
  EXPECT_TRUE(near(solution.cost, reference.cost));
  EXPECT_EQ(decided(solution), int64_t(graph.getNodes().size()));
}

TEST(CostGraphTest, RandomSeriesParallelGraphsEliminateExactly) {
  RandomGraphs random(20261122);
  for (int trial = 0; trial < 300; ++trial) {
    CostGraph graph = random.seriesParallel(3 + trial % 6);
    expectExactOn(graph, "series-parallel graph " + std::to_string(trial));
    // Series-parallel graphs (with leaves) reduce to one node.
    EXPECT_EQ(solveByElimination(graph).enumeratedNodes, 1)
        << "series-parallel graph " << trial;
  }
}

TEST(CostGraphTest, RandomGeneralGraphsMatchBruteForce) {
  RandomGraphs random(8);
  int withRemainder = 0;
  for (int trial = 0; trial < 300; ++trial) {
    CostGraph graph = random.general(8, 0.3 + 0.1 * (trial % 5));
    expectExactOn(graph, "general graph " + std::to_string(trial));
    SearchSolution solution = solveByElimination(graph);
    withRemainder += solution.enumeratedNodes > 1;
  }
  // Dense enough that enumeration is exercised too, not just folding.
  EXPECT_GT(withRemainder, 30);
  ::testing::Test::RecordProperty("graphs_with_remainder", withRemainder);
}

TEST(CostGraphTest, RandomGraphsUnderAMemoryLimit) {
  RandomGraphs random(1234);
  int constrained = 0, equalToOptimum = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE("memory-limited graph " + std::to_string(trial));
    CostGraph graph = trial % 2 ? random.general(7, 0.4)
                                : random.seriesParallel(3 + trial % 5);
    SearchSolution cheapest = solveExhaustively(graph);
    if (cheapest.choice.empty())
      continue;
    // Limits from below the smallest plan to the cheapest plan's memory.
    double smallest = kInf;
    {
      std::vector<unsigned> choice(graph.getNodes().size(), 0);
      while (true) {
        if (graph.evaluateCost(choice) < kInf)
          smallest = std::min(smallest, graph.evaluateMemory(choice));
        size_t v = choice.size();
        while (v > 0 && ++choice[v - 1] == graph.getNumCandidates(v - 1))
          choice[--v] = 0;
        if (v == 0)
          break;
      }
    }
    for (double fraction : {-0.1, 0.0, 0.3, 0.6, 0.9}) {
      SearchOptions options;
      options.memoryLimit =
          std::floor(smallest + fraction * (cheapest.memory - smallest));
      SearchSolution reference = solveExhaustively(graph, options);
      SearchSolution solution = solveAndCheck(graph, options);
      ASSERT_EQ(solution.choice.empty(), reference.choice.empty())
          << "limit " << options.memoryLimit;
      if (reference.choice.empty())
        continue;
      ++constrained;
      EXPECT_LE(solution.memory, options.memoryLimit);
      EXPECT_GE(solution.cost, reference.cost * (1 - 1e-9));
      EXPECT_LE(solution.cost,
                bestFeasibleHullVertex(graph, options.memoryLimit) *
                    (1 + 1e-9))
          << "limit " << options.memoryLimit
          << ": worse than the best feasible hull vertex";
      equalToOptimum += near(solution.cost, reference.cost) ? 1 : 0;
    }
  }
  ::testing::Test::RecordProperty("constrained_cases", constrained);
  ::testing::Test::RecordProperty("equal_to_constrained_optimum",
                                  equalToOptimum);
  std::printf("memory-limited: %d of %d constrained cases reach the exact "
              "constrained optimum\n",
              equalToOptimum, constrained);
  EXPECT_GT(constrained, 500);
}

//===----------------------------------------------------------------------===//
// Transformer-shaped graphs
//===----------------------------------------------------------------------===//

TEST(CostGraphTest, SyntheticTransformerReducesToOneNode) {
  // Too large for brute force: check it eliminates completely and that no
  // single node can change its candidate to make the plan cheaper (which
  // any optimum satisfies).
  SyntheticTransformerOptions options;
  options.layers = 4;
  options.candidates = 6;
  options.seed = 3;
  options.identicalLayers = false;
  CostGraph graph = buildSyntheticTransformer(options);
  ASSERT_EQ(graph.getNodes().size(), 3 + 4 * kSyntheticNodesPerLayer);
  SearchSolution solution = solveAndCheck(graph);
  ASSERT_FALSE(solution.choice.empty());
  EXPECT_TRUE(solution.exact);
  EXPECT_EQ(solution.enumeratedNodes, 1);
  EXPECT_EQ(decided(solution), int64_t(graph.getNodes().size()));
  for (unsigned node = 0; node < graph.getNodes().size(); ++node)
    for (unsigned c = 0; c < graph.getNumCandidates(node); ++c) {
      std::vector<unsigned> moved = solution.choice;
      moved[node] = c;
      EXPECT_GE(graph.evaluateCost(moved), solution.cost * (1 - 1e-12));
    }

  // Under a limit of 90 % of the cheapest plan's memory, the plan fits and
  // costs at least as much.
  SearchOptions limited;
  limited.memoryLimit = 0.9 * solution.memory;
  SearchSolution fitted = solveAndCheck(graph, limited);
  ASSERT_FALSE(fitted.choice.empty());
  EXPECT_LE(fitted.memory, limited.memoryLimit);
  EXPECT_GE(fitted.cost, solution.cost);
  EXPECT_GT(fitted.lambda, 0);
}

} // namespace

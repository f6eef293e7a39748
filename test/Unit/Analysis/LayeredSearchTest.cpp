//===- LayeredSearchTest.cpp - Repeated layers solved once ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The layered path of solveByElimination (SearchOptions::layers) against
// the plain solve and brute force: random graphs shaped like a Transformer
// (an embedding, L copies of a random layer template joined by a residual
// stream, a head, and optionally an outside node feeding every layer's
// interior like a rope table), with and without a memory limit. The
// layered solve must find plans exactly as good, and must fall back to the
// plain solve (saying why) whenever the layers do not really repeat.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Search/CostGraph.h"
#include "loom/Analysis/Search/SyntheticGraphs.h"

#include "gtest/gtest.h"

#include <cmath>
#include <optional>
#include <random>

using namespace mlir::loom::dist;

namespace {

/// A random layered graph and its layer hint.
struct LayeredGraph {
  CostGraph graph;
  std::vector<std::vector<unsigned>> layers;
  /// The outside node feeding every layer, if any.
  std::optional<unsigned> outside;
};

struct LayeredGraphOptions {
  unsigned layers = 4;
  /// An outside node with two candidates feeding position 1 of every layer.
  bool outside = false;
  /// Whether layer 0 draws its own costs (the layered path must cope).
  bool distinctFirstLayer = false;
  /// The chance of each extra forward edge inside the template (some make
  /// the layer non-series-parallel, which must fall back).
  double extraEdgeChance = 0.15;
};

class Generator {
public:
  explicit Generator(unsigned seed) : rng(seed) {}

  double uniform(double low, double high) {
    return std::uniform_real_distribution<double>(low, high)(rng);
  }
  unsigned pick(unsigned low, unsigned high) {
    return std::uniform_int_distribution<unsigned>(low, high)(rng);
  }
  std::vector<double> vector(size_t size, double forbidden = 0) {
    std::vector<double> values(size);
    for (double &value : values)
      value = uniform(0, 1) < forbidden ? kInfiniteCost : uniform(0.1, 1);
    return values;
  }

  LayeredGraph build(const LayeredGraphOptions &options) {
    LayeredGraph result;
    CostGraph &graph = result.graph;
    // The template: n nodes, the last the separator (the residual add).
    unsigned n = pick(2, 6);
    std::vector<unsigned> counts(n);
    for (unsigned &count : counts)
      count = pick(1, 3);
    unsigned separatorCount = pick(2, 3);
    counts[n - 1] = separatorCount;
    struct TemplateEdge {
      int source; // -1: the previous separator (or the embedding)
      unsigned destination;
    };
    std::vector<TemplateEdge> shape = {{-1, 0}, {-1, n - 1}};
    for (unsigned j = 0; j + 1 < n; ++j)
      shape.push_back({int(j), j + 1});
    for (unsigned i = 0; i < n; ++i)
      for (unsigned j = i + 2; j < n; ++j)
        if (uniform(0, 1) < options.extraEdgeChance)
          shape.push_back({int(i), j});
    auto drawNodes = [&] {
      std::vector<std::pair<std::vector<double>, std::vector<double>>> nodes;
      for (unsigned count : counts)
        nodes.push_back({vector(count), vector(count)});
      return nodes;
    };
    auto drawEdges = [&](unsigned entryCount) {
      std::vector<std::vector<double>> matrices;
      for (const TemplateEdge &edge : shape) {
        unsigned rows = edge.source < 0 ? entryCount : counts[edge.source];
        matrices.push_back(vector(rows * counts[edge.destination], 0.1));
      }
      return matrices;
    };
    auto repeated = drawNodes();
    auto repeatedEdges = drawEdges(separatorCount);
    std::vector<double> outsideMatrix;

    unsigned embedding = graph.addNode("embedding", vector(3), vector(3));
    if (options.outside) {
      result.outside = graph.addNode("rope", vector(2), vector(2));
      outsideMatrix = vector(2 * counts[std::min(1u, n - 1)], 0.1);
    }
    unsigned previous = embedding;
    for (unsigned k = 0; k < options.layers; ++k) {
      bool first = k == 0;
      auto nodes = first && options.distinctFirstLayer ? drawNodes() : repeated;
      auto matrices = first ? drawEdges(3) : repeatedEdges;
      std::vector<unsigned> ids;
      for (unsigned j = 0; j < n; ++j)
        ids.push_back(
            graph.addNode("l" + std::to_string(k) + "." + std::to_string(j),
                          nodes[j].first, nodes[j].second));
      for (size_t e = 0; e < shape.size(); ++e)
        graph.addEdge(shape[e].source < 0 ? previous : ids[shape[e].source],
                      ids[shape[e].destination], matrices[e]);
      if (result.outside && n > 1)
        graph.addEdge(*result.outside, ids[1],
                      first ? vector(outsideMatrix.size(), 0.1)
                            : outsideMatrix);
      result.layers.push_back(ids);
      previous = ids[n - 1];
    }
    unsigned head = graph.addNode("head", vector(2), vector(2));
    graph.addEdge(previous, head, vector(separatorCount * 2, 0.1));
    graph.addEdge(embedding, head, vector(3 * 2, 0.1)); // tied weights
    unsigned loss = graph.addNode("loss", vector(1), vector(1));
    graph.addEdge(head, loss, vector(2, 0.1));
    return result;
  }

private:
  std::mt19937 rng;
};

SearchSolution solveLayered(const LayeredGraph &layered,
                            SearchOptions options = {}) {
  options.layers = layered.layers;
  return solveByElimination(layered.graph, options);
}

/// The layered solution is as good as the plain one and consistent.
void expectSameAsPlain(const CostGraph &graph, const SearchSolution &plain,
                       const SearchSolution &layered, double limit,
                       const std::string &context) {
  if (!plain.exact && layered.exact) {
    // The plain solve settled a large remainder by local search, the
    // layered one (smaller remainders) enumerated: nothing to hold it to
    // but consistency, and under no limit, being no worse.
    if (layered.choice.empty())
      return;
    EXPECT_DOUBLE_EQ(graph.evaluateCost(layered.choice), layered.cost)
        << context;
    EXPECT_LE(layered.memory, limit) << context;
    if (std::isinf(limit) && !plain.choice.empty())
      EXPECT_LE(layered.cost, plain.cost * (1 + 1e-9)) << context;
    return;
  }
  ASSERT_EQ(plain.choice.empty(), layered.choice.empty()) << context;
  if (plain.choice.empty())
    return;
  EXPECT_NEAR(layered.cost, plain.cost, 1e-9 * std::fabs(plain.cost))
      << context;
  EXPECT_DOUBLE_EQ(graph.evaluateCost(layered.choice), layered.cost) << context;
  EXPECT_DOUBLE_EQ(graph.evaluateMemory(layered.choice), layered.memory)
      << context;
  EXPECT_LE(layered.memory, limit) << context;
  EXPECT_TRUE(layered.exact || !plain.exact) << context;
}

} // namespace

TEST(LayeredSearchTest, RandomLayeredGraphsMatchThePlainSolve) {
  int used = 0, cases = 0;
  for (unsigned seed = 0; seed < 400; ++seed) {
    Generator generator(seed);
    LayeredGraphOptions options;
    options.layers = 1 + seed % 6;
    options.outside = seed % 3 == 1;
    options.distinctFirstLayer = seed % 4 == 2;
    LayeredGraph layered = generator.build(options);
    SearchSolution plain = solveByElimination(layered.graph);
    SearchSolution fast = solveLayered(layered);
    std::string context = "seed " + std::to_string(seed);
    expectSameAsPlain(layered.graph, plain, fast, kInfiniteCost, context);
    EXPECT_FALSE(plain.layered);
    if (options.layers == 1)
      EXPECT_FALSE(fast.layered) << context;
    else if (!fast.layered)
      EXPECT_FALSE(fast.layeredFallback.empty()) << context;
    used += fast.layered && plain.exact;
    ++cases;
  }
  // Most templates are series-parallel between their separators; a layered
  // path that never runs would pass the comparisons above vacuously.
  EXPECT_GT(used, cases / 2);
}

TEST(LayeredSearchTest, RandomLayeredGraphsUnderAMemoryLimit) {
  int used = 0, binding = 0;
  for (unsigned seed = 0; seed < 300; ++seed) {
    Generator generator(1000 + seed);
    LayeredGraphOptions options;
    options.layers = 2 + seed % 5;
    options.outside = seed % 2 == 1;
    LayeredGraph layered = generator.build(options);
    SearchSolution free = solveByElimination(layered.graph);
    if (free.choice.empty())
      continue; // every plan forbidden; the first test covers that
    // Limits between nothing fitting and the limit not binding.
    for (double fraction : {0.3, 0.7, 0.9, 0.97}) {
      SearchOptions limited;
      limited.memoryLimit = fraction * free.memory;
      SearchSolution plain = solveByElimination(layered.graph, limited);
      SearchSolution fast = solveLayered(layered, limited);
      std::string context = "seed " + std::to_string(seed) + " fraction " +
                            std::to_string(fraction);
      expectSameAsPlain(layered.graph, plain, fast, limited.memoryLimit,
                        context);
      used += fast.layered && plain.exact;
      binding += !plain.choice.empty() && plain.lambda > 0 && plain.exact;
    }
  }
  EXPECT_GT(used, 600);
  EXPECT_GT(binding, 300);
}

TEST(LayeredSearchTest, SmallLayeredGraphsMatchBruteForce) {
  for (unsigned seed = 0; seed < 60; ++seed) {
    Generator generator(5000 + seed);
    LayeredGraphOptions options;
    options.layers = 3;
    options.outside = seed % 2 == 0;
    options.extraEdgeChance = 0;
    LayeredGraph layered = generator.build(options);
    size_t combinations = 1;
    for (const CostGraph::Node &node : layered.graph.getNodes())
      combinations *= node.cost.size();
    if (combinations > 200000)
      continue;
    SearchSolution fast = solveLayered(layered);
    SearchSolution brute = solveExhaustively(layered.graph);
    ASSERT_TRUE(fast.layered) << fast.layeredFallback;
    ASSERT_EQ(fast.choice.empty(), brute.choice.empty());
    if (!brute.choice.empty())
      EXPECT_NEAR(fast.cost, brute.cost, 1e-9 * brute.cost) << seed;
  }
}

TEST(LayeredSearchTest, OutsideNodeFeedingEveryLayerIsConditionedOn) {
  Generator generator(7);
  LayeredGraphOptions options;
  options.layers = 5;
  options.outside = true;
  options.extraEdgeChance = 0;
  LayeredGraph layered = generator.build(options);
  SearchSolution fast = solveLayered(layered);
  SearchSolution plain = solveByElimination(layered.graph);
  EXPECT_TRUE(fast.layered) << fast.layeredFallback;
  expectSameAsPlain(layered.graph, plain, fast, kInfiniteCost, "rope");
}

/// A copy of `graph` with node `changed`'s first cost scaled by `factor`
/// and the edges `extra` added.
static CostGraph copyWith(const CostGraph &graph, unsigned changed,
                          double factor,
                          const std::vector<CostGraph::Edge> &extra = {}) {
  CostGraph copy;
  for (unsigned id = 0; id < graph.getNodes().size(); ++id) {
    const CostGraph::Node &node = graph.getNodes()[id];
    std::vector<double> cost = node.cost;
    if (id == changed)
      cost[0] *= factor;
    copy.addNode(node.name, cost, node.memory);
  }
  for (const CostGraph::Edge &edge : graph.getEdges())
    copy.addEdge(edge.source, edge.destination, edge.cost);
  for (const CostGraph::Edge &edge : extra)
    copy.addEdge(edge.source, edge.destination, edge.cost);
  return copy;
}

TEST(LayeredSearchTest, DifferingLayerFallsBack) {
  Generator generator(11);
  LayeredGraphOptions options;
  options.layers = 5;
  options.extraEdgeChance = 0;
  LayeredGraph layered = generator.build(options);
  ASSERT_TRUE(solveLayered(layered).layered);
  // One node of layer 3 made cheaper: the layers no longer repeat.
  layered.graph = copyWith(layered.graph, layered.layers[3][0], 0.5);
  SearchSolution fast = solveLayered(layered);
  EXPECT_FALSE(fast.layered);
  EXPECT_NE(fast.layeredFallback.find("differs from layer 1"),
            std::string::npos)
      << fast.layeredFallback;
  SearchSolution plain = solveByElimination(layered.graph);
  expectSameAsPlain(layered.graph, plain, fast, kInfiniteCost, "differing");
}

TEST(LayeredSearchTest, EdgeSkippingALayerFallsBack) {
  Generator generator(12);
  LayeredGraphOptions options;
  options.layers = 4;
  options.extraEdgeChance = 0;
  LayeredGraph layered = generator.build(options);
  unsigned from = layered.layers[0][0], to = layered.layers[2][0];
  size_t size =
      layered.graph.getNumCandidates(from) * layered.graph.getNumCandidates(to);
  layered.graph = copyWith(layered.graph, 0, 1,
                           {{from, to, std::vector<double>(size, 0.5)}});
  SearchSolution fast = solveLayered(layered);
  EXPECT_FALSE(fast.layered);
  EXPECT_NE(fast.layeredFallback.find("joins layers 0 and 2"),
            std::string::npos)
      << fast.layeredFallback;
  expectSameAsPlain(layered.graph, solveByElimination(layered.graph), fast,
                    kInfiniteCost, "skipping");
}

TEST(LayeredSearchTest, TwoSeparatorsFallBack) {
  Generator generator(13);
  LayeredGraphOptions options;
  options.layers = 4;
  options.extraEdgeChance = 0;
  LayeredGraph layered = generator.build(options);
  // A second node of every layer feeds the next layer.
  std::vector<CostGraph::Edge> extra;
  for (size_t k = 0; k + 1 < layered.layers.size(); ++k) {
    unsigned from = layered.layers[k][0], to = layered.layers[k + 1][0];
    extra.push_back({from, to,
                     std::vector<double>(layered.graph.getNumCandidates(from) *
                                             layered.graph.getNumCandidates(to),
                                         0.25)});
  }
  layered.graph = copyWith(layered.graph, 0, 1, extra);
  SearchSolution fast = solveLayered(layered);
  EXPECT_FALSE(fast.layered);
  EXPECT_NE(fast.layeredFallback.find("more than one node"), std::string::npos)
      << fast.layeredFallback;
  expectSameAsPlain(layered.graph, solveByElimination(layered.graph), fast,
                    kInfiniteCost, "two separators");
}

TEST(LayeredSearchTest, MalformedHintFallsBack) {
  Generator generator(14);
  LayeredGraph layered = generator.build({});
  SearchOptions options;
  options.layers = layered.layers;
  options.layers[2].pop_back();
  SearchSolution fast = solveByElimination(layered.graph, options);
  EXPECT_FALSE(fast.layered);
  EXPECT_NE(fast.layeredFallback.find("layer 2 has"), std::string::npos);
  options.layers = layered.layers;
  options.layers[1][0] = options.layers[0][0];
  fast = solveByElimination(layered.graph, options);
  EXPECT_FALSE(fast.layered);
  EXPECT_NE(fast.layeredFallback.find("listed twice"), std::string::npos);
  options.layers[1][0] = 100000;
  fast = solveByElimination(layered.graph, options);
  EXPECT_FALSE(fast.layered);
  EXPECT_NE(fast.layeredFallback.find("does not exist"), std::string::npos);
  expectSameAsPlain(layered.graph, solveByElimination(layered.graph), fast,
                    kInfiniteCost, "malformed");
}

TEST(LayeredSearchTest, ManyOutsideCombinationsFallBack) {
  Generator generator(15);
  LayeredGraphOptions options;
  options.layers = 4;
  options.extraEdgeChance = 0;
  LayeredGraph layered = generator.build(options);
  // Two 5-candidate outside nodes feed position 0 of every layer ≥ 1:
  // 25 combinations, more than conditioning is worth.
  CostGraph graph = copyWith(layered.graph, 0, 1);
  unsigned first = graph.addNode("a", generator.vector(5), generator.vector(5));
  unsigned second =
      graph.addNode("b", generator.vector(5), generator.vector(5));
  unsigned count = graph.getNumCandidates(layered.layers[1][0]);
  std::vector<double> matrix = generator.vector(5 * count);
  for (size_t k = 1; k < layered.layers.size(); ++k) {
    graph.addEdge(first, layered.layers[k][0], matrix);
    graph.addEdge(second, layered.layers[k][0], matrix);
  }
  layered.graph = std::move(graph);
  SearchSolution fast = solveLayered(layered);
  EXPECT_FALSE(fast.layered);
  EXPECT_NE(fast.layeredFallback.find("combinations"), std::string::npos)
      << fast.layeredFallback;
  expectSameAsPlain(layered.graph, solveByElimination(layered.graph), fast,
                    kInfiniteCost, "combinations");
}

TEST(LayeredSearchTest, SyntheticTransformerIsSolvedLayered) {
  SyntheticTransformerOptions options;
  options.layers = 12;
  options.candidates = 8;
  CostGraph graph = buildSyntheticTransformer(options);
  SearchOptions hint;
  for (unsigned k = 0; k < options.layers; ++k) {
    hint.layers.emplace_back();
    for (unsigned j = 0; j < kSyntheticNodesPerLayer; ++j)
      hint.layers.back().push_back(1 + k * kSyntheticNodesPerLayer + j);
  }
  SearchSolution plain = solveByElimination(graph);
  SearchSolution fast = solveByElimination(graph, hint);
  EXPECT_TRUE(fast.layered) << fast.layeredFallback;
  expectSameAsPlain(graph, plain, fast, kInfiniteCost, "synthetic");
  // Under a limit the Lagrangian walk takes the same layered path.
  hint.memoryLimit = plain.memory * 0.8;
  SearchOptions limit;
  limit.memoryLimit = hint.memoryLimit;
  SearchSolution limitedPlain = solveByElimination(graph, limit);
  SearchSolution limitedFast = solveByElimination(graph, hint);
  EXPECT_TRUE(limitedFast.layered);
  EXPECT_GT(limitedFast.lambda, 0);
  expectSameAsPlain(graph, limitedPlain, limitedFast, hint.memoryLimit,
                    "synthetic, limited");
}

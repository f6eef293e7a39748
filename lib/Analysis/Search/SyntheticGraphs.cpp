//===- SyntheticGraphs.cpp - Transformer-shaped cost graphs ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Builds the synthetic Transformer cost graph of SyntheticGraphs.h. Numbers
// come from SplitMix64 rather than <random>'s distributions, whose output
// differs between standard libraries: a seed must mean the same graph
// everywhere a benchmark is rerun.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Search/SyntheticGraphs.h"

#include <string>

using namespace mlir::loom::dist;

namespace {

/// SplitMix64 (Steele, Lea and Flood, 2014): tiny, fast, portable.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [low, high).
  double uniform(double low, double high) {
    return low + (high - low) * double(next() >> 11) * 0x1.0p-53;
  }

private:
  uint64_t state;
};

/// The costs of one layer, drawn once when layers are identical.
struct LayerTables {
  std::vector<std::vector<double>> nodeCost, nodeMemory;
  std::vector<std::vector<double>> edgeCost;
};

/// A layer's edges as (source, destination) positions among its nodes;
/// position -1 is the previous layer's output.
struct LayerEdge {
  int source, destination;
};

} // namespace

static const char *const kLayerNodeNames[kSyntheticNodesPerLayer] = {
    "ln1",     "q_matmul",  "q_bias",    "q_split",  "k_matmul", "k_bias",
    "k_split", "v_matmul",  "v_bias",    "v_split",  "scores",   "scale",
    "mask",    "softmax",   "attn_drop", "context",  "merge",    "o_matmul",
    "o_bias",  "residual1", "ln2",       "fc1",      "fc1_bias", "gelu",
    "fc2",     "fc2_bias",  "mlp_drop",  "residual2"};

// Positions refer to kLayerNodeNames.
static const LayerEdge kLayerEdges[] = {
    {-1, 0},  {0, 1},   {1, 2},   {2, 3},   {0, 4},   {4, 5},   {5, 6},
    {0, 7},   {7, 8},   {8, 9},   {3, 10},  {6, 10},  {10, 11}, {11, 12},
    {12, 13}, {13, 14}, {14, 15}, {9, 15},  {15, 16}, {16, 17}, {17, 18},
    {18, 19}, {-1, 19}, {19, 20}, {20, 21}, {21, 22}, {22, 23}, {23, 24},
    {24, 25}, {25, 26}, {26, 27}, {19, 27}};

static std::vector<double> drawNodeCosts(SplitMix64 &random, unsigned count) {
  std::vector<double> costs(count);
  for (double &cost : costs)
    cost = random.uniform(1e-4, 1e-3);
  return costs;
}

static std::vector<double> drawNodeMemories(SplitMix64 &random,
                                            unsigned count) {
  std::vector<double> memories(count);
  for (double &memory : memories)
    memory = random.uniform(1e8, 1e9);
  return memories;
}

static std::vector<double>
drawEdgeCosts(SplitMix64 &random, unsigned count,
              const SyntheticTransformerOptions &options) {
  std::vector<double> costs(count * count);
  for (unsigned i = 0; i < count; ++i)
    for (unsigned j = 0; j < count; ++j) {
      double draw = random.uniform(0, 1);
      if (i == j)
        costs[i * count + j] = 0;
      else if (draw < options.forbiddenFraction)
        costs[i * count + j] = kInfiniteCost;
      else
        costs[i * count + j] = random.uniform(1e-5, 1e-3);
    }
  return costs;
}

static LayerTables drawLayer(SplitMix64 &random,
                             const SyntheticTransformerOptions &options) {
  LayerTables tables;
  for (unsigned n = 0; n < kSyntheticNodesPerLayer; ++n) {
    tables.nodeCost.push_back(drawNodeCosts(random, options.candidates));
    tables.nodeMemory.push_back(drawNodeMemories(random, options.candidates));
  }
  for (size_t e = 0; e < std::size(kLayerEdges); ++e)
    tables.edgeCost.push_back(drawEdgeCosts(random, options.candidates,
                                            options));
  return tables;
}

CostGraph mlir::loom::dist::buildSyntheticTransformer(
    const SyntheticTransformerOptions &options) {
  SplitMix64 random(options.seed);
  unsigned k = options.candidates == 0 ? 1 : options.candidates;
  SyntheticTransformerOptions drawn = options;
  drawn.candidates = k;

  CostGraph graph;
  unsigned previous = graph.addNode("embedding", drawNodeCosts(random, k),
                                    drawNodeMemories(random, k));
  LayerTables tables = drawLayer(random, drawn);
  for (unsigned layer = 0; layer < options.layers; ++layer) {
    if (layer > 0 && !options.identicalLayers)
      tables = drawLayer(random, drawn);
    unsigned first = graph.getNodes().size();
    for (unsigned n = 0; n < kSyntheticNodesPerLayer; ++n)
      graph.addNode("layer" + std::to_string(layer) + "." + kLayerNodeNames[n],
                    tables.nodeCost[n], tables.nodeMemory[n]);
    for (size_t e = 0; e < std::size(kLayerEdges); ++e) {
      const LayerEdge &edge = kLayerEdges[e];
      unsigned source = edge.source < 0 ? previous : first + edge.source;
      graph.addEdge(source, first + edge.destination, tables.edgeCost[e]);
    }
    previous = first + kSyntheticNodesPerLayer - 1;
  }
  unsigned head = graph.addNode("head", drawNodeCosts(random, k),
                                drawNodeMemories(random, k));
  graph.addEdge(previous, head, drawEdgeCosts(random, k, drawn));
  unsigned loss = graph.addNode("loss", drawNodeCosts(random, k),
                                drawNodeMemories(random, k));
  graph.addEdge(head, loss, drawEdgeCosts(random, k, drawn));
  return graph;
}

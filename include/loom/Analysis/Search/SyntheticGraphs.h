//===- SyntheticGraphs.h - Transformer-shaped cost graphs -------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Cost graphs with the shape the strategy search meets on a decoder-only
// Transformer, filled with pseudo-random costs: for benchmarking the solver
// (`loom-bench dp`) and for testing it on graphs far too large to enumerate.
// The shape, not the numbers, is what matters: a chain of layers, each with
// residual branches and the q/k/v fan-out and fan-in of attention, which is
// series-parallel, so elimination reduces it to a single node.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_SEARCH_SYNTHETICGRAPHS_H
#define LOOM_ANALYSIS_SEARCH_SYNTHETICGRAPHS_H

#include "loom/Analysis/Search/CostGraph.h"

#include <cstdint>

namespace mlir::loom::dist {

struct SyntheticTransformerOptions {
  unsigned layers = 96;
  /// Candidates of every node.
  unsigned candidates = 30;
  uint64_t seed = 1;
  /// The fraction of off-diagonal edge entries that are forbidden
  /// (kInfiniteCost); the diagonal (same strategy on both ends) never is, so
  /// a plan always exists.
  double forbiddenFraction = 0.1;
  /// Whether every layer carries the same costs (as a real model's repeated
  /// layers do) or draws its own.
  bool identicalLayers = true;
};

/// The number of nodes a layer of the synthetic Transformer has.
inline constexpr unsigned kSyntheticNodesPerLayer = 28;

/// Builds the graph: an embedding node, `layers` layers of
/// kSyntheticNodesPerLayer nodes (layer norm, q/k/v projections with bias
/// and head split, scores, scale, mask, softmax, dropout, context, head
/// merge, output projection and bias, residual add, layer norm, MLP with
/// bias and GeLU, dropout, residual add), and a head and a loss node. Node
/// costs are 0.1–1 ms, memories 0.1–1 GB, edge costs 0 on the diagonal and
/// 0.01–1 ms off it.
CostGraph buildSyntheticTransformer(const SyntheticTransformerOptions &options);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_SEARCH_SYNTHETICGRAPHS_H

//===- Redistribution.h - Cheapest collective chains ------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The redistribution planner: given a mesh, a global tensor shape, its element
// size and two layouts, it finds the cheapest chain of collectives turning a
// tensor held in the first layout into the same tensor held in the second.
// It is a shortest-path search (Dijkstra) over layouts valid for the shape,
// where each edge is one collective whose effect on the layout is exact
// (`Layout::allGather`, ...) and whose price comes from a pluggable
// `RedistributionCostModel`. Plans are cached per planner.
//
// Plain C++ with no IR: `dist-lower-reshards` turns a plan into ops, the
// strategy search prices reshards with it, and its unit tests check every
// plan against an independent exhaustive search.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_LAYOUT_REDISTRIBUTION_H
#define LOOM_ANALYSIS_LAYOUT_REDISTRIBUTION_H

#include "loom/Analysis/Layout/Layout.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace mlir::loom::dist {

/// The collectives a plan is made of. Each changes a layout exactly as the
/// `Layout` method of the same name says.
enum class CollectiveKind {
  /// Concatenates the group's blocks along `dim`; `axes` leave its minor end.
  AllGather,
  /// Keeps this device's piece of `dim` (no traffic); `axes` join its minor
  /// end.
  AllSlice,
  /// Sums over the group; `axes` leave `partial`.
  AllReduce,
  /// Sums and keeps this device's piece of `dim`; `axes` move from `partial`
  /// to the minor end of `dim`.
  ReduceScatter,
  /// Splits `dim` and concatenates `concatDim`; `axes` move from the minor
  /// end of `concatDim` to the minor end of `dim`.
  AllToAll,
};

/// `all_gather`, `all_slice`, ... (the op mnemonics).
const char *getCollectiveName(CollectiveKind kind);

/// One collective of a plan.
struct RedistributionStep {
  CollectiveKind kind;
  /// The gather, slice or scatter dim; the split dim of an all_to_all; 0 for
  /// an all_reduce.
  size_t dim = 0;
  /// The concat dim of an all_to_all; 0 otherwise.
  size_t concatDim = 0;
  /// The group: its axes, major first (the order `Mesh::getGroup` uses).
  Layout::AxisList axes;
  /// The layout after this step.
  Layout result;
  /// What the cost model charged for it, in seconds.
  double cost = 0;

  /// `all_to_all(axes=["x"], split_dim=1, concat_dim=0) -> [[], ["x"]]`.
  std::string toString() const;
};

/// A chain of collectives and its total cost. An empty chain means the
/// layouts are equal.
struct RedistributionPlan {
  std::vector<RedistributionStep> steps;
  /// The sum of the steps' costs, in seconds.
  double cost = 0;

  /// One step per line, then the total.
  std::string toString() const;
};

/// What a cost model sees of one candidate step.
struct StepCostQuery {
  const Mesh &mesh;
  CollectiveKind kind;
  /// The step's dims and group, as in `RedistributionStep`.
  size_t dim;
  size_t concatDim;
  const Layout::AxisList &axes;
  /// The number of devices in the group (the product of the axes' sizes).
  int64_t groupSize;
  /// The layouts and each device's local shape before and after the step.
  const Layout &before;
  const Layout &after;
  const std::vector<int64_t> &localShapeBefore;
  const std::vector<int64_t> &localShapeAfter;
  /// Each device's local tensor size before and after, in bytes.
  double bytesBefore;
  double bytesAfter;
};

/// Prices one collective. Costs are in seconds, must be finite and at least
/// 0, and should be (near) 0 for an all_slice, which moves no data, so that
/// slicing is always preferred over moving data. A model is used by one
/// planner at a time and is never asked the same question twice per plan.
class RedistributionCostModel {
public:
  virtual ~RedistributionCostModel();

  /// The time `query`'s step takes, in seconds.
  virtual double getStepCost(const StepCostQuery &query) const = 0;

  /// A name for messages (`alpha-beta`).
  virtual std::string getName() const = 0;
};

/// The α–β model of ring collectives over uniform links. With `n` the group
/// size, `B` bytes and α the latency of one ring step:
///   all_gather      (n-1)·α + (n-1)/n · B_after / β     (B_after = gathered)
///   reduce_scatter  (n-1)·α + (n-1)/n · B_before / β    (B_before = summed)
///   all_reduce     2(n-1)·α + 2(n-1)/n · B / β
///   all_to_all      (n-1)·α + (n-1)/n · B_before / β
///   all_slice       0
/// where B are each device's local bytes; so reduce_scatter + all_gather
/// costs exactly an all_reduce, as it does on a ring.
class AlphaBetaCostModel : public RedistributionCostModel {
public:
  /// `alphaSeconds`: latency per ring step, in seconds (default 10 µs).
  /// `betaBytesPerSecond`: link bandwidth, in bytes/s (default 100 GB/s).
  explicit AlphaBetaCostModel(double alphaSeconds = 10e-6,
                              double betaBytesPerSecond = 100e9)
      : alpha(alphaSeconds), beta(betaBytesPerSecond) {}

  double getStepCost(const StepCostQuery &query) const override;
  std::string getName() const override { return "alpha-beta"; }

  double getAlpha() const { return alpha; }
  double getBeta() const { return beta; }

private:
  double alpha;
  double beta;
};

/// Finds and caches cheapest redistribution plans. Thread-safe.
class RedistributionPlanner {
public:
  /// The most mesh axes a plan may involve: the states grow as
  /// (rank + 2)^axes · axes!, and the design's meshes have at most four
  /// (pipeline × data × context × tensor) plus spares.
  static constexpr size_t kMaxMeshAxes = 6;

  /// A planner pricing steps with the α–β model's defaults.
  RedistributionPlanner();
  /// A planner pricing steps with `costModel`.
  explicit RedistributionPlanner(
      std::shared_ptr<const RedistributionCostModel> costModel);

  /// The cheapest chain turning a tensor of `globalShape` (elements of
  /// `elementBytes` bytes) held in `from` into it held in `to`, both layouts
  /// of `mesh`. Fails when an input is invalid (a layout that does not fit
  /// the shape, a negative size) or when no chain exists: collectives can
  /// sum pending sums but never create one, so `to` may only be partial over
  /// axes `from` is partial over.
  ValueOrError<RedistributionPlan> plan(const Mesh &mesh,
                                        const std::vector<int64_t> &globalShape,
                                        int64_t elementBytes,
                                        const Layout &from, const Layout &to);

  const RedistributionCostModel &getCostModel() const { return *costModel; }

  /// How many `plan` calls were answered from the cache, and how many
  /// searched.
  size_t getNumCacheHits() const { return cacheHits; }
  size_t getNumSearches() const { return searches; }

private:
  struct Key {
    Mesh mesh;
    std::vector<int64_t> shape;
    int64_t elementBytes;
    Layout from, to;
    bool operator==(const Key &other) const;
  };
  struct KeyHash {
    size_t operator()(const Key &key) const;
  };

  std::shared_ptr<const RedistributionCostModel> costModel;
  std::mutex mutex;
  std::unordered_map<Key, ValueOrError<RedistributionPlan>, KeyHash> cache;
  size_t cacheHits = 0;
  size_t searches = 0;
};

/// Applies `step` to `layout` with the layout algebra and checks that the
/// result fits `globalShape`; `verify` helpers and tests use it to replay a
/// plan independently of the search.
ValueOrError<Layout> applyStep(const Mesh &mesh,
                               const std::vector<int64_t> &globalShape,
                               const Layout &layout,
                               const RedistributionStep &step);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_LAYOUT_REDISTRIBUTION_H

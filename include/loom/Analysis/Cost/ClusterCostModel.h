//===- ClusterCostModel.h - Time of ops and collectives ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Prices work on a cluster under a mesh placement:
//  - an op's compute time from its CostOpInterface work (FLOPs, bytes) as
//    max(FLOPs / achievable FLOP/s, bytes / memory bandwidth);
//  - a collective over a group of mesh axes with α–β models of ring, tree and
//    hierarchical algorithms over the links the group spans (which depends
//    on how mesh axes map onto nodes), taking the fastest.
// It is also the redistribution planner's cost model, so reshards are priced
// by the same numbers as everything else. Plain C++ over the layout algebra;
// the formulas are in docs/CostModel.md and in ClusterCostModel.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_CLUSTERCOSTMODEL_H
#define LOOM_ANALYSIS_COST_CLUSTERCOSTMODEL_H

#include "loom/Analysis/Cost/ClusterSpec.h"
#include "loom/Analysis/Layout/Redistribution.h"
#include "loom/Interfaces/Cost.h"

namespace mlir::loom::dist {

/// How mesh axes map onto the cluster's nodes. Ranks are row-major over the
/// mesh (last axis fastest) and consecutive ranks share a node, so the
/// minor-most axes whose sizes multiply to at most `devicesPerNode` lie
/// inside a node; an axis straddling the node boundary is split into its
/// intra- and inter-node parts.
struct MeshPlacement {
  /// For each mesh axis, how many of its devices share one node (1 for an
  /// axis entirely across nodes, its size for an axis inside a node).
  std::vector<int64_t> devicesPerNodeOnAxis;
  /// The number of nodes the mesh spans.
  int64_t numNodes = 1;

  /// Computes the placement of `mesh` on `cluster`; fails when the mesh has
  /// more devices than the cluster (maxNodes · devicesPerNode, if bounded).
  static ValueOrError<MeshPlacement> get(const ClusterSpec &cluster,
                                         const Mesh &mesh);
};

/// The algorithm a collective's time was computed for; `Measured` when a
/// calibration's α–β fit for the kind and group size priced it.
enum class CollectiveAlgorithm { Ring, Tree, Hierarchical, Measured };

/// Returns `ring`, `tree`, `hierarchical` or `measured`.
std::string_view stringifyCollectiveAlgorithm(CollectiveAlgorithm algorithm);

/// A priced collective.
struct CollectiveTime {
  double seconds = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
};

class ClusterCostModel : public RedistributionCostModel {
public:
  /// Fails like MeshPlacement::get.
  static ValueOrError<ClusterCostModel> get(ClusterSpec cluster, Mesh mesh);

  const ClusterSpec &getCluster() const { return cluster; }
  const Mesh &getMesh() const { return mesh; }
  const MeshPlacement &getPlacement() const { return placement; }

  /// The time one device takes for `cost` with elements of type
  /// `elementTypeName` (`f32`, ...). Fails when the device has no peak for
  /// that dtype. With a calibration, GEMMs (of known shape) and attention
  /// are priced by the measured curve of their dtype and memory-bound
  /// classes by the measured bandwidth curves (docs/CostModel.md).
  ValueOrError<double> getComputeSeconds(const OpCost &cost,
                                         std::string_view elementTypeName) const;

  /// The time of `kind` over the group of `axes` (major first) for each
  /// device's `bytesBefore` / `bytesAfter` local bytes (as in
  /// StepCostQuery), choosing the fastest algorithm. all_slice costs 0.
  CollectiveTime getCollectiveTime(CollectiveKind kind,
                                   const Layout::AxisList &axes,
                                   double bytesBefore, double bytesAfter) const;

  /// The time of one point-to-point message of `bytes` between ranks
  /// `rankDistance` apart (consecutive pipeline stages): the calibration's
  /// send_recv fit inside a node where there is one, else the link's α–β.
  double getPointToPointSeconds(double bytes, int64_t rankDistance) const;

  /// RedistributionCostModel: getCollectiveTime(...).seconds.
  double getStepCost(const StepCostQuery &query) const override;
  std::string getName() const override { return "cluster:" + cluster.name; }

private:
  ClusterCostModel(ClusterSpec cluster, Mesh mesh, MeshPlacement placement)
      : cluster(std::move(cluster)), mesh(std::move(mesh)),
        placement(std::move(placement)) {}

  ClusterSpec cluster;
  Mesh mesh;
  MeshPlacement placement;
};

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_COST_CLUSTERCOSTMODEL_H

//===- ClusterCostModel.cpp - Time of ops and collectives on a cluster ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The formulas of docs/CostModel.md ("Compute time", "Collectives"):
//
//  1. Placement: ranks are row-major over the mesh and fill nodes in order,
//     so walking the axes from the minor end, each axis puts as many of its
//     devices inside a node as the node still has room for; an axis that
//     does not fit is split into an intra-node part and an inter-node part.
//  2. Compute: the roofline max(FLOPs / peak, bytes / bandwidth), each rate
//     scaled by the op class's achievable fraction.
//  3. A collective's group of n devices lies g_in to a node on g_out nodes.
//     Three α–β models are priced and the fastest is taken:
//     - ring: n-1 steps (2(n-1) for all_reduce), each as slow as the slowest
//       level the group spans;
//     - tree: binomial reduce / broadcast (plus scatter / gather), whole
//       messages per step, ⌈log2 g_in⌉ steps in a node, ⌈log2 g_out⌉
//       across nodes;
//     - hierarchical (groups spanning several nodes, with several devices
//       per node): the intra-node part, then the inter-node part on 1/g_in
//       of the data, each at its own level's best of ring and tree.
//     A calibrated spec that measured the kind for exactly n devices inside
//     one node replaces all three by its fit α + B / β (B: the gathered
//     bytes for all_gather, each device's input bytes otherwise).
//  4. Calibrated compute: a GEMM of known shape takes FLOPs / rate(M, N, K)
//     of its dtype's measured grid, attention FLOPs / rate(FLOPs);
//     reductions take bytes / (row-kernel bandwidth at those bytes) and the
//     other memory-bound classes bytes / (elementwise bandwidth). Measured
//     rates are achieved rates: no achievable fraction applies to them.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/ClusterCostModel.h"

#include <algorithm>
#include <cmath>

namespace mlir::loom::dist {

namespace {

/// How a collective's group lies on the cluster.
struct GroupSpan {
  /// n: the devices in the group.
  double size = 1;
  /// g_in: the group's devices in one node.
  double inNode = 1;
  /// g_out: the nodes the group spans (size / inNode).
  double nodes = 1;
};

/// The two link levels.
struct Links {
  LinkSpec intra, inter;
};

/// ⌈log2 n⌉ for n >= 1.
double ceilLog2(double n) {
  double steps = 0;
  while (std::exp2(steps) < n)
    ++steps;
  return steps;
}

/// The latency of one ring step and the bandwidth of the ring's bottleneck.
/// A ring spanning nodes crosses each node boundary once per ring; NCCL runs
/// one ring per NIC, so the group's g_in devices of a node together drive
/// g_in NIC shares: g_in x (per-device inter-node bandwidth).
std::pair<double, double> getRingLink(const Links &links,
                                      const GroupSpan &span) {
  if (span.nodes <= 1)
    return {links.intra.latencySeconds, links.intra.bandwidthBytesPerSecond};
  double inter = span.inNode * links.inter.bandwidthBytesPerSecond;
  if (span.inNode <= 1)
    return {links.inter.latencySeconds, inter};
  return {std::max(links.intra.latencySeconds, links.inter.latencySeconds),
          std::min(links.intra.bandwidthBytesPerSecond, inter)};
}

/// Ring (and pairwise all_to_all) times; B are each device's local bytes.
double getRingSeconds(CollectiveKind kind, const Links &links,
                      const GroupSpan &span, double bytesBefore,
                      double bytesAfter) {
  double n = span.size;
  auto [alpha, beta] = getRingLink(links, span);
  double share = (n - 1) / n;
  switch (kind) {
  case CollectiveKind::AllSlice:
    return 0;
  case CollectiveKind::AllGather:
    return (n - 1) * alpha + share * bytesAfter / beta;
  case CollectiveKind::ReduceScatter:
    return (n - 1) * alpha + share * bytesBefore / beta;
  case CollectiveKind::AllReduce: {
    // A reduce_scatter then an all_gather of the same bytes, so that the
    // planner's reduce_scatter + all_gather never undercuts an all_reduce.
    double half = (n - 1) * alpha + share * bytesBefore / beta;
    return half + half;
  }
  case CollectiveKind::AllToAll: {
    // Each device keeps 1/n of its data and sends each other member 1/n.
    // The (n - g_in)/n bound for other nodes leaves through the device's
    // own NIC share, the rest goes over the intra-node links at the same
    // time.
    double outBytes = (n - span.inNode) / n * bytesBefore;
    double inBytes = (span.inNode - 1) / n * bytesBefore;
    double seconds = inBytes / links.intra.bandwidthBytesPerSecond;
    if (span.nodes > 1)
      seconds =
          std::max(seconds, outBytes / links.inter.bandwidthBytesPerSecond);
    return (n - 1) * alpha + seconds;
  }
  }
  return 0;
}

/// Binomial-tree times, or none where a tree does not apply (all_to_all).
/// A tree moves whole messages: T(m) reduces or broadcasts m in
/// ⌈log2 g_in⌉ intra-node and ⌈log2 g_out⌉ inter-node steps; S(m)
/// scatters or gathers it (latency as T, only (n-1)/n of m leaves the
/// root, at the ring's bottleneck bandwidth).
std::optional<double> getTreeSeconds(CollectiveKind kind, const Links &links,
                                     const GroupSpan &span, double bytesBefore,
                                     double bytesAfter) {
  double stepsIn = ceilLog2(span.inNode), stepsOut = ceilLog2(span.nodes);
  double interBandwidth = span.inNode * links.inter.bandwidthBytesPerSecond;
  auto whole = [&](double bytes) {
    return stepsIn * (links.intra.latencySeconds +
                      bytes / links.intra.bandwidthBytesPerSecond) +
           stepsOut * (links.inter.latencySeconds + bytes / interBandwidth);
  };
  auto spread = [&](double bytes) {
    double beta = getRingLink(links, span).second;
    return stepsIn * links.intra.latencySeconds +
           stepsOut * links.inter.latencySeconds +
           (span.size - 1) / span.size * bytes / beta;
  };
  switch (kind) {
  case CollectiveKind::AllSlice:
    return 0.0;
  case CollectiveKind::AllReduce:
    // Reduce to a root, then broadcast from it.
    return 2 * whole(bytesBefore);
  case CollectiveKind::ReduceScatter:
    // Reduce to a root, then scatter the pieces.
    return whole(bytesBefore) + spread(bytesBefore);
  case CollectiveKind::AllGather:
    // Gather to a root, then broadcast the whole.
    return spread(bytesAfter) + whole(bytesAfter);
  case CollectiveKind::AllToAll:
    return std::nullopt;
  }
  return std::nullopt;
}

/// The faster of ring and tree.
double getBestFlatSeconds(CollectiveKind kind, const Links &links,
                          const GroupSpan &span, double bytesBefore,
                          double bytesAfter) {
  double ring = getRingSeconds(kind, links, span, bytesBefore, bytesAfter);
  std::optional<double> tree =
      getTreeSeconds(kind, links, span, bytesBefore, bytesAfter);
  return tree ? std::min(ring, *tree) : ring;
}

/// Two-level times for a group with several devices on each of several
/// nodes; none otherwise (and for all_to_all). Phases run on the group's
/// intra-node part (g_in devices, one node) and inter-node part (g_out
/// devices, one per node, each on its own NIC share).
std::optional<double> getHierarchicalSeconds(CollectiveKind kind,
                                             const Links &links,
                                             const GroupSpan &span,
                                             double bytesBefore,
                                             double bytesAfter) {
  if (span.inNode <= 1 || span.nodes <= 1)
    return std::nullopt;
  GroupSpan intra{span.inNode, span.inNode, 1};
  GroupSpan inter{span.nodes, 1, span.nodes};
  auto phase = [&](CollectiveKind phaseKind, const GroupSpan &part,
                   double before, double after) {
    return getBestFlatSeconds(phaseKind, links, part, before, after);
  };
  double g = span.inNode;
  switch (kind) {
  case CollectiveKind::AllSlice:
    return 0.0;
  case CollectiveKind::AllReduce:
    // reduce_scatter in the node, all_reduce of 1/g_in across nodes,
    // all_gather in the node.
    return phase(CollectiveKind::ReduceScatter, intra, bytesBefore,
                 bytesBefore / g) +
           phase(CollectiveKind::AllReduce, inter, bytesBefore / g,
                 bytesBefore / g) +
           phase(CollectiveKind::AllGather, intra, bytesBefore / g,
                 bytesBefore);
  case CollectiveKind::ReduceScatter:
    // reduce_scatter in the node, then across nodes on 1/g_in.
    return phase(CollectiveKind::ReduceScatter, intra, bytesBefore,
                 bytesBefore / g) +
           phase(CollectiveKind::ReduceScatter, inter, bytesBefore / g,
                 bytesAfter);
  case CollectiveKind::AllGather:
    // all_gather across nodes of 1/g_in, then in the node.
    return phase(CollectiveKind::AllGather, inter, bytesBefore,
                 bytesAfter / g) +
           phase(CollectiveKind::AllGather, intra, bytesAfter / g, bytesAfter);
  case CollectiveKind::AllToAll:
    return std::nullopt;
  }
  return std::nullopt;
}

/// Where the group over `axes` lies. Names that are not axes of `mesh` count
/// as size 1 (the planner only asks about its mesh's axes).
GroupSpan getGroupSpan(const Mesh &mesh, const MeshPlacement &placement,
                       const Layout::AxisList &axes) {
  GroupSpan span;
  for (const std::string &name : axes) {
    std::optional<size_t> index = mesh.findAxis(name);
    if (!index)
      continue;
    span.size *= static_cast<double>(mesh.getAxis(*index).size);
    span.inNode *= static_cast<double>(placement.devicesPerNodeOnAxis[*index]);
  }
  span.nodes = span.size / span.inNode;
  return span;
}

/// The calibration's name for `kind`, or null for kinds it does not measure.
const char *getCalibratedName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::AllSlice:
    return nullptr;
  }
  return nullptr;
}

CollectiveTime priceCollective(const ClusterSpec &cluster, const Mesh &mesh,
                               const MeshPlacement &placement,
                               CollectiveKind kind,
                               const Layout::AxisList &axes, double bytesBefore,
                               double bytesAfter) {
  GroupSpan span = getGroupSpan(mesh, placement, axes);
  if (kind == CollectiveKind::AllSlice || span.size <= 1)
    return {0, CollectiveAlgorithm::Ring};
  // Measurements were taken inside one node (the calibrated machine).
  if (const char *name = getCalibratedName(kind);
      name && cluster.calibration && span.nodes <= 1)
    if (std::optional<CollectiveFit> fit = cluster.calibration->findCollective(
            name, static_cast<int64_t>(span.size))) {
      double bytes =
          kind == CollectiveKind::AllGather ? bytesAfter : bytesBefore;
      return {fit->latencySeconds + bytes / fit->bandwidthBytesPerSecond,
              CollectiveAlgorithm::Measured};
    }
  Links links{cluster.intraNode, cluster.interNode};
  // Ties keep the earlier algorithm: ring, then tree, then hierarchical.
  CollectiveTime best{
      getRingSeconds(kind, links, span, bytesBefore, bytesAfter),
      CollectiveAlgorithm::Ring};
  if (std::optional<double> tree =
          getTreeSeconds(kind, links, span, bytesBefore, bytesAfter))
    if (*tree < best.seconds)
      best = {*tree, CollectiveAlgorithm::Tree};
  if (std::optional<double> hierarchical =
          getHierarchicalSeconds(kind, links, span, bytesBefore, bytesAfter))
    if (*hierarchical < best.seconds)
      best = {*hierarchical, CollectiveAlgorithm::Hierarchical};
  return best;
}

/// Checks the numbers the formulas divide by; specs built in code skip
/// parseClusterSpec's checks.
std::optional<std::string> verifyCluster(const ClusterSpec &cluster) {
  auto positive = [](double value) {
    return std::isfinite(value) && value > 0;
  };
  std::string prefix = "cluster `" + cluster.name + "`: ";
  if (cluster.devicesPerNode < 1)
    return prefix + "devices_per_node is " +
           std::to_string(cluster.devicesPerNode) + ", expected at least 1";
  if (cluster.maxNodes < 0)
    return prefix + "max_nodes is " + std::to_string(cluster.maxNodes) +
           ", expected 0 (unbounded) or more";
  if (!positive(cluster.device.memoryBandwidthBytesPerSecond))
    return prefix + "device memory bandwidth must be positive";
  for (const auto &[name, link] : {std::pair<const char *, const LinkSpec &>{
                                       "intra_node", cluster.intraNode},
                                   {"inter_node", cluster.interNode}})
    if (!positive(link.bandwidthBytesPerSecond) ||
        !(link.latencySeconds >= 0) || !std::isfinite(link.latencySeconds))
      return prefix + name +
             " needs a positive bandwidth and a finite latency >= 0";
  for (const auto &[dtype, peak] : cluster.device.peakFlopsPerSecond)
    if (!positive(peak))
      return prefix + "peak FLOP/s for `" + dtype + "` must be positive";
  for (const auto &[name, fraction] : cluster.achievableFraction)
    if (!(fraction > 0 && fraction <= 1))
      return prefix + "achievable fraction of `" + name + "` is " +
             std::to_string(fraction) + ", expected a value in (0, 1]";
  return std::nullopt;
}

} // namespace

std::string_view stringifyCollectiveAlgorithm(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
  case CollectiveAlgorithm::Ring:
    return "ring";
  case CollectiveAlgorithm::Tree:
    return "tree";
  case CollectiveAlgorithm::Hierarchical:
    return "hierarchical";
  case CollectiveAlgorithm::Measured:
    return "measured";
  }
  return "ring";
}

ValueOrError<MeshPlacement> MeshPlacement::get(const ClusterSpec &cluster,
                                               const Mesh &mesh) {
  using Result = ValueOrError<MeshPlacement>;
  int64_t perNode = cluster.devicesPerNode;
  if (perNode < 1)
    return Result::failure("cluster `" + cluster.name +
                           "` has devices_per_node " + std::to_string(perNode) +
                           ", expected at least 1");
  MeshPlacement placement;
  int64_t numDevices = mesh.getNumDevices();
  placement.devicesPerNodeOnAxis.assign(mesh.getNumAxes(), 1);
  if (numDevices <= perNode) {
    // One node holds the whole mesh.
    for (size_t i = 0; i < mesh.getNumAxes(); ++i)
      placement.devicesPerNodeOnAxis[i] = mesh.getAxis(i).size;
    placement.numNodes = 1;
    return placement;
  }
  if (numDevices % perNode != 0)
    return Result::failure(
        "mesh " + mesh.toString() + " has " + std::to_string(numDevices) +
        " devices, which do not fill whole nodes of " +
        std::to_string(perNode) + " devices of cluster `" + cluster.name + "`");
  placement.numNodes = numDevices / perNode;
  if (cluster.maxNodes > 0 && placement.numNodes > cluster.maxNodes)
    return Result::failure("mesh " + mesh.toString() + " needs " +
                           std::to_string(placement.numNodes) + " nodes of " +
                           std::to_string(perNode) + " devices; cluster `" +
                           cluster.name + "` has at most " +
                           std::to_string(cluster.maxNodes));
  // Room left in a node, walking from the fastest-varying (last) axis.
  int64_t room = perNode;
  for (size_t i = mesh.getNumAxes(); i-- > 0;) {
    int64_t size = mesh.getAxis(i).size;
    if (room % size == 0) {
      placement.devicesPerNodeOnAxis[i] = size;
      room /= size;
    } else if (size % room == 0) {
      // The axis straddles the node boundary: its minor `room` coordinates
      // share a node.
      placement.devicesPerNodeOnAxis[i] = room;
      room = 1;
    } else {
      return Result::failure("mesh axis `" + mesh.getAxis(i).name + "` (size " +
                             std::to_string(size) + ") of mesh " +
                             mesh.toString() + " straddles nodes of " +
                             std::to_string(perNode) + " devices unevenly (" +
                             std::to_string(room) + " places left in a node)");
    }
  }
  return placement;
}

ValueOrError<ClusterCostModel> ClusterCostModel::get(ClusterSpec cluster,
                                                     Mesh mesh) {
  if (std::optional<std::string> error = verifyCluster(cluster))
    return ValueOrError<ClusterCostModel>::failure(*error);
  ValueOrError<MeshPlacement> placement = MeshPlacement::get(cluster, mesh);
  if (!placement)
    return ValueOrError<ClusterCostModel>::failure(placement.error());
  return ClusterCostModel(std::move(cluster), std::move(mesh), *placement);
}

/// The time of `cost` by the calibration's curves, or none where they do
/// not say (a GEMM of unknown shape, a dtype without a curve).
static std::optional<double>
getCalibratedSeconds(const Calibration &calibration, const OpCost &cost,
                     std::string_view elementTypeName) {
  double bytes = static_cast<double>(cost.bytesRead) +
                 static_cast<double>(cost.bytesWritten);
  auto memoryBound = [&](const Curve1D &curve) {
    return bytes > 0 ? bytes / curve.getRate(bytes) : 0.0;
  };
  std::string dtype(elementTypeName);
  switch (cost.opClass) {
  case OpClass::Gemm: {
    auto curve = calibration.gemm.find(dtype);
    if (curve == calibration.gemm.end() || cost.gemmM <= 0 || cost.gemmN <= 0 ||
        cost.gemmK <= 0 || cost.flops <= 0)
      return std::nullopt;
    return cost.flops / curve->second.getRate(double(cost.gemmM),
                                              double(cost.gemmN),
                                              double(cost.gemmK));
  }
  case OpClass::Attention: {
    auto curve = calibration.attention.find(dtype);
    if (curve == calibration.attention.end() || cost.flops <= 0)
      return std::nullopt;
    return cost.flops / curve->second.getRate(cost.flops);
  }
  case OpClass::Reduction:
    return memoryBound(calibration.rowKernel);
  case OpClass::Elementwise:
  case OpClass::DataMovement:
  case OpClass::Optimizer:
    return memoryBound(calibration.elementwise);
  }
  return std::nullopt;
}

ValueOrError<double>
ClusterCostModel::getComputeSeconds(const OpCost &cost,
                                    std::string_view elementTypeName) const {
  if (cluster.calibration)
    if (std::optional<double> seconds =
            getCalibratedSeconds(*cluster.calibration, cost, elementTypeName))
      return *seconds;
  std::string className = stringifyOpClass(cost.opClass).str();
  auto found = cluster.achievableFraction.find(className);
  double fraction = found != cluster.achievableFraction.end()
                        ? found->second
                        : getDefaultAchievableFraction(className);
  double bytes = static_cast<double>(cost.bytesRead) +
                 static_cast<double>(cost.bytesWritten);
  double memorySeconds =
      bytes / (cluster.device.memoryBandwidthBytesPerSecond * fraction);
  // Ops without arithmetic (gathers, copies, integer index math) need no
  // peak for their element type.
  if (cost.flops <= 0)
    return memorySeconds;
  auto peak =
      cluster.device.peakFlopsPerSecond.find(std::string(elementTypeName));
  if (peak == cluster.device.peakFlopsPerSecond.end()) {
    std::string known;
    for (const auto &[dtype, value] : cluster.device.peakFlopsPerSecond)
      known += (known.empty() ? "" : ", ") + dtype;
    return ValueOrError<double>::failure(
        "device `" + cluster.device.name + "` of cluster `" + cluster.name +
        "` has no peak FLOP/s for `" + std::string(elementTypeName) +
        "` (it has " + (known.empty() ? std::string("none") : known) + ")");
  }
  double flopSeconds = cost.flops / (peak->second * fraction);
  return std::max(flopSeconds, memorySeconds);
}

CollectiveTime ClusterCostModel::getCollectiveTime(CollectiveKind kind,
                                                   const Layout::AxisList &axes,
                                                   double bytesBefore,
                                                   double bytesAfter) const {
  return priceCollective(cluster, mesh, placement, kind, axes, bytesBefore,
                         bytesAfter);
}

double ClusterCostModel::getPointToPointSeconds(double bytes,
                                                int64_t rankDistance) const {
  bool insideNode = rankDistance < cluster.devicesPerNode;
  if (insideNode && cluster.calibration)
    if (std::optional<CollectiveFit> fit =
            cluster.calibration->findCollective("send_recv", 2))
      return fit->latencySeconds + bytes / fit->bandwidthBytesPerSecond;
  const LinkSpec &link = insideNode ? cluster.intraNode : cluster.interNode;
  return link.latencySeconds + bytes / link.bandwidthBytesPerSecond;
}

double ClusterCostModel::getStepCost(const StepCostQuery &query) const {
  if (query.mesh == mesh)
    return getCollectiveTime(query.kind, query.axes, query.bytesBefore,
                             query.bytesAfter)
        .seconds;
  // A planner shared across meshes: place this one too. A mesh the cluster
  // cannot hold is priced as if every axis crossed nodes, the slowest case.
  ValueOrError<MeshPlacement> other = MeshPlacement::get(cluster, query.mesh);
  MeshPlacement fallback;
  fallback.devicesPerNodeOnAxis.assign(query.mesh.getNumAxes(), 1);
  fallback.numNodes = query.mesh.getNumDevices();
  return priceCollective(cluster, query.mesh, other ? *other : fallback,
                         query.kind, query.axes, query.bytesBefore,
                         query.bytesAfter)
      .seconds;
}

} // namespace mlir::loom::dist

//===- ClusterSpec.h - The machines a plan runs on --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A cluster spec describes what the cost model needs of a cluster: one kind
// of device (peak FLOP/s per dtype, memory bandwidth and capacity), how many
// sit in a node, and the two link levels (inside a node, between nodes) with
// their bandwidth and latency. Specs are JSON (docs/CostModel.md gives the
// schema) and Loom ships presets for common machines, every number with its
// source. Units are SI throughout: bytes, seconds, bytes/s, FLOP/s.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_COST_CLUSTERSPEC_H
#define LOOM_ANALYSIS_COST_CLUSTERSPEC_H

#include "loom/Analysis/Cost/Calibration.h"
#include "loom/Analysis/Layout/Layout.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::loom::dist {

/// One level of interconnect, as each device sees it.
struct LinkSpec {
  /// The bandwidth one device can drive over this level in one direction,
  /// in bytes/s (for a node's NICs: the node's total divided by its devices).
  double bandwidthBytesPerSecond = 0;
  /// The latency of one message over this level, in seconds.
  double latencySeconds = 0;
};

/// One kind of accelerator (or CPU socket, for the host preset).
struct DeviceSpec {
  std::string name;
  /// Dense peak FLOP/s by element type name (`f64`, `f32`, `bf16`, `f16`);
  /// a dtype absent here cannot be priced (an error names it).
  std::map<std::string, double> peakFlopsPerSecond;
  /// Device memory bandwidth, in bytes/s.
  double memoryBandwidthBytesPerSecond = 0;
  /// Device memory capacity, in bytes.
  int64_t memoryBytes = 0;
};

/// A homogeneous cluster: nodes of `devicesPerNode` identical devices.
struct ClusterSpec {
  /// The preset name, or the file's `name` field.
  std::string name;
  DeviceSpec device;
  int64_t devicesPerNode = 1;
  /// The most nodes the cluster has (0 = as many as asked for).
  int64_t maxNodes = 0;
  LinkSpec intraNode;
  LinkSpec interNode;
  /// The fraction of peak each op class reaches, keyed by the class names
  /// `stringifyOpClass` prints (`gemm`, `elementwise`, ...); classes absent
  /// use the spec's defaults (docs/CostModel.md says how they were chosen).
  std::map<std::string, double> achievableFraction;
  /// Curves measured by `loom-calibrate`, or null (presets): where present,
  /// the cost model prices by them (docs/CostModel.md, "Calibrated curves").
  /// Shared: a spec is copied into every mesh's cost model.
  std::shared_ptr<const Calibration> calibration;
};

/// Parses a cluster spec from JSON text. `sourceName` (a file name) starts
/// every message; messages name the JSON path, what was expected and what
/// was found.
ValueOrError<ClusterSpec> parseClusterSpec(std::string_view jsonText,
                                           std::string_view sourceName);

/// Returns the preset called `name` (`dgx-a100-80g`, `dgx-h100`, `p3-v100`,
/// `host`), or a failure listing the presets.
ValueOrError<ClusterSpec> getClusterPreset(std::string_view name);

/// Resolves `--cluster`: a preset name, else a JSON file path. Each
/// distinct file (by path and bytes) is parsed once per process: the
/// passes of one compile each resolve the option text.
ValueOrError<ClusterSpec> loadClusterSpec(std::string_view presetOrFile);

/// `parseClusterSpec`, each distinct text (and source name) parsed once per
/// process and the result shared: a spec file, or the `dist.cluster` JSON
/// the search records, is read by several passes of one compile.
ValueOrError<ClusterSpec> getParsedClusterSpec(std::string_view jsonText,
                                               std::string_view sourceName);

/// How many texts `getParsedClusterSpec` (and so `loadClusterSpec`) has
/// parsed in this process (not answered from its cache); for tests.
size_t getNumClusterSpecParses();

/// The preset names, in a stable order.
std::vector<std::string> getClusterPresetNames();

/// Prints a spec back as JSON (presets included), for `--report` and tests.
std::string printClusterSpec(const ClusterSpec &spec);

/// The fraction of peak the op class named `opClassName` reaches when a spec
/// does not say (docs/CostModel.md says how it was chosen); 0 for a name
/// that is not an op class. `parseClusterSpec` fills these in, so a parsed
/// spec lists every class.
double getDefaultAchievableFraction(std::string_view opClassName);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_COST_CLUSTERSPEC_H

//===- LayoutAssignment.h - Strategies in, layouts assigned -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The engine behind `dist-insert-reshards`: gives every op of the entry
// function a strategy, every value a layout, and inserts a `dist.reshard`
// wherever a value's layout differs from the one a user requires. The pass
// only parses its options and calls assignLayouts; loomc and tests can call
// it directly. The algorithm is described in docs/Partitioning.md, "Layout
// assignment", and in LayoutAssignment.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_LAYOUTASSIGNMENT_H
#define LOOM_DIALECT_DIST_TRANSFORMS_LAYOUTASSIGNMENT_H

#include "loom/Analysis/Strategy/ShardingSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <memory>
#include <string>

namespace mlir::loom::dist {

/// What layout assignment starts from.
struct LayoutAssignmentOptions {
  /// The function to partition; `forward` is used when it is absent.
  std::string entry = "train_step";
  /// The mesh to create when the module has none (`dp=2,tp=2`); when the
  /// spec names a mesh too, both must be the same (resolveMeshSpec).
  std::string mesh;
  /// Strategies from a strategy file and a parallel config.
  ShardingSpec spec;
  /// Whether an op whose choice depends on the same things as an earlier
  /// op's (docs/Partitioning.md, "Choosing once per context") takes that
  /// choice instead of choosing again. Off only to check it changes nothing.
  bool reuseChoices = true;
  /// Under ZeRO-3: gather each parameter before its layer's forward and
  /// again before its backward, per micro-batch, one layer ahead
  /// (ParameterGathers.h), rather than once at the step's start. Off only to
  /// measure what the per-layer gathers save.
  bool gatherPerLayer = true;
  /// Where to count the reused choices, if anywhere.
  int64_t *reusedChoices = nullptr;
};

/// Runs layout assignment on `module` (see the file comment). Emits an error
/// naming the op, the operand and the dim on bad input, and fails.
LogicalResult assignLayouts(ModuleOp module,
                            const LayoutAssignmentOptions &options);

/// A strategy file and a parallel config, read: the spec they give, or
/// why they could not be read.
struct LoadedShardingSpec {
  /// Empty when they were read.
  std::string error;
  ShardingSpec spec;
};

/// Reads a strategy file and a parallel config (inline JSON when it starts
/// with `{`, else a file path); either may be empty. The passes of one
/// compile name them by their option text, and each distinct pair of inputs
/// (by its bytes) is parsed once per process and shared
/// (loom/Support/ParseCache.h).
std::shared_ptr<const LoadedShardingSpec>
getShardingSpec(const std::string &strategyFile,
                const std::string &parallelConfig);

/// How many strategy-file / parallel-config pairs `getShardingSpec` has
/// parsed in this process (not answered from its cache); for tests.
size_t getNumShardingSpecParses();

/// `getShardingSpec`'s spec, copied into `spec` (left as it is on an
/// error). Returns the error message, or an empty string.
std::string loadShardingSpec(const std::string &strategyFile,
                             const std::string &parallelConfig,
                             ShardingSpec &spec);

/// The mesh a pass uses: the `mesh` option (loomc's --mesh) or else the
/// mesh `spec` names (`spec.meshSource`: a parallel config or a strategy
/// file). When both name a mesh they must be the same mesh, or the error
/// names both flags: --mesh used to win without a word, and the config's
/// splits then failed on an axis the mesh lacks. Returns an error message,
/// or an empty string.
std::string resolveMeshSpec(const std::string &meshOption,
                            const ShardingSpec &spec, std::string &mesh);

/// The pipeline a strategy file and parallel config ask for.
struct RequestedPipeline {
  int64_t stages = 1;
  int64_t microBatches = 1;
  /// Chunks per stage (`pp_interleave_num`); 1 = not interleaved.
  int64_t virtualStages = 1;
  /// Copies of the batch interleaved through the layers
  /// (`fine_grain_interleave`); 1 = none.
  int64_t copies = 1;
  /// The data-parallel degree one stage's batch is split over, which the
  /// copies must divide a rank's rows after.
  int64_t dataParallel = 1;
  /// Whether the config turns Megatron sequence parallelism on
  /// (`use_seq_parallel`), which the copies need.
  bool sequenceParallel = false;
  /// Layers per stage (from a strategy file's `layer_stages`); empty for
  /// an even split.
  std::vector<int64_t> stageLayerCounts;
};

/// The pipeline the strategy file and parallel config ask for (none when
/// they cannot be read, which dist-insert-reshards then reports).
RequestedPipeline getRequestedPipeline(const std::string &strategyFile,
                                       const std::string &parallelConfig);

/// The precision policy the parallel config names (its `precision` key);
/// empty when it names none or cannot be read (dist-insert-reshards then
/// reports it).
std::string getRequestedPrecision(const std::string &strategyFile,
                                  const std::string &parallelConfig);

/// Whether the strategy file and parallel config ask for activation
/// recompute (`recompute: true`); false when they cannot be read, which
/// dist-insert-reshards then reports.
bool requestsRecompute(const std::string &strategyFile,
                       const std::string &parallelConfig);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_LAYOUTASSIGNMENT_H

//===- ShardingSpec.h - User strategies: files and parallel configs -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The semi-automatic inputs of layout assignment, parsed from JSON into
// plain structs that name no IR:
//
//   - a *strategy file* (docs/Partitioning.md, "Strategy files"): per-op
//     splits of each operand dim over mesh axes, as MindSpore's `shard()`
//     gives them, and per-argument layouts;
//   - a MindSpore/MindFormers *parallel config* (`data_parallel`,
//     `model_parallel`, `vocab_emb_dp`, `use_seq_parallel`,
//     `optimizer_shard`, ...), expanded into the same op entries for the
//     builder models' parameter names (Megatron column/row linears,
//     vocab-parallel embedding and head, sequence-parallel norms).
//
// An op entry selects forward ops by the name of a parameter (or other named
// argument) they consume, a glob, and optionally by op kind; dist-insert-
// reshards resolves the splits through each op's sharding rule.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_STRATEGY_SHARDINGSPEC_H
#define LOOM_ANALYSIS_STRATEGY_SHARDINGSPEC_H

#include "loom/Analysis/Layout/Layout.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::loom::dist {

/// Splits of one operand dim. `dim` may count from the end (-1 = last).
struct DimSplit {
  unsigned operand = 0;
  int64_t dim = 0;
  Layout::AxisList axes;
};

/// How a parallel-config entry splits the parameter it matched: a dim of
/// it, or the factor of its that the op contracts (`Contraction`: the input
/// features of a linear, row-parallel) or keeps (`Feature`: the output
/// features, column-parallel).
struct ParamSplit {
  enum class Kind { Dim, Feature, Contraction };
  Kind kind = Kind::Dim;
  int64_t dim = 0;
  Layout::AxisList axes;
};

/// The roles of the ops a parallel config's expansion selects, by what they
/// compute. This library names no op: the IR side maps each role to its op
/// (FixedStrategies.cpp).
enum class OpRole {
  Any,
  Attention,
  Matmul,
  Embedding,
  LayerNorm,
  RmsNorm,
  Add,
};

/// A constraint on every forward op that consumes an argument whose name
/// matches `match` (and, when `opKind` or `opRole` is set, is of that
/// kind); with an empty `match`, on every forward op of that kind (ops such
/// as attention consume no parameter to match them by).
struct OpEntry {
  /// A glob (`*`, `?`, `[..]`) over argument names (`loom.param` or
  /// `loom.name`); empty to match by kind alone.
  std::string match;
  /// An op name as a strategy file gives it, such as `loom.matmul`; empty
  /// for any.
  std::string opKind;
  /// The role of the ops a parallel-config entry selects; Any for any.
  OpRole opRole = OpRole::Any;
  /// Per operand, the axes of each dim (a strategy file's `in`); an operand
  /// given as `null`, or missing entirely, is not constrained.
  std::optional<std::vector<std::optional<std::vector<Layout::AxisList>>>> in;
  /// Sparse splits (parallel config): only these dims are fixed.
  std::vector<DimSplit> dimSplits;
  std::vector<ParamSplit> paramSplits;
  /// Where the entry came from, for messages: `ops[2]`, `parallel config
  /// (column-parallel linear)`.
  std::string origin;
};

/// Everything the user fixed, merged from a strategy file and a parallel
/// config.
struct ShardingSpec {
  /// `dp=2,tp=2`; empty when the spec names no mesh.
  std::string mesh;
  /// The flag whose file named `mesh`, for messages: `--parallel-config`
  /// or `--strategy` (set by loadShardingSpec).
  std::string meshSource;
  /// The axes data inputs are split over on their batch dim; std::nullopt
  /// when not given (then the mesh's `dp` axis, if any).
  std::optional<Layout::AxisList> dataParallelAxes;
  /// The axes data inputs of rank 2 or more are split over on their
  /// sequence dim (dim 1; Ulysses sequence parallelism); empty for none.
  Layout::AxisList sequenceParallelAxes;
  std::vector<OpEntry> ops;
  /// Argument layouts by argument name, dim by dim.
  std::map<std::string, std::vector<Layout::AxisList>> args;
  /// The ZeRO stage over the data-parallel axes (docs/Partitioning.md,
  /// "ZeRO"): 0: none; 1: optimizer states and updates sharded (ZeRO-1);
  /// 2: the accumulated gradients sharded as well, each micro-batch's
  /// gradient reduce-scattered into its shard (ZeRO-2); 3: parameters
  /// stored sharded as well (ZeRO-3). With `zeroFixed` false the search
  /// chooses the stage and this is unused until it has.
  int optimizerShard = 0;
  /// Whether the user fixed the stage (`zero_stage`, `optimizer_shard` or
  /// `gradient_accumulation_shard`); the search then only prices it.
  bool zeroFixed = false;
  /// The highest stage the search may choose when the stage is not fixed
  /// (`gradient_accumulation_shard: false` makes it 1).
  int zeroMaxStage = 3;
  /// The device count the config implies (data_parallel * model_parallel),
  /// checked against the mesh; 0 when unknown.
  int64_t devices = 0;
  /// Full activation recompute of every transformer layer: the partition
  /// pipeline runs `loom-recompute{layers=all}` before assigning layouts.
  bool recompute = false;
  /// Pipeline stages and micro-batches (`pipeline_stage`, `micro_batch_num`;
  /// 1 = none): the driver's pipeline phase and autodiff read them.
  int64_t pipelineStages = 1;
  int64_t microBatches = 1;
  /// Chunks per stage under interleaved 1F1B (`pp_interleave_num`; 1 =
  /// not interleaved).
  int64_t virtualStages = 1;
  /// The stage of each transformer layer (`layer_stages` of a strategy
  /// file); empty for an even split.
  std::vector<int64_t> layerStages;
  /// The precision policy (`precision`: f32, bf16-mixed or fp16-mixed);
  /// empty when not given. The driver merges it with `--precision`.
  std::string precision;
};

/// Parses a strategy file's text into `spec` (appending). Errors name the
/// JSON path: "strategy file: ops[1].in[0][2]: expected a list of mesh axis
/// names, got 3". Returns an empty string on success.
std::string parseStrategyFile(const std::string &text, ShardingSpec &spec);

/// The MindSpore/MindFormers parallel config keys Loom understands.
struct ParallelConfig {
  int64_t dataParallel = 1;
  int64_t modelParallel = 1;
  bool vocabEmbDp = true;
  bool useSeqParallel = false;
  /// The ZeRO stage (`optimizer_shard`: true is 1; `zero_stage`: 0-3;
  /// `gradient_accumulation_shard`: true raises 1 to 2); std::nullopt when
  /// the config names none (the search chooses).
  std::optional<int> zeroStage;
  /// `gradient_accumulation_shard` as given; false bounds the search's
  /// stage to 1.
  std::optional<bool> accumulationShard;
  bool recompute = false;
  /// MindFormers' `context_parallel` (the number of sequence slices) with
  /// `context_parallel_algo`: `colossalai_cp` (ring attention, the default),
  /// `ulysses_cp` or `hybrid_cp` (`hybird_cp`, as MindFormers' docs spell
  /// it, is read as `hybrid_cp`).
  int64_t contextParallel = 1;
  std::string contextParallelAlgo = "colossalai_cp";
  /// `ulysses_degree_in_cp`: under `hybrid_cp` the Ulysses part U of
  /// `context_parallel` C (all-to-all over U, a ring over C / U); std::nullopt
  /// when the config does not name it.
  std::optional<int64_t> ulyssesDegreeInCp;
  /// `pipeline_stage` and `micro_batch_num` (docs/Pipeline.md).
  int64_t pipelineStages = 1;
  int64_t microBatches = 1;
  /// `precision`: f32, bf16-mixed or fp16-mixed (docs/MixedPrecision.md);
  /// empty when the config does not say.
  std::string precision;
  /// MindFormers' `pp_interleave_num` (chunks per stage, the interleaved
  /// 1F1B schedule when > 1) and `pipeline_interleave` (true asks for it;
  /// unset: implied by `pp_interleave_num`).
  int64_t virtualStages = 1;
  std::optional<bool> pipelineInterleave;
};

/// Parses a parallel config (JSON object). Unknown keys, and keys of
/// features not implemented yet set to anything but their neutral value
/// (`context_parallel` > 1 with an unknown algorithm,
/// `gradient_aggregation_group` > 1), are errors, and so is a `hybrid_cp`
/// whose `ulysses_degree_in_cp` is missing or does not divide
/// `context_parallel`.
ValueOrError<ParallelConfig> parseParallelConfig(const std::string &text);

/// Expands a parallel config into `spec`: mesh `dp=D,tp=M` (axes of size 1
/// left out, `dp=1` kept when both are 1), data-parallel axes, Megatron
/// column/row linears for the builder models' parameter names when M > 1,
/// vocab-parallel embedding and head when `vocab_emb_dp` is false,
/// sequence-parallel norms and row-linear biases with `use_seq_parallel`,
/// the optimizer shard level and recompute. `context_parallel` C > 1
/// (`ulysses_cp`) adds a mesh axis `sp=C` between dp and tp
/// (DeepSpeed-Ulysses): data inputs and every linear's input split their
/// sequence over sp, and attention splits its heads over (tp, sp), so the
/// planner moves q, k, v and the attention output between the two with
/// all-to-alls. With `colossalai_cp` the axis is `cp=C` and attention keeps the
/// sequence split over it (ring attention, dist.ring_attention after
/// partitioning). `hybrid_cp` with `ulysses_degree_in_cp` U has both: mesh
/// axes `cp=C/U` (the ring) and `sp=U` (Ulysses) between dp and tp, the
/// sequence split over (cp, sp), attention's sequence over cp and its heads
/// over (tp, sp).
void expandParallelConfig(const ParallelConfig &config, ShardingSpec &spec);

} // namespace mlir::loom::dist

#endif // LOOM_ANALYSIS_STRATEGY_SHARDINGSPEC_H

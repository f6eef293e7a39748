//===- ShardingSpec.cpp - User strategies: files and parallel configs -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// JSON is read strictly (loom/Support/JSON.h: no duplicate keys, bounded
// depth, never throws), then every access is type-checked first, so no user
// input can throw.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Strategy/ShardingSpec.h"

#include "loom/Support/JSON.h"

#include <nlohmann/json.hpp>

#include <set>

using json = nlohmann::json;

namespace mlir::loom::dist {

/// A short rendering of a JSON value for "got ..." in messages.
static std::string describe(const json &value) {
  std::string text = value.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

/// Reads `["dp", "tp"]` at `path`.
static std::string readAxisList(const json &value, const std::string &path,
                                Layout::AxisList &axes) {
  if (!value.is_array())
    return path + ": expected a list of mesh axis names, got " +
           describe(value);
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string() || value[i].get<std::string>().empty())
      return path + "[" + std::to_string(i) +
             "]: expected a mesh axis name, got " + describe(value[i]);
    axes.push_back(value[i].get<std::string>());
  }
  return "";
}

/// Reads `[["dp"], [], ["tp"]]` (one axis list per dim) at `path`.
static std::string readDims(const json &value, const std::string &path,
                            std::vector<Layout::AxisList> &dims) {
  if (!value.is_array())
    return path + ": expected one list of mesh axes per dim, got " +
           describe(value);
  for (size_t d = 0; d < value.size(); ++d) {
    Layout::AxisList axes;
    std::string error =
        readAxisList(value[d], path + "[" + std::to_string(d) + "]", axes);
    if (!error.empty())
      return error;
    dims.push_back(std::move(axes));
  }
  return "";
}

std::string parseStrategyFile(const std::string &text, ShardingSpec &spec) {
  json root;
  if (auto parseError = ::loom::support::parseJSON(text, root))
    return "strategy file: " + parseError->format();
  if (!root.is_object())
    return "strategy file: expected an object, got " + describe(root);
  static const std::set<std::string> known = {
      "mesh", "data_parallel_axes", "sequence_parallel_axes", "ops", "args",
      "layer_stages"};
  for (auto it = root.begin(); it != root.end(); ++it)
    if (!known.count(it.key()))
      return "strategy file: unknown key `" + it.key() +
             "` (expected mesh, data_parallel_axes, sequence_parallel_axes, "
             "ops, args, layer_stages)";

  // The pipeline stage of each transformer layer, in forward order (as
  // seed 000's pipeline_func): stage ids start at 0 and never fall.
  if (root.contains("layer_stages")) {
    const json &stages = root["layer_stages"];
    if (!stages.is_array() || stages.empty())
      return "strategy file: layer_stages: expected a non-empty list of "
             "stage ids, got " + describe(stages);
    int64_t previous = 0;
    for (size_t i = 0; i < stages.size(); ++i) {
      const json &stage = stages[i];
      int64_t id = ::loom::support::getInt64(stage).value_or(-1);
      if (id != previous && id != previous + 1)
        return "strategy file: layer_stages[" + std::to_string(i) +
               "]: expected stage " + std::to_string(previous) + " or " +
               std::to_string(previous + 1) +
               " (stages start at 0, hold consecutive layers and skip none), "
               "got " + describe(stage);
      if (i == 0 && id != 0)
        return "strategy file: layer_stages[0]: expected stage 0, got " +
               describe(stage);
      previous = id;
      spec.layerStages.push_back(id);
    }
    spec.pipelineStages = previous + 1;
  }

  if (root.contains("mesh")) {
    if (!root["mesh"].is_string())
      return "strategy file: mesh: expected a string such as \"dp=2,tp=2\", "
             "got " + describe(root["mesh"]);
    spec.mesh = root["mesh"].get<std::string>();
  }
  if (root.contains("data_parallel_axes")) {
    Layout::AxisList axes;
    std::string error = readAxisList(root["data_parallel_axes"],
                                     "strategy file: data_parallel_axes", axes);
    if (!error.empty())
      return error;
    spec.dataParallelAxes = axes;
  }
  if (root.contains("sequence_parallel_axes")) {
    std::string error =
        readAxisList(root["sequence_parallel_axes"],
                     "strategy file: sequence_parallel_axes",
                     spec.sequenceParallelAxes);
    if (!error.empty())
      return error;
  }
  if (root.contains("ops")) {
    const json &ops = root["ops"];
    if (!ops.is_array())
      return "strategy file: ops: expected a list, got " + describe(ops);
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string path = "strategy file: ops[" + std::to_string(i) + "]";
      const json &op = ops[i];
      if (!op.is_object())
        return path + ": expected an object, got " + describe(op);
      for (auto it = op.begin(); it != op.end(); ++it)
        if (it.key() != "match" && it.key() != "op" && it.key() != "in")
          return path + ": unknown key `" + it.key() +
                 "` (expected match, op, in)";
      OpEntry entry;
      entry.origin = "ops[" + std::to_string(i) + "]";
      // Without `match`, an entry selects ops by kind alone.
      if (op.contains("match") || !op.contains("op")) {
        if (!op.contains("match") || !op["match"].is_string() ||
            op["match"].get<std::string>().empty())
          return path + ".match: expected a glob over argument names (or "
                        "only `op`, to select every forward op of a kind)";
        entry.match = op["match"].get<std::string>();
      }
      if (op.contains("op")) {
        if (!op["op"].is_string())
          return path + ".op: expected an op name such as \"loom.matmul\", "
                 "got " + describe(op["op"]);
        entry.opKind = op["op"].get<std::string>();
      }
      if (!op.contains("in") || !op["in"].is_array())
        return path + ".in: expected one entry per operand";
      entry.in.emplace();
      const json &in = op["in"];
      for (size_t o = 0; o < in.size(); ++o) {
        if (in[o].is_null()) {
          entry.in->push_back(std::nullopt);
          continue;
        }
        std::vector<Layout::AxisList> dims;
        std::string error =
            readDims(in[o], path + ".in[" + std::to_string(o) + "]", dims);
        if (!error.empty())
          return error;
        entry.in->push_back(std::move(dims));
      }
      spec.ops.push_back(std::move(entry));
    }
  }
  if (root.contains("args")) {
    const json &args = root["args"];
    if (!args.is_object())
      return "strategy file: args: expected an object from argument names "
             "to layouts, got " + describe(args);
    for (auto it = args.begin(); it != args.end(); ++it) {
      std::vector<Layout::AxisList> dims;
      std::string error =
          readDims(it.value(), "strategy file: args." + it.key(), dims);
      if (!error.empty())
        return error;
      spec.args[it.key()] = std::move(dims);
    }
  }
  return "";
}

/// Reads an integer config value at least 1.
static std::string readCount(const json &value, const std::string &key,
                             int64_t &out) {
  std::optional<int64_t> count = ::loom::support::getInt64(value);
  if (!count || *count < 1)
    return "parallel config: " + key + ": expected an integer >= 1, got " +
           describe(value);
  out = *count;
  return "";
}

/// The ZeRO stage the config's keys name together: `zero_stage` as given,
/// `optimizer_shard` (true: 1) when it is absent, and
/// `gradient_accumulation_shard: true` raising a sharded optimizer's stage
/// to 2 (MindSpore shards the accumulated gradients only under its
/// parallel optimizer; here the key implies it). Keys that disagree, and a
/// `zero_stage` above 0 without a data-parallel axis to shard over, are
/// errors; `optimizer_shard` and `gradient_accumulation_shard` without one
/// change nothing (MindSpore recipes set them whatever the mesh).
static std::string reconcileZeroStage(std::optional<int> optimizerShard,
                                      std::optional<int> zeroStage,
                                      std::optional<bool> accumulationShard,
                                      ParallelConfig &config) {
  std::optional<int> stage = zeroStage;
  if (zeroStage && optimizerShard &&
      (*optimizerShard == 0) != (*zeroStage == 0))
    return "parallel config: optimizer_shard = " +
           std::to_string(*optimizerShard) +
           " disagrees with zero_stage = " + std::to_string(*zeroStage) +
           " (stage 0 has no optimizer shard, "
           "stages 1-3 have one)";
  if (zeroStage && optimizerShard && *optimizerShard == 3 && *zeroStage != 3)
    return "parallel config: optimizer_shard = 3 disagrees with zero_stage = " +
           std::to_string(*zeroStage);
  if (!stage)
    stage = optimizerShard;
  if (accumulationShard) {
    if (*accumulationShard && zeroStage && *zeroStage < 2)
      return "parallel config: gradient_accumulation_shard = true needs "
             "zero_stage 2 or 3 (the accumulated gradients sharded), got "
             "zero_stage = " +
             std::to_string(*zeroStage);
    if (!*accumulationShard && stage && *stage >= 2)
      return "parallel config: gradient_accumulation_shard = false with "
             "ZeRO stage " +
             std::to_string(*stage) +
             ", which shards the accumulated gradients";
    if (*accumulationShard)
      stage = std::max(stage.value_or(0), 2);
    else if (!stage)
      // Unsharded accumulators still leave stages 0 and 1 to the search;
      // the search's choice is bounded in expandParallelConfig.
      stage = std::nullopt;
  }
  if (zeroStage && *zeroStage > 0 && config.dataParallel == 1)
    return "parallel config: zero_stage = " + std::to_string(*zeroStage) +
           " needs data_parallel > 1 (ZeRO shards over the data-parallel "
           "axis), got data_parallel = 1";
  config.zeroStage = stage;
  config.accumulationShard = accumulationShard;
  return "";
}

/// Checks `context_parallel`, its algorithm and `ulysses_degree_in_cp`
/// together; returns the error or "".
static std::string checkContextParallel(const ParallelConfig &config) {
  int64_t cp = config.contextParallel;
  const std::string &algo = config.contextParallelAlgo;
  std::string cpText = std::to_string(cp);
  if (cp > 1 && algo != "ulysses_cp" && algo != "colossalai_cp" &&
      algo != "hybrid_cp")
    return "parallel config: context_parallel = " + cpText +
           " with context_parallel_algo `" + algo +
           "`: expected `colossalai_cp` (ring attention, the default), "
           "`ulysses_cp` (DeepSpeed-Ulysses all-to-all) or `hybrid_cp` "
           "(Ulysses inside a ring, with ulysses_degree_in_cp)";
  if (algo != "hybrid_cp") {
    if (config.ulyssesDegreeInCp.value_or(1) > 1)
      return "parallel config: ulysses_degree_in_cp = " +
             std::to_string(*config.ulyssesDegreeInCp) +
             " needs context_parallel_algo `hybrid_cp`, got `" + algo + "`";
    return "";
  }
  if (cp == 1)
    return "parallel config: context_parallel_algo `hybrid_cp` needs "
           "context_parallel > 1 (the context-parallel degree, Ulysses "
           "degree x ring size), got context_parallel = 1";
  if (!config.ulyssesDegreeInCp)
    return "parallel config: context_parallel_algo `hybrid_cp` needs "
           "ulysses_degree_in_cp (the Ulysses part of context_parallel = " +
           cpText + ")";
  int64_t ulysses = *config.ulyssesDegreeInCp;
  if (cp % ulysses)
    return "parallel config: ulysses_degree_in_cp = " +
           std::to_string(ulysses) +
           " does not divide context_parallel = " + cpText +
           " (hybrid_cp runs Ulysses over " + std::to_string(ulysses) +
           " ranks inside a ring of the rest)";
  return "";
}

ValueOrError<ParallelConfig> parseParallelConfig(const std::string &text) {
  using Result = ValueOrError<ParallelConfig>;
  json root;
  if (auto parseError = ::loom::support::parseJSON(text, root))
    return Result::failure("parallel config: " + parseError->format());
  if (!root.is_object())
    return Result::failure("parallel config: expected an object, got " +
                           describe(root));
  ParallelConfig config;
  // The three keys that name the ZeRO stage, reconciled after the loop.
  std::optional<int> optimizerShard, zeroStage;
  std::optional<bool> accumulationShard;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string &key = it.key();
    const json &value = it.value();
    std::string error;
    int64_t count = 1;
    if (key == "data_parallel") {
      error = readCount(value, key, config.dataParallel);
    } else if (key == "model_parallel") {
      error = readCount(value, key, config.modelParallel);
    } else if (key == "vocab_emb_dp" || key == "use_seq_parallel") {
      if (!value.is_boolean())
        error = "parallel config: " + key + ": expected true or false, got " +
                describe(value);
      else if (key == "vocab_emb_dp")
        config.vocabEmbDp = value.get<bool>();
      else
        config.useSeqParallel = value.get<bool>();
    } else if (key == "optimizer_shard") {
      if (value.is_boolean())
        optimizerShard = value.get<bool>() ? 1 : 0;
      else if (std::optional<int64_t> level = ::loom::support::getInt64(value);
               level && (*level == 0 || *level == 1 || *level == 3))
        optimizerShard = int(*level);
      else
        error = "parallel config: optimizer_shard: expected true, false, 0, "
                "1 (ZeRO-1) or 3 (ZeRO-3), got " + describe(value);
    } else if (key == "zero_stage") {
      if (std::optional<int64_t> stage = ::loom::support::getInt64(value);
          stage && *stage >= 0 && *stage <= 3)
        zeroStage = int(*stage);
      else
        error = "parallel config: zero_stage: expected 0, 1, 2 or 3, got " +
                describe(value);
    } else if (key == "gradient_accumulation_shard") {
      if (!value.is_boolean())
        error = "parallel config: gradient_accumulation_shard: expected true "
                "or false, got " +
                describe(value);
      else
        accumulationShard = value.get<bool>();
    } else if (key == "pipeline_stage") {
      error = readCount(value, key, config.pipelineStages);
    } else if (key == "micro_batch_num") {
      error = readCount(value, key, config.microBatches);
    } else if (key == "pp_interleave_num") {
      error = readCount(value, key, config.virtualStages);
    } else if (key == "pipeline_interleave") {
      if (!value.is_boolean())
        error = "parallel config: pipeline_interleave: expected true or "
                "false, got " +
                describe(value);
      else
        config.pipelineInterleave = value.get<bool>();
    } else if (key == "gradient_aggregation_group") {
      error = readCount(value, key, count);
      if (error.empty() && count > 1)
        error = "parallel config: gradient_aggregation_group = " +
                std::to_string(count) +
                ": gradient all-reduce fusion groups are not implemented yet";
    } else if (key == "context_parallel") {
      error = readCount(value, key, config.contextParallel);
    } else if (key == "context_parallel_algo") {
      if (!value.is_string())
        error = "parallel config: context_parallel_algo: expected a string, "
                "got " + describe(value);
      else
        config.contextParallelAlgo = value.get<std::string>();
      // MindFormers' own docs (seed 003) spell it `hybird_cp`.
      if (config.contextParallelAlgo == "hybird_cp")
        config.contextParallelAlgo = "hybrid_cp";
    } else if (key == "ulysses_degree_in_cp") {
      error = readCount(value, key, count);
      config.ulyssesDegreeInCp = count;
    } else if (key == "use_attn_mask_compression") {
      // MindFormers' switch that stops materializing the S x S causal mask;
      // Loom's attention is causal by an attribute and never builds one, so
      // either value leaves the program as it is.
      if (!value.is_boolean())
        error = "parallel config: use_attn_mask_compression: expected true "
                "or false, got " +
                describe(value);
    } else if (key == "precision") {
      if (!value.is_string() || (value.get<std::string>() != "f32" &&
                                 value.get<std::string>() != "bf16-mixed" &&
                                 value.get<std::string>() != "fp16-mixed"))
        error = "parallel config: precision: expected \"f32\", "
                "\"bf16-mixed\" or \"fp16-mixed\", got " +
                describe(value);
      else
        config.precision = value.get<std::string>();
    } else if (key == "recompute") {
      if (!value.is_boolean())
        error = "parallel config: recompute: expected true or false, got " +
                describe(value);
      else
        config.recompute = value.get<bool>();
    } else {
      error = "parallel config: unknown key `" + key +
              "` (expected data_parallel, model_parallel, pipeline_stage, "
              "micro_batch_num, pp_interleave_num, pipeline_interleave, "
              "optimizer_shard, zero_stage, gradient_accumulation_shard, "
              "gradient_aggregation_group, "
              "recompute, vocab_emb_dp, use_seq_parallel, context_parallel, "
              "context_parallel_algo, ulysses_degree_in_cp, "
              "use_attn_mask_compression, precision)";
    }
    if (!error.empty())
      return Result::failure(error);
  }
  if (std::string error = reconcileZeroStage(optimizerShard, zeroStage,
                                             accumulationShard, config);
      !error.empty())
    return Result::failure(error);
  if (std::string error = checkContextParallel(config); !error.empty())
    return Result::failure(error);
  if (config.contextParallel > 1 && config.useSeqParallel)
    return Result::failure("parallel config: use_seq_parallel with "
                           "context_parallel > 1 is not supported (both "
                           "split the sequence)");
  // MindFormers turns the interleaved schedule on with both keys; either
  // alone names what it needs.
  if (config.pipelineInterleave.value_or(config.virtualStages > 1) &&
      config.virtualStages < 2)
    return Result::failure(
        "parallel config: pipeline_interleave = true needs pp_interleave_num "
        ">= 2 (chunks per stage), got " +
        std::to_string(config.virtualStages));
  if (config.pipelineInterleave == false && config.virtualStages > 1)
    return Result::failure(
        "parallel config: pp_interleave_num = " +
        std::to_string(config.virtualStages) +
        " with pipeline_interleave = false: interleaving needs it true");
  return config;
}

/// Adds an entry that splits the matched parameter of ops of `opRole`.
static void addParamEntry(ShardingSpec &spec, const std::string &match,
                          OpRole opRole, ParamSplit split,
                          const std::string &origin) {
  OpEntry entry;
  entry.match = match;
  entry.opRole = opRole;
  entry.paramSplits.push_back(std::move(split));
  entry.origin = "parallel config (" + origin + ")";
  spec.ops.push_back(std::move(entry));
}

void expandParallelConfig(const ParallelConfig &config, ShardingSpec &spec) {
  int64_t dp = config.dataParallel, tp = config.modelParallel;
  int64_t cp = config.contextParallel;
  // The context-parallel degree as a ring over `cp` (R ranks) times Ulysses
  // over `sp` (U ranks): colossalai_cp is U = 1, ulysses_cp R = 1 and
  // hybrid_cp both (parseParallelConfig checked that U divides C).
  int64_t ulysses = 1;
  if (config.contextParallelAlgo == "ulysses_cp")
    ulysses = cp;
  else if (config.contextParallelAlgo == "hybrid_cp")
    ulysses = config.ulyssesDegreeInCp.value_or(1);
  int64_t ringSize = cp / ulysses;
  bool ring = ringSize > 1;
  // The sequence's axes, the ring's major: ring rank r holds the r-th
  // contiguous block of S / R tokens (the block the ring's zigzag exchange
  // expects), cut over the Ulysses ranks inside it, so Ulysses' all-to-all
  // only moves tokens within a ring rank's block.
  Layout::AxisList sequenceAxes;
  if (ring)
    sequenceAxes.push_back("cp");
  if (ulysses > 1)
    sequenceAxes.push_back("sp");
  std::string mesh;
  if (dp > 1 || (tp == 1 && cp == 1))
    mesh = "dp=" + std::to_string(dp);
  // tp last: the fastest-varying axis, kept inside a node; sp next to it, as
  // Ulysses' all-to-alls move whole activations while the ring's k/v
  // transfers overlap its block computation.
  auto addAxis = [&](const std::string &name, int64_t size) {
    if (size > 1)
      mesh += (mesh.empty() ? "" : ",") + name + "=" + std::to_string(size);
  };
  addAxis("cp", ringSize);
  addAxis("sp", ulysses);
  addAxis("tp", tp);
  spec.mesh = mesh;
  spec.devices = dp * cp * tp;
  spec.dataParallelAxes =
      dp > 1 ? Layout::AxisList{"dp"} : Layout::AxisList{};
  spec.optimizerShard = dp > 1 ? config.zeroStage.value_or(0) : 0;
  spec.zeroFixed = config.zeroStage.has_value() || dp == 1;
  spec.zeroMaxStage = config.accumulationShard == false ? 1 : 3;
  spec.recompute = config.recompute;
  spec.pipelineStages = config.pipelineStages;
  spec.microBatches = config.microBatches;
  spec.precision = config.precision;
  spec.virtualStages = config.virtualStages;
  if (cp > 1) {
    // Activations split on the sequence over the context-parallel axes.
    // Attention keeps the ring's part on the query's sequence (dim 2, the
    // rule's shared sequence factor: ring attention) and takes Ulysses'
    // part on its heads beside tp, so the planner moves q, k, v and the
    // output between the two with all-to-alls over sp. With grouped-query
    // attention the kv heads take tp and the query groups sp (kv heads then
    // replicated over sp).
    spec.sequenceParallelAxes = sequenceAxes;
    OpEntry attention;
    attention.opRole = OpRole::Attention;
    if (ring)
      attention.dimSplits.push_back({0, 2, {"cp"}});
    Layout::AxisList heads;
    if (tp > 1)
      heads.push_back("tp");
    if (ulysses > 1)
      heads.push_back("sp");
    if (!heads.empty())
      attention.dimSplits.push_back({0, 1, heads});
    attention.origin =
        ring && ulysses > 1
            ? "parallel config (hybrid context parallelism: ring over the "
              "sequence, Ulysses heads)"
        : ring ? "parallel config (ring attention over the sequence)"
               : "parallel config (Ulysses attention heads)";
    spec.ops.push_back(std::move(attention));
  }
  if (tp == 1 && cp == 1)
    return;

  using Kind = ParamSplit::Kind;
  // Megatron column-parallel linears: the output features over tp. Names of
  // the builder models: GPT-2, Llama, the MindSpore encoder-decoder.
  // Row-parallel linears: the input features over tp, a partial sum out.
  // Under Ulysses every linear also keeps its input's sequence split (the
  // builder models' activations are [batch, sequence, features]).
  auto addLinear = [&](const char *name, Kind kind, const char *origin) {
    addParamEntry(spec, name, OpRole::Matmul, {kind, 0, {"tp"}}, origin);
    if (tp == 1)
      spec.ops.back().paramSplits.clear();
    if (cp > 1)
      spec.ops.back().dimSplits.push_back({0, 1, sequenceAxes});
  };
  for (const char *name :
       {"*.attn.c_attn.weight", "*.mlp.c_fc.weight", "*.q_proj.weight",
        "*.k_proj.weight", "*.v_proj.weight", "*.gate_proj.weight",
        "*.up_proj.weight", "*.dense1.weight", "*.dense2.weight",
        "*.dense3.weight", "*.mapping.weight"})
    addLinear(name, Kind::Feature, "column-parallel linear");
  for (const char *name :
       {"*.c_proj.weight", "*.o_proj.weight", "*.down_proj.weight",
        "*.projection.weight"})
    addLinear(name, Kind::Contraction, "row-parallel linear");
  if (tp == 1)
    return;
  if (!config.vocabEmbDp) {
    // Vocab-parallel embedding (masked lookup, partial sum out) and head
    // (logits split on the vocabulary; cross_entropy follows them).
    for (const char *name : {"transformer.wte.weight",
                             "model.embed_tokens.weight",
                             "*.word_embedding.embedding_table"})
      addParamEntry(spec, name, OpRole::Embedding, {Kind::Dim, 0, {"tp"}},
                    "vocab-parallel embedding");
    for (const char *name :
         {"transformer.wte.weight", "lm_head.weight", "head.weight"})
      addParamEntry(spec, name, OpRole::Matmul, {Kind::Feature, 0, {"tp"}},
                    "vocab-parallel head");
  }
  if (config.useSeqParallel) {
    // Megatron sequence parallelism: norms and the residual stream split on
    // the sequence; row-linear biases are added after the reduce-scatter.
    for (OpRole norm : {OpRole::LayerNorm, OpRole::RmsNorm}) {
      OpEntry entry;
      entry.match = "*";
      entry.opRole = norm;
      entry.dimSplits.push_back({0, 1, {"tp"}});
      entry.origin = "parallel config (sequence-parallel norm)";
      spec.ops.push_back(std::move(entry));
    }
    for (const char *name : {"*.c_proj.bias", "*.projection.bias"}) {
      OpEntry entry;
      entry.match = name;
      entry.opRole = OpRole::Add;
      entry.dimSplits.push_back({0, 1, {"tp"}});
      entry.origin = "parallel config (sequence-parallel row-linear bias)";
      spec.ops.push_back(std::move(entry));
    }
  }
}

} // namespace mlir::loom::dist

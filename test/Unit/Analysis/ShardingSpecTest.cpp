//===- ShardingSpecTest.cpp - Strategy files and parallel configs ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The JSON inputs of layout assignment: strategy files (ops, args, mesh,
// data-parallel axes, and the errors that name a JSON path), MindSpore
// parallel configs (known keys, not-yet-implemented features rejected,
// unknown keys rejected) and their expansion into op entries, and the
// `--mesh` syntax.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Strategy/ShardingSpec.h"

#include "gtest/gtest.h"

using namespace mlir::loom::dist;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(ShardingSpecTest, ParsesStrategyFile) {
  ShardingSpec spec;
  std::string error = parseStrategyFile(R"({
    "mesh": "dp=2,tp=2", "data_parallel_axes": ["dp"],
    "ops": [{"match": "h.*.c_fc.weight", "op": "loom.matmul",
             "in": [[["dp"], [], []], null]}],
    "args": {"wte": [["tp"], []]}})",
                                        spec);
  ASSERT_EQ(error, "");
  EXPECT_EQ(spec.mesh, "dp=2,tp=2");
  ASSERT_TRUE(spec.dataParallelAxes.has_value());
  EXPECT_EQ(*spec.dataParallelAxes, Layout::AxisList{"dp"});
  ASSERT_EQ(spec.ops.size(), 1u);
  const OpEntry &entry = spec.ops[0];
  EXPECT_EQ(entry.match, "h.*.c_fc.weight");
  EXPECT_EQ(entry.opKind, "loom.matmul");
  EXPECT_EQ(entry.origin, "ops[0]");
  ASSERT_TRUE(entry.in.has_value());
  ASSERT_EQ(entry.in->size(), 2u);
  ASSERT_TRUE((*entry.in)[0].has_value());
  EXPECT_EQ(*(*entry.in)[0],
            (std::vector<Layout::AxisList>{{"dp"}, {}, {}}));
  EXPECT_FALSE((*entry.in)[1].has_value());
  EXPECT_EQ(spec.args.at("wte"),
            (std::vector<Layout::AxisList>{{"tp"}, {}}));
}

TEST(ShardingSpecTest, StrategyFileErrorsNameTheJSONPath) {
  ShardingSpec spec;
  EXPECT_TRUE(contains(parseStrategyFile("{", spec),
                       "strategy file: line 1, column 1: invalid JSON: "));
  EXPECT_TRUE(contains(
      parseStrategyFile(R"({"ops": [{"match": "w", "match": "v"}]})", spec),
      "strategy file: line 1, column 25: `ops[0].match`: duplicate key "
      "`match`, already given at line 1, column 11"));
  EXPECT_TRUE(contains(parseStrategyFile(R"({"opz": []})", spec),
                       "unknown key `opz`"));
  EXPECT_TRUE(contains(
      parseStrategyFile(R"({"ops": [{"match": "w", "in": [[["dp"], [3]]]}]})",
                        spec),
      "strategy file: ops[0].in[0][1][0]: expected a mesh axis name, got 3"));
  EXPECT_TRUE(contains(parseStrategyFile(R"({"ops": [{"in": []}]})", spec),
                       "ops[0].match"));
  EXPECT_TRUE(contains(parseStrategyFile(R"({"args": {"w": "dp"}})", spec),
                       "strategy file: args.w: expected one list"));
}

TEST(ShardingSpecTest, ParsesParallelConfig) {
  auto config = parseParallelConfig(
      R"({"data_parallel": 2, "model_parallel": 4, "vocab_emb_dp": false,
          "use_seq_parallel": true, "optimizer_shard": 3,
          "pipeline_stage": 1, "micro_batch_num": 1, "recompute": false,
          "gradient_aggregation_group": 1, "context_parallel": 1})");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->dataParallel, 2);
  EXPECT_EQ(config->modelParallel, 4);
  EXPECT_FALSE(config->vocabEmbDp);
  EXPECT_TRUE(config->useSeqParallel);
  EXPECT_EQ(config->zeroStage, 3);
  EXPECT_FALSE(config->recompute);
  auto zero1 = parseParallelConfig(R"({"optimizer_shard": true})");
  ASSERT_TRUE(zero1.ok());
  EXPECT_EQ(zero1->zeroStage, 1);
}

TEST(ShardingSpecTest, ZeroStageKeys) {
  auto stage = [](const char *text) -> std::optional<int> {
    auto config = parseParallelConfig(text);
    EXPECT_TRUE(config.ok()) << text << ": " << config.error();
    return config.ok() ? config->zeroStage : std::nullopt;
  };
  EXPECT_EQ(stage(R"({"data_parallel": 2})"), std::nullopt);
  EXPECT_EQ(stage(R"({"data_parallel": 2, "zero_stage": 2})"), 2);
  EXPECT_EQ(stage(R"({"data_parallel": 2, "zero_stage": 0})"), 0);
  EXPECT_EQ(stage(R"({"data_parallel": 2, "optimizer_shard": false})"), 0);
  // MindSpore's gradient_accumulation_shard raises the parallel
  // optimizer's stage 1 to 2, and implies the optimizer shard.
  EXPECT_EQ(stage(R"({"data_parallel": 2, "optimizer_shard": true,
                      "gradient_accumulation_shard": true})"),
            2);
  EXPECT_EQ(stage(R"({"data_parallel": 2,
                      "gradient_accumulation_shard": true})"),
            2);
  EXPECT_EQ(stage(R"({"data_parallel": 2, "zero_stage": 3,
                      "gradient_accumulation_shard": true})"),
            3);
  EXPECT_EQ(stage(R"({"data_parallel": 2, "optimizer_shard": true,
                      "gradient_accumulation_shard": false})"),
            1);
  // Without a data-parallel axis the MindSpore keys change nothing.
  EXPECT_EQ(stage(R"({"optimizer_shard": true,
                      "gradient_accumulation_shard": true})"),
            2);
  ParallelConfig none = *parseParallelConfig(
      R"({"optimizer_shard": true, "gradient_accumulation_shard": true})");
  ShardingSpec spec;
  expandParallelConfig(none, spec);
  EXPECT_EQ(spec.optimizerShard, 0);
  EXPECT_TRUE(spec.zeroFixed);
}

TEST(ShardingSpecTest, ZeroStageErrors) {
  auto error = [](const char *text) {
    auto config = parseParallelConfig(text);
    EXPECT_FALSE(config.ok()) << text;
    return config.ok() ? std::string() : config.error();
  };
  EXPECT_EQ(error(R"({"data_parallel": 2, "zero_stage": 4})"),
            "parallel config: zero_stage: expected 0, 1, 2 or 3, got 4");
  EXPECT_EQ(error(R"({"data_parallel": 2, "zero_stage": "2"})"),
            "parallel config: zero_stage: expected 0, 1, 2 or 3, got \"2\"");
  EXPECT_EQ(error(R"({"zero_stage": 2})"),
            "parallel config: zero_stage = 2 needs data_parallel > 1 (ZeRO "
            "shards over the data-parallel axis), got data_parallel = 1");
  EXPECT_EQ(error(R"({"data_parallel": 2, "optimizer_shard": false,
                      "zero_stage": 2})"),
            "parallel config: optimizer_shard = 0 disagrees with zero_stage "
            "= 2 (stage 0 has no optimizer shard, stages 1-3 have one)");
  EXPECT_EQ(error(R"({"data_parallel": 2, "zero_stage": 1,
                      "gradient_accumulation_shard": true})"),
            "parallel config: gradient_accumulation_shard = true needs "
            "zero_stage 2 or 3 (the accumulated gradients sharded), got "
            "zero_stage = 1");
  EXPECT_EQ(error(R"({"data_parallel": 2, "zero_stage": 2,
                      "gradient_accumulation_shard": false})"),
            "parallel config: gradient_accumulation_shard = false with ZeRO "
            "stage 2, which shards the accumulated gradients");
  EXPECT_EQ(error(R"({"data_parallel": 2,
                      "gradient_accumulation_shard": 1})"),
            "parallel config: gradient_accumulation_shard: expected true or "
            "false, got 1");
}

TEST(ShardingSpecTest, RecomputeReachesTheSpec) {
  auto config = parseParallelConfig(R"({"data_parallel": 2, "recompute": true})");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_TRUE(config->recompute);
  ShardingSpec spec;
  expandParallelConfig(*config, spec);
  EXPECT_TRUE(spec.recompute);
  ShardingSpec off;
  expandParallelConfig(ParallelConfig(), off);
  EXPECT_FALSE(off.recompute);
}

TEST(ShardingSpecTest, ReadsThePipelineKeys) {
  auto config =
      parseParallelConfig(R"({"pipeline_stage": 4, "micro_batch_num": 8})");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->pipelineStages, 4);
  EXPECT_EQ(config->microBatches, 8);
  ShardingSpec spec;
  expandParallelConfig(*config, spec);
  EXPECT_EQ(spec.pipelineStages, 4);
  EXPECT_EQ(spec.microBatches, 8);
}

TEST(ShardingSpecTest, ReadsThePrecisionKey) {
  auto config = parseParallelConfig(R"({"precision": "bf16-mixed"})");
  ASSERT_TRUE(config.ok()) << config.error();
  EXPECT_EQ(config->precision, "bf16-mixed");
  ShardingSpec spec;
  expandParallelConfig(*config, spec);
  EXPECT_EQ(spec.precision, "bf16-mixed");
  // Not given: empty, so that `--precision` alone decides.
  ShardingSpec unset;
  expandParallelConfig(ParallelConfig(), unset);
  EXPECT_EQ(unset.precision, "");
}

TEST(ShardingSpecTest, ReadsTheInterleaveKeys) {
  // MindFormers' interleaved pipeline: pp_interleave_num chunks per stage,
  // with or without pipeline_interleave.
  for (
      const char *text :
      {R"({"pipeline_stage": 4, "micro_batch_num": 8, "pp_interleave_num": 2})",
       R"({"pipeline_stage": 4, "micro_batch_num": 8,
            "pipeline_interleave": true, "pp_interleave_num": 2})"}) {
    auto config = parseParallelConfig(text);
    ASSERT_TRUE(config.ok()) << config.error();
    EXPECT_EQ(config->virtualStages, 2);
    ShardingSpec spec;
    expandParallelConfig(*config, spec);
    EXPECT_EQ(spec.virtualStages, 2);
  }
  auto off = parseParallelConfig(R"({"pipeline_interleave": false})");
  ASSERT_TRUE(off.ok()) << off.error();
  EXPECT_EQ(off->virtualStages, 1);
  auto lonely = parseParallelConfig(R"({"pipeline_interleave": true})");
  ASSERT_FALSE(lonely.ok());
  EXPECT_TRUE(contains(lonely.error(),
                       "pipeline_interleave = true needs "
                       "pp_interleave_num >= 2 (chunks per stage), got 1"));
  auto contradicting = parseParallelConfig(
      R"({"pipeline_interleave": false, "pp_interleave_num": 2})");
  ASSERT_FALSE(contradicting.ok());
  EXPECT_TRUE(contains(contradicting.error(),
                       "pp_interleave_num = 2 with pipeline_interleave = "
                       "false"));
  auto notBool = parseParallelConfig(R"({"pipeline_interleave": 1})");
  ASSERT_FALSE(notBool.ok());
  EXPECT_TRUE(
      contains(notBool.error(), "pipeline_interleave: expected true or false"));
  auto zero = parseParallelConfig(R"({"pp_interleave_num": 0})");
  ASSERT_FALSE(zero.ok());
  EXPECT_TRUE(contains(zero.error(), "pp_interleave_num"));
}

TEST(ShardingSpecTest, ReadsLayerStages) {
  ShardingSpec spec;
  EXPECT_EQ(parseStrategyFile(R"({"layer_stages": [0, 0, 1, 2, 2]})", spec),
            "");
  EXPECT_EQ(spec.layerStages, (std::vector<int64_t>{0, 0, 1, 2, 2}));
  EXPECT_EQ(spec.pipelineStages, 3);
  ShardingSpec skipping;
  EXPECT_TRUE(contains(
      parseStrategyFile(R"({"layer_stages": [0, 2]})", skipping),
      "layer_stages[1]: expected stage 0 or 1"));
  ShardingSpec late;
  EXPECT_TRUE(contains(parseStrategyFile(R"({"layer_stages": [1]})", late),
                       "layer_stages[0]"));
}

TEST(ShardingSpecTest, RejectsUnimplementedAndUnknownKeys) {
  auto check = [](const std::string &text, const std::string &message) {
    auto config = parseParallelConfig(text);
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_TRUE(contains(config.error(), message)) << config.error();
  };
  check(R"({"pipeline_stage": 0})",
        "pipeline_stage: expected an integer >= 1, got 0");
  check(R"({"micro_batch_num": true})",
        "micro_batch_num: expected an integer >= 1");
  check(R"({"recompute": 1})", "recompute: expected true or false");
  // An unknown algorithm is named; hybrid_cp needs its Ulysses degree, one
  // that divides context_parallel, and a context_parallel to split.
  check(R"({"context_parallel": 2, "context_parallel_algo": "ring"})",
        "context_parallel_algo `ring`: expected `colossalai_cp`");
  check(R"({"context_parallel": 4, "context_parallel_algo": "hybrid_cp"})",
        "context_parallel_algo `hybrid_cp` needs ulysses_degree_in_cp (the "
        "Ulysses part of context_parallel = 4)");
  check(R"({"context_parallel": 6, "context_parallel_algo": "hybrid_cp",
            "ulysses_degree_in_cp": 4})",
        "ulysses_degree_in_cp = 4 does not divide context_parallel = 6");
  check(R"({"context_parallel_algo": "hybrid_cp", "ulysses_degree_in_cp": 2})",
        "context_parallel_algo `hybrid_cp` needs context_parallel > 1");
  check(R"({"context_parallel": 4, "ulysses_degree_in_cp": 2})",
        "ulysses_degree_in_cp = 2 needs context_parallel_algo `hybrid_cp`, "
        "got `colossalai_cp`");
  check(R"({"context_parallel": 4, "context_parallel_algo": "hybrid_cp",
            "ulysses_degree_in_cp": 0})",
        "ulysses_degree_in_cp: expected an integer >= 1, got 0");
  check(R"({"use_attn_mask_compression": "yes"})",
        "use_attn_mask_compression: expected true or false");
  check(R"({"context_parallel": 2, "context_parallel_algo": "ulysses_cp",
            "use_seq_parallel": true})",
        "use_seq_parallel with context_parallel > 1 is not supported");
  check(R"({"context_parallel_algo": 1})",
        "context_parallel_algo: expected a string");
  check(R"({"gradient_aggregation_group": 4})", "fusion groups");
  check(R"({"optimizer_shard": 2})", "expected true, false, 0, 1");
  check(R"({"data_parallel": 0})", "data_parallel: expected an integer >= 1");
  check(R"({"expert_parallel": 2})", "unknown key `expert_parallel`");
  check(R"({"precision": "bf8"})",
        "precision: expected \"f32\", \"bf16-mixed\" or \"fp16-mixed\", "
        "got \"bf8\"");
  check(R"({"precision": 16})", "precision: expected \"f32\"");
  check("[1]", "expected an object");
}

TEST(ShardingSpecTest, ExpandsMegatronTensorParallel) {
  ParallelConfig config;
  config.dataParallel = 2;
  config.modelParallel = 4;
  ShardingSpec spec;
  expandParallelConfig(config, spec);
  EXPECT_EQ(spec.mesh, "dp=2,tp=4");
  EXPECT_EQ(spec.devices, 8);
  EXPECT_EQ(*spec.dataParallelAxes, Layout::AxisList{"dp"});
  bool column = false, row = false, vocab = false, sequence = false;
  for (const OpEntry &entry : spec.ops) {
    ASSERT_FALSE(entry.in.has_value());
    if (entry.match == "*.mlp.c_fc.weight") {
      column = entry.paramSplits.size() == 1 &&
               entry.paramSplits[0].kind == ParamSplit::Kind::Feature &&
               entry.paramSplits[0].axes == Layout::AxisList{"tp"};
    }
    if (entry.match == "*.down_proj.weight")
      row = entry.paramSplits[0].kind == ParamSplit::Kind::Contraction;
    vocab |= entry.opRole == OpRole::Embedding;
    sequence |= entry.opRole == OpRole::LayerNorm;
  }
  EXPECT_TRUE(column);
  EXPECT_TRUE(row);
  EXPECT_FALSE(vocab) << "vocab_emb_dp defaults to true";
  EXPECT_FALSE(sequence);
}

TEST(ShardingSpecTest, ExpandsRingContextParallel) {
  // MindFormers' default algorithm: ring attention over an axis cp.
  auto config = parseParallelConfig(
      R"({"data_parallel": 2, "model_parallel": 2, "context_parallel": 4})");
  ASSERT_TRUE(config.ok()) << config.error();
  ShardingSpec spec;
  expandParallelConfig(*config, spec);
  EXPECT_EQ(spec.mesh, "dp=2,cp=4,tp=2");
  EXPECT_EQ(spec.devices, 16);
  EXPECT_EQ(spec.sequenceParallelAxes, Layout::AxisList{"cp"});
  bool attention = false, linearSequence = false;
  for (const OpEntry &entry : spec.ops) {
    if (entry.opRole == OpRole::Attention) {
      // The query's sequence (dim 2) over cp, its heads over tp.
      attention = entry.dimSplits.size() == 2 && entry.dimSplits[0].dim == 2 &&
                  entry.dimSplits[0].axes == Layout::AxisList{"cp"} &&
                  entry.dimSplits[1].dim == 1 &&
                  entry.dimSplits[1].axes == Layout::AxisList{"tp"};
    }
    if (entry.match == "*.o_proj.weight")
      linearSequence = entry.dimSplits.size() == 1 &&
                       entry.dimSplits[0].axes == Layout::AxisList{"cp"};
  }
  EXPECT_TRUE(attention);
  EXPECT_TRUE(linearSequence);
}

TEST(ShardingSpecTest, ExpandsUlyssesContextParallel) {
  auto config = parseParallelConfig(
      R"({"data_parallel": 2, "model_parallel": 2, "context_parallel": 2,
          "context_parallel_algo": "ulysses_cp"})");
  ASSERT_TRUE(config.ok()) << config.error();
  ShardingSpec spec;
  expandParallelConfig(*config, spec);
  EXPECT_EQ(spec.mesh, "dp=2,sp=2,tp=2");
  EXPECT_EQ(spec.devices, 8);
  EXPECT_EQ(spec.sequenceParallelAxes, Layout::AxisList{"sp"});
  bool attention = false, linearSequence = false;
  for (const OpEntry &entry : spec.ops) {
    if (entry.opRole == OpRole::Attention) {
      // Selected by kind (attention consumes no parameter); heads over
      // (tp, sp).
      attention = entry.match.empty() && entry.dimSplits.size() == 1 &&
                  entry.dimSplits[0].dim == 1 &&
                  entry.dimSplits[0].axes == Layout::AxisList{"tp", "sp"};
    }
    if (entry.match == "*.o_proj.weight")
      linearSequence = entry.dimSplits.size() == 1 &&
                       entry.dimSplits[0].operand == 0 &&
                       entry.dimSplits[0].dim == 1 &&
                       entry.dimSplits[0].axes == Layout::AxisList{"sp"};
  }
  EXPECT_TRUE(attention);
  EXPECT_TRUE(linearSequence);
}

TEST(ShardingSpecTest, ExpandsHybridContextParallel) {
  // C = 8 as Ulysses over U = 2 inside a ring of 4 (MindFormers' docs spell
  // the algorithm `hybird_cp`; both spellings read the same).
  for (const char *algo : {"hybrid_cp", "hybird_cp"}) {
    auto config = parseParallelConfig(
        std::string(R"({"data_parallel": 2, "model_parallel": 2,
                        "context_parallel": 8, "ulysses_degree_in_cp": 2,
                        "use_attn_mask_compression": true,
                        "context_parallel_algo": ")") +
        algo + "\"}");
    ASSERT_TRUE(config.ok()) << config.error();
    ShardingSpec spec;
    expandParallelConfig(*config, spec);
    EXPECT_EQ(spec.mesh, "dp=2,cp=4,sp=2,tp=2");
    EXPECT_EQ(spec.devices, 32);
    // The ring's axis major, so each ring rank's block is contiguous.
    EXPECT_EQ(spec.sequenceParallelAxes, (Layout::AxisList{"cp", "sp"}));
    bool attention = false, linearSequence = false;
    for (const OpEntry &entry : spec.ops) {
      if (entry.opRole == OpRole::Attention)
        attention = entry.dimSplits.size() == 2 &&
                    entry.dimSplits[0].dim == 2 &&
                    entry.dimSplits[0].axes == Layout::AxisList{"cp"} &&
                    entry.dimSplits[1].dim == 1 &&
                    entry.dimSplits[1].axes == Layout::AxisList{"tp", "sp"};
      if (entry.match == "*.o_proj.weight")
        linearSequence =
            entry.dimSplits.size() == 1 &&
            entry.dimSplits[0].axes == Layout::AxisList{"cp", "sp"};
    }
    EXPECT_TRUE(attention) << algo;
    EXPECT_TRUE(linearSequence) << algo;
  }
  // U = C leaves no ring (Ulysses alone), U = 1 no Ulysses (the ring alone).
  for (auto [ulysses, mesh] : {std::pair<int, const char *>{4, "sp=4"},
                               std::pair<int, const char *>{1, "cp=4"}}) {
    auto config = parseParallelConfig(
        R"({"context_parallel": 4, "context_parallel_algo": "hybrid_cp",
            "ulysses_degree_in_cp": )" +
        std::to_string(ulysses) + "}");
    ASSERT_TRUE(config.ok()) << config.error();
    ShardingSpec spec;
    expandParallelConfig(*config, spec);
    EXPECT_EQ(spec.mesh, mesh);
  }
}

TEST(ShardingSpecTest, StrategyFileSelectsOpsByKindAlone) {
  ShardingSpec spec;
  ASSERT_EQ(parseStrategyFile(
                R"({"sequence_parallel_axes": ["sp"],
                    "ops": [{"op": "loom.attention",
                             "in": [[[], ["tp", "sp"], [], []], null, null]}]})",
                spec),
            "");
  EXPECT_EQ(spec.sequenceParallelAxes, Layout::AxisList{"sp"});
  ASSERT_EQ(spec.ops.size(), 1u);
  EXPECT_TRUE(spec.ops[0].match.empty());
  EXPECT_EQ(spec.ops[0].opKind, "loom.attention");
}

TEST(ShardingSpecTest, ExpandsVocabAndSequenceParallel) {
  ParallelConfig config;
  config.modelParallel = 2;
  config.vocabEmbDp = false;
  config.useSeqParallel = true;
  ShardingSpec spec;
  expandParallelConfig(config, spec);
  EXPECT_EQ(spec.mesh, "tp=2");
  EXPECT_TRUE(spec.dataParallelAxes->empty());
  int embeddings = 0, norms = 0;
  for (const OpEntry &entry : spec.ops) {
    if (entry.opRole == OpRole::Embedding) {
      ++embeddings;
      EXPECT_EQ(entry.paramSplits[0].kind, ParamSplit::Kind::Dim);
      EXPECT_EQ(entry.paramSplits[0].dim, 0);
    }
    if (entry.opRole == OpRole::LayerNorm ||
        entry.opRole == OpRole::RmsNorm) {
      ++norms;
      ASSERT_EQ(entry.dimSplits.size(), 1u);
      EXPECT_EQ(entry.dimSplits[0].dim, 1);
    }
  }
  EXPECT_EQ(embeddings, 3);
  EXPECT_EQ(norms, 2);
}

TEST(ShardingSpecTest, ExpandsDataParallelAndOptimizerShard) {
  ParallelConfig config;
  config.dataParallel = 4;
  config.zeroStage = 1;
  ShardingSpec spec;
  expandParallelConfig(config, spec);
  EXPECT_EQ(spec.mesh, "dp=4");
  EXPECT_EQ(spec.optimizerShard, 1);
  EXPECT_TRUE(spec.zeroFixed);
  EXPECT_TRUE(spec.ops.empty());
}

} // namespace

//===- CheckpointTest.cpp - Per-rank checkpoints --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A simulated set of 4 ranks (mesh dp=2 x tp=2) writes its blocks of a
// model state with tensor-parallel, ZeRO-style, multi-axis and replicated
// layouts; reading the checkpoint back and assembling it gives the global
// tensors bit for bit. Each kind of damage (flipped byte, truncated file,
// missing file, bad manifest, disagreeing replicas) gives its own message
// naming the file.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/Checkpoint.h"
#include "loom/Runtime/IO/SafeTensors.h"

#include "gtest/gtest.h"

#include <filesystem>
#include <unistd.h>

using namespace loom::runtime::io;
using loom::runtime::layout::DeviceMesh;
namespace fs = std::filesystem;

namespace {

/// A fresh directory per test.
std::string freshDir(const std::string &name) {
  std::string dir = testing::TempDir() + "loom-ckpt-" +
                    std::to_string(::getpid()) + "-" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TensorData ramp(DType dtype, std::vector<int64_t> shape, double scale) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  std::vector<double> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(scale * static_cast<double>(i * 37 % 101) - 3.25 * i);
  return TensorData::fromDoubles(dtype, std::move(shape), values);
}

/// A model state on dp=2 x tp=2 and its global values.
struct Sample {
  CheckpointManifest manifest;
  TensorMap global;
};

Sample makeSample() {
  Sample sample;
  CheckpointManifest &m = sample.manifest;
  EXPECT_TRUE(DeviceMesh::parse("dp=2,tp=2", m.mesh).ok());
  m.step = 40;
  m.plan = "gpt2-tiny dp2 tp2";
  m.dataFile = "tokens.bin";
  m.dataSeed = 9;
  m.dataPosition = 40;
  m.rngSeed = 1234;
  m.rngState = {1, 18446744073709551615ull};
  m.metadata["optimizer"] = "adamw";
  auto add = [&](const std::string &name, TensorData value,
                 const std::string &layout) {
    m.tensors[name] = {value.shape, value.dtype, layout, /*stage=*/-1,
                       /*fileShape=*/{}};
    sample.global[name] = std::move(value);
  };
  add("wte", ramp(DType::F32, {8, 4}, 0.5), "[[\"tp\"], []]");
  add("h.0.mlp.w", ramp(DType::F32, {4, 8}, -1.5), "[[], [\"tp\"]]");
  add("h.0.mlp.b", ramp(DType::BF16, {8}, 2), "[[\"tp\"]]");
  add("adam.m.wte", ramp(DType::F32, {8, 4}, 0.25), "[[\"dp\", \"tp\"], []]");
  add("adam.v.h.0.mlp.w", ramp(DType::F64, {4, 8}, 1e-3),
      "[[\"dp\"], [\"tp\"]]");
  add("ln.w", ramp(DType::F16, {6}, 1), "[[]]");
  add("adam.step", TensorData::fromInt64s(DType::I64, {}, {40}), "[]");
  return sample;
}

/// Writes the sample as 4 ranks would, each its own file, then the manifest.
std::string writeSample(const std::string &name, Sample &sample) {
  std::string dir = freshDir(name);
  std::vector<TensorMap> perRank;
  Status status = splitGlobalTensors(sample.manifest, sample.global, perRank);
  EXPECT_TRUE(status.ok()) << status.message();
  sample.manifest.files.resize(perRank.size());
  for (int64_t rank = 0; rank < 4; ++rank) {
    status = writeCheckpointShard(dir, rank, sample.manifest.step,
                                  perRank[rank], sample.manifest.files[rank]);
    EXPECT_TRUE(status.ok()) << status.message();
  }
  status = writeCheckpointManifest(dir, sample.manifest);
  EXPECT_TRUE(status.ok()) << status.message();
  return dir;
}

std::string slurp(const std::string &path) {
  std::string bytes;
  EXPECT_FALSE(readWholeFile(path, bytes).has_value());
  return bytes;
}

void overwrite(const std::string &path, const std::string &bytes) {
  ASSERT_FALSE(writeFileAtomically(path, bytes).has_value());
}

TEST(Crc32c, MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
  // Continuing a CRC equals computing it in one go.
  EXPECT_EQ(crc32c("6789", 4, crc32c("12345", 5)), 0xe3069283u);
}

TEST(Checkpoint, FourRanksRoundTripToTheGlobalTensorsExactly) {
  Sample sample = makeSample();
  std::string dir = writeSample("roundtrip", sample);
  for (int64_t rank = 0; rank < 4; ++rank)
    EXPECT_TRUE(fs::exists(dir + "/" + checkpointFileName(rank)));

  CheckpointManifest manifest;
  TensorMap global;
  Status status = readGlobalCheckpoint(dir, manifest, global);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(global.size(), sample.global.size());
  for (const auto &[name, value] : sample.global) {
    EXPECT_EQ(global[name].dtype, value.dtype) << name;
    EXPECT_EQ(global[name].shape, value.shape) << name;
    EXPECT_EQ(global[name].bytes, value.bytes) << name;
  }
  EXPECT_EQ(manifest.step, 40);
  EXPECT_EQ(manifest.mesh.toString(), "{dp:2, tp:2}");
  EXPECT_EQ(manifest.plan, "gpt2-tiny dp2 tp2");
  EXPECT_EQ(manifest.dataFile, "tokens.bin");
  EXPECT_EQ(manifest.dataSeed, 9u);
  EXPECT_EQ(manifest.dataPosition, 40);
  EXPECT_EQ(manifest.rngSeed, 1234u);
  EXPECT_EQ(manifest.rngState, sample.manifest.rngState);
  EXPECT_EQ(manifest.metadata, sample.manifest.metadata);
  EXPECT_EQ(manifest.tensors.at("adam.m.wte").layout, "[[\"dp\", \"tp\"], []]");

  // Rank 2 = (dp 1, tp 0): rows 4..5 of the ZeRO moment ([dp, tp] on rows),
  // rows 0..3 of the vocab-parallel embedding.
  TensorMap blocks;
  ASSERT_TRUE(readCheckpointShard(dir, manifest, 2, blocks).ok());
  const TensorData &moment = blocks.at("adam.m.wte");
  ASSERT_EQ(moment.shape, (std::vector<int64_t>{2, 4}));
  std::vector<double> all = sample.global.at("adam.m.wte").toDoubles();
  std::vector<double> mine = moment.toDoubles();
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(mine[i], all[4 * 4 + i]);
  EXPECT_EQ(blocks.at("wte").shape, (std::vector<int64_t>{4, 4}));
}

TEST(Checkpoint, MergedFileIsAPlainSafetensorsFile) {
  Sample sample = makeSample();
  std::string dir = writeSample("merged", sample);
  CheckpointManifest manifest;
  TensorMap global;
  ASSERT_TRUE(readGlobalCheckpoint(dir, manifest, global).ok());
  std::string merged = dir + "/merged.safetensors";
  ASSERT_FALSE(writeSafeTensors(merged, global).has_value());
  TensorMap back;
  ASSERT_FALSE(readSafeTensors(merged, back).has_value());
  EXPECT_EQ(back.at("h.0.mlp.w").bytes, sample.global.at("h.0.mlp.w").bytes);
}

TEST(Checkpoint, FileShapesSurviveTheManifestAndShapeTheMergedFile) {
  // GPT-2's fused c_attn: the program holds [3, 4, 4] split over tp on dim
  // 1 (the heads of q, k and v), nanoGPT's files hold [12, 4].
  Sample sample = makeSample();
  TensorData qkv = ramp(DType::F32, {3, 4, 4}, 0.75);
  sample.manifest.tensors["h.0.attn.c_attn.weight"] = {
      qkv.shape, qkv.dtype, "[[], [\"tp\"], []]", -1, {12, 4}};
  sample.global["h.0.attn.c_attn.weight"] = qkv;
  std::string dir = writeSample("file-shape", sample);
  CheckpointManifest manifest;
  TensorMap global;
  ASSERT_TRUE(readGlobalCheckpoint(dir, manifest, global).ok());
  const CheckpointTensor &tensor = manifest.tensors.at("h.0.attn.c_attn.weight");
  EXPECT_EQ(tensor.shape, (std::vector<int64_t>{3, 4, 4}));
  EXPECT_EQ(tensor.fileShape, (std::vector<int64_t>{12, 4}));
  EXPECT_TRUE(manifest.tensors.at("wte").fileShape.empty());

  // Rank 1 = (dp 0, tp 1) holds rows 2..3 of each of q, k and v: rows 2-3,
  // 6-7 and 10-11 of the [12, 4] file, and nothing else.
  TensorMap blocks;
  ASSERT_TRUE(readCheckpointShard(dir, manifest, 1, blocks).ok());
  const TensorData &block = blocks.at("h.0.attn.c_attn.weight");
  ASSERT_EQ(block.shape, (std::vector<int64_t>{3, 2, 4}));
  std::vector<double> all = qkv.toDoubles(), mine = block.toDoubles();
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 4; ++c)
        EXPECT_EQ(mine[(j * 2 + r) * 4 + c], all[(j * 4 + 2 + r) * 4 + c]);

  applyFileShapes(manifest, global);
  EXPECT_EQ(global.at("h.0.attn.c_attn.weight").shape,
            (std::vector<int64_t>{12, 4}));
  EXPECT_EQ(global.at("h.0.attn.c_attn.weight").bytes, qkv.bytes);
  EXPECT_EQ(global.at("wte").shape, (std::vector<int64_t>{8, 4}));

  // A file shape of another element count is refused by name.
  std::string path = dir + "/manifest.json";
  std::string text = slurp(path);
  size_t at = text.find("\"file_shape\": [\n        12,");
  ASSERT_NE(at, std::string::npos) << text;
  overwrite(path, text.substr(0, at) + "\"file_shape\": [\n        13," +
                      text.substr(at + 27));
  EXPECT_EQ(readCheckpointManifest(dir, manifest).message(),
            "checkpoint manifest `" + path +
                "`: tensor `h.0.attn.c_attn.weight`: `file_shape` [13, 4] "
                "does not hold as many elements as `shape` [3, 4, 4]");
}

TEST(Checkpoint, FlippedByteIsAChecksumMismatch) {
  Sample sample = makeSample();
  std::string dir = writeSample("flipped", sample);
  std::string path = dir + "/rank-00001.safetensors";
  std::string bytes = slurp(path);
  bytes[bytes.size() - 5] ^= 0x10;
  overwrite(path, bytes);
  CheckpointManifest manifest;
  TensorMap global;
  Status status = readGlobalCheckpoint(dir, manifest, global);
  char expected[9];
  std::snprintf(expected, sizeof(expected), "%08x",
                crc32c(bytes.data(), bytes.size()));
  char recorded[9];
  std::snprintf(recorded, sizeof(recorded), "%08x",
                sample.manifest.files[1].crc32c);
  EXPECT_EQ(status.message(), "checkpoint file `" + path +
                                  "` (rank 1): checksum mismatch: crc32c " +
                                  expected + ", the manifest says " + recorded +
                                  " (the file is corrupted)");
}

TEST(Checkpoint, TruncatedFileIsReported) {
  Sample sample = makeSample();
  std::string dir = writeSample("truncated", sample);
  std::string path = dir + "/rank-00003.safetensors";
  std::string bytes = slurp(path);
  overwrite(path, bytes.substr(0, 100));
  CheckpointManifest manifest;
  TensorMap global;
  EXPECT_EQ(readGlobalCheckpoint(dir, manifest, global).message(),
            "checkpoint file `" + path +
                "` (rank 3): truncated: 100 bytes, the manifest says " +
                std::to_string(bytes.size()));
}

TEST(Checkpoint, MissingFileIsReported) {
  Sample sample = makeSample();
  std::string dir = writeSample("missing", sample);
  fs::remove(dir + "/rank-00002.safetensors");
  CheckpointManifest manifest;
  TensorMap global;
  EXPECT_EQ(readGlobalCheckpoint(dir, manifest, global).message(),
            "checkpoint file `" + dir +
                "/rank-00002.safetensors` (rank 2): missing");
  fs::remove(dir + "/manifest.json");
  Status status = readCheckpointManifest(dir, manifest);
  EXPECT_EQ(status.message().rfind(
                "checkpoint `" + dir + "` has no readable manifest.json: ", 0),
            0u)
      << status.message();
}

TEST(Checkpoint, BadManifestsAreReported) {
  Sample sample = makeSample();
  std::string dir = writeSample("manifest", sample);
  std::string path = dir + "/manifest.json";
  std::string text = slurp(path);
  CheckpointManifest manifest;
  auto expectError = [&](const std::string &edited,
                         const std::string &message) {
    overwrite(path, edited);
    EXPECT_EQ(readCheckpointManifest(dir, manifest).message(),
              "checkpoint manifest `" + path + "`: " + message);
  };
  auto replace = [&](const std::string &from, const std::string &to) {
    std::string edited = text;
    size_t at = edited.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return edited.replace(at, from.size(), to);
  };
  // A manifest cut short: the position and JSON path of the end.
  overwrite(path, text.substr(0, text.size() / 2));
  std::string truncated = readCheckpointManifest(dir, manifest).message();
  EXPECT_EQ(truncated.rfind("checkpoint manifest `" + path + "`: line ", 0), 0u)
      << truncated;
  EXPECT_NE(truncated.find(": invalid JSON: syntax error"), std::string::npos)
      << truncated;
  // A key given twice (the last would win without a word).
  expectError(replace("\"step\": 40", "\"step\": 40, \"step\": 41"),
              "line 4, column 15: `step`: duplicate key `step`, already "
              "given at line 4, column 3 (each key may appear once in an "
              "object)");
  expectError(replace("\"step\": 40", "\"stop\": 40"), "missing field `step`");
  expectError(replace("\"step\": 40", "\"step\": \"40\""),
              "field `step` must be an integer");
  expectError(replace("\"format\": \"loom-checkpoint\"", "\"format\": \"x\""),
              "field `format` is `x`, expected `loom-checkpoint`");
  expectError(replace("\"[[\\\"tp\\\"]]\"",
                      "\"[[\\\"tp\\\"]], partial = [\\\"dp\\\"]\""),
              "tensor `h.0.mlp.b`: partial layout [[\"tp\"]], partial = "
              "[\"dp\"]: a checkpoint holds values, not pending sums "
              "(reduce first)");
  expectError(replace("\"[[\\\"tp\\\"]]\"", "\"[[\\\"pp\\\"]]\""),
              "tensor `h.0.mlp.b`: layout names `pp`, which is not an "
              "axis of mesh {dp:2, tp:2}");
  expectError(replace("\"crc32c\": \"", "\"crc32c\": \"zz"),
              "crc32c `zz" + text.substr(text.find("\"crc32c\": \"") + 11, 8) +
                  "` of rank 0 is not 8 lowercase hex digits");
  // A mesh of another size than the rank files.
  expectError(replace("\"shape\": [\n      2,\n      2\n    ]",
                      "\"shape\": [\n      2,\n      1\n    ]"),
              "the manifest lists 4 rank files, but mesh {dp:2, tp:1} has 2 "
              "devices");
  // 2^64 - 1 is not read as -1.
  expectError(replace("\"step\": 40", "\"step\": 18446744073709551615"),
              "field `step` must be an integer below 2^63, found "
              "18446744073709551615");
}

TEST(Checkpoint, ResumableManifestsDrawBatchesByStep) {
  // What the trainer's --resume and `loom-ckpt inspect` both refuse.
  Sample sample = makeSample();
  CheckpointManifest manifest = sample.manifest;
  manifest.step = manifest.dataPosition = 40;
  manifest.rngState = {40};
  EXPECT_TRUE(verifyResumable("ck", manifest));
  manifest.dataPosition = 41;
  EXPECT_EQ(verifyResumable("ck", manifest).message(),
            "checkpoint `ck`: data position 41 is not its step 40 (batches "
            "are drawn by step)");
  manifest.dataPosition = 40;
  manifest.rngState = {1, 2};
  EXPECT_EQ(verifyResumable("ck", manifest).message(),
            "checkpoint `ck`: `rng.state` holds 2 words; this trainer keeps "
            "one (the RNG step)");
}

TEST(Checkpoint, FileOfAnotherRankIsReported) {
  Sample sample = makeSample();
  std::string dir = writeSample("swapped", sample);
  // Rank 0's file under rank 1's name, with a manifest that trusts it: the
  // checksum matches, the file's own rank does not.
  fs::copy_file(dir + "/rank-00000.safetensors",
                dir + "/rank-00001.safetensors",
                fs::copy_options::overwrite_existing);
  sample.manifest.files[1] = sample.manifest.files[0];
  sample.manifest.files[1].name = "rank-00001.safetensors";
  ASSERT_TRUE(writeCheckpointManifest(dir, sample.manifest).ok());
  CheckpointManifest manifest;
  ASSERT_TRUE(readCheckpointManifest(dir, manifest).ok());
  TensorMap blocks;
  EXPECT_EQ(readCheckpointShard(dir, manifest, 1, blocks).message(),
            "checkpoint file `" + dir +
                "/rank-00001.safetensors` (rank 1): written by rank `0` at "
                "step `40`, expected rank 1 at step 40");
}

TEST(Checkpoint, DisagreeingReplicasAreReported) {
  Sample sample = makeSample();
  std::vector<TensorMap> perRank;
  ASSERT_TRUE(splitGlobalTensors(sample.manifest, sample.global, perRank).ok());
  // `wte` is split over tp and replicated over dp: rank 3 (dp 1, tp 1) is a
  // replica of rank 1.
  perRank[3]["wte"].bytes[0] ^= 1;
  TensorMap global;
  EXPECT_EQ(assembleGlobalTensors(sample.manifest, perRank, global).message(),
            "tensor `wte` is replicated over [\"dp\"], but rank 3 holds "
            "other values than rank 1");
}

TEST(Checkpoint, PartialLayoutsCannotBeWritten) {
  Sample sample = makeSample();
  sample.manifest.tensors["wte"].layout = "[[\"tp\"], []], partial = [\"dp\"]";
  std::vector<TensorMap> perRank(4);
  Status status =
      writeCheckpoint(freshDir("partial"), sample.manifest, perRank);
  EXPECT_NE(status.message().find("tensor `wte`: partial layout"),
            std::string::npos)
      << status.message();
}

TEST(Checkpoint, LatestCheckpointIsTheHighestCompleteStep) {
  std::string root = freshDir("latest");
  Sample sample = makeSample();
  std::vector<TensorMap> perRank;
  ASSERT_TRUE(splitGlobalTensors(sample.manifest, sample.global, perRank).ok());
  for (int64_t step : {10, 20}) {
    sample.manifest.step = step;
    ASSERT_TRUE(
        writeCheckpoint(checkpointStepDir(root, step), sample.manifest, perRank)
            .ok());
  }
  // Step 30 crashed before its manifest: it does not exist.
  fs::create_directories(checkpointStepDir(root, 30));
  std::string dir;
  ASSERT_TRUE(findLatestCheckpoint(root, dir).ok());
  EXPECT_EQ(dir, root + "/step-00000020");
  EXPECT_EQ(findLatestCheckpoint(freshDir("empty"), dir).message(),
            "no checkpoint (step-N directory with a manifest.json) in `" +
                freshDir("empty") + "`");
}

} // namespace

//===----------------------------------------------------------------------===//
// Pipelined runs
//===----------------------------------------------------------------------===//

namespace {

/// A state on pp=2 x dp=2: `wte` owned by stage 0 (replicated), `head` by
/// stage 1 (rows over dp), `step` on every rank.
Sample makePipelinedSample() {
  Sample sample;
  CheckpointManifest &m = sample.manifest;
  EXPECT_TRUE(DeviceMesh::parse("pp=2,dp=2", m.mesh).ok());
  m.pipelineAxis = "pp";
  m.step = 3;
  m.dataPosition = 3;
  auto add = [&](const std::string &name, TensorData value,
                 const std::string &layout, int64_t stage) {
    m.tensors[name] = {value.shape, value.dtype, layout, stage,
                       /*fileShape=*/{}};
    sample.global[name] = std::move(value);
  };
  add("wte", ramp(DType::F32, {8, 4}, 0.5), "[[], []]", 0);
  add("head", ramp(DType::F32, {4, 6}, -2), "[[\"dp\"], []]", 1);
  add("step", TensorData::fromInt64s(DType::I64, {}, {3}), "[]", -1);
  return sample;
}

} // namespace

TEST(Checkpoint, PipelinedRanksHoldOnlyTheirStagesTensors) {
  Sample sample = makePipelinedSample();
  std::string dir = writeSample("pipelined", sample);
  CheckpointManifest manifest;
  TensorMap global;
  Status status = readGlobalCheckpoint(dir, manifest, global);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(manifest.pipelineAxis, "pp");
  EXPECT_EQ(manifest.tensors.at("wte").stage, 0);
  EXPECT_EQ(manifest.tensors.at("head").stage, 1);
  EXPECT_EQ(manifest.tensors.at("step").stage, -1);
  for (const auto &[name, value] : sample.global)
    EXPECT_EQ(global.at(name).bytes, value.bytes) << name;

  // Rank 1 = (pp 0, dp 1) holds wte and step; rank 2 = (pp 1, dp 0) holds
  // head's rows 0..1 and step.
  TensorMap first, last;
  ASSERT_TRUE(readCheckpointShard(dir, manifest, 1, first).ok());
  ASSERT_TRUE(readCheckpointShard(dir, manifest, 2, last).ok());
  EXPECT_EQ(first.count("wte"), 1u);
  EXPECT_EQ(first.count("head"), 0u);
  EXPECT_EQ(last.count("wte"), 0u);
  EXPECT_EQ(last.at("head").shape, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(last.count("step"), 1u);
  EXPECT_TRUE(holdsTensor(manifest, manifest.tensors.at("head"), 3));
  EXPECT_FALSE(holdsTensor(manifest, manifest.tensors.at("head"), 0));
}

TEST(Checkpoint, PipelinedManifestsAreChecked) {
  // A rank file that holds another stage's tensor.
  Sample sample = makePipelinedSample();
  std::string dir = writeSample("pipelined-foreign", sample);
  CheckpointManifest manifest;
  ASSERT_TRUE(readCheckpointManifest(dir, manifest).ok());
  CheckpointManifest claimsAll = manifest;
  claimsAll.tensors.at("head").stage = 0;
  TensorMap blocks;
  Status status = readCheckpointShard(dir, claimsAll, 2, blocks);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("tensor `head` belongs to stage 0, which "
                                  "this rank does not run"),
            std::string::npos)
      << status.message();

  // A stage outside the pipeline axis, and a pipeline axis not on the mesh.
  Sample bad = makePipelinedSample();
  bad.manifest.tensors.at("wte").stage = 2;
  bad.manifest.files.resize(4);
  status = verifyManifest(bad.manifest);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("tensor `wte`: stage 2 is not a stage of "
                                  "the pipeline axis (size 2)"),
            std::string::npos)
      << status.message();
  bad = makePipelinedSample();
  bad.manifest.pipelineAxis = "stages";
  bad.manifest.files.resize(4);
  status = verifyManifest(bad.manifest);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("pipeline axis `stages` is not an axis of "
                                  "mesh {pp:2, dp:2}"),
            std::string::npos)
      << status.message();
}

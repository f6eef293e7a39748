//===- WeightFileTest.cpp - Pretrained weights read a slice at a time -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// io::WeightFile and io::gatherBlock: a block of a tensor equals that block
// of the whole (plain, through a row-major view, and through the transpose
// Hugging Face's Conv1D stores), the sharded form reads as one file, and an
// index that disagrees with its shards is an error naming the tensor. The
// header-only reader agrees with the whole-file one.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/WeightFile.h"
#include "loom/Runtime/IO/WeightFormats.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace loom::runtime::io;
namespace fs = std::filesystem;

namespace {

TensorData iota(std::vector<int64_t> shape, double start = 0) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = start + double(i);
  return TensorData::fromDoubles(DType::F32, shape, values);
}

fs::path freshDir(const std::string &name) {
  fs::path dir = fs::temp_directory_path() /
                 ("loom-weightfile-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(WeightFile, BlocksEqualTheWholeTensorsBlocks) {
  fs::path dir = freshDir("blocks");
  TensorMap tensors = {{"w", iota({6, 4})}};
  ASSERT_EQ(writeSafeTensors((dir / "m.safetensors").string(), tensors),
            std::nullopt);
  WeightFile file;
  // A directory names its `model.safetensors` (or index), not any file.
  ASSERT_TRUE(WeightFile::open(dir.string(), file));
  fs::rename(dir / "m.safetensors", dir / "model.safetensors");
  ASSERT_EQ(WeightFile::open(dir.string(), file), std::nullopt);
  const uint8_t *data = nullptr;
  ASSERT_EQ(file.bytes("w", data), std::nullopt);

  // Rows 2..3, columns 1..2 of the [6, 4] matrix.
  std::vector<double> block(4);
  gatherBlock<double>(data, DType::F32, {6, 4}, false, 6, 4, {2, 1}, {2, 2},
                      block.data());
  EXPECT_EQ(block, (std::vector<double>{9, 10, 13, 14}));

  // The same elements through the row-major view [2, 3, 4] (GPT-2's
  // c_attn as [3, 1, H, H]): block [1, 0..1, 1..2].
  gatherBlock<double>(data, DType::F32, {2, 3, 4}, false, 6, 4, {1, 0, 1},
                      {1, 2, 2}, block.data());
  EXPECT_EQ(block, (std::vector<double>{13, 14, 17, 18}));

  // The file holds the [4, 6] transpose of the [6, 4] matrix Loom wants:
  // element (r, c) of Loom's is file element (c, r) = c * 6 + r.
  gatherBlock<double>(data, DType::F32, {6, 4}, true, 6, 4, {2, 1}, {2, 2},
                      block.data());
  EXPECT_EQ(block,
            (std::vector<double>{1 * 6 + 2, 2 * 6 + 2, 1 * 6 + 3, 2 * 6 + 3}));
  fs::remove_all(dir);
}

TEST(WeightFile, ShardsReadAsOneFile) {
  fs::path dir = freshDir("shards");
  ASSERT_EQ(writeSafeTensors((dir / "a.safetensors").string(),
                             {{"x", iota({2, 2})}, {"y", iota({3}, 10)}}),
            std::nullopt);
  ASSERT_EQ(writeSafeTensors((dir / "b.safetensors").string(),
                             {{"z", iota({2}, 20)}}),
            std::nullopt);
  auto writeIndex = [&](const std::string &map) {
    std::ofstream(dir / "model.safetensors.index.json")
        << "{\"metadata\": {}, \"weight_map\": {" << map << "}}";
  };
  writeIndex(R"("x": "a.safetensors", "y": "a.safetensors",
                "z": "b.safetensors")");
  WeightFile file;
  ASSERT_EQ(WeightFile::open(dir.string(), file), std::nullopt);
  EXPECT_EQ(file.getShards().size(), 2u);
  TensorMap all;
  ASSERT_EQ(file.readAll(all), std::nullopt);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all.at("z").toDoubles(), (std::vector<double>{20, 21}));
  EXPECT_EQ(all.at("y").toDoubles(), (std::vector<double>{10, 11, 12}));

  // The index and the shards must agree tensor by tensor.
  writeIndex(R"("x": "a.safetensors", "z": "b.safetensors")");
  std::optional<std::string> error = WeightFile::open(dir.string(), file);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("shard `a.safetensors` holds tensor `y`, which the "
                        "index"),
            std::string::npos)
      << *error;
  writeIndex(R"("x": "a.safetensors", "y": "a.safetensors",
                "z": "a.safetensors")");
  error = WeightFile::open(dir.string(), file);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("puts tensor `z` in `a.safetensors`, which does not "
                        "hold it"),
            std::string::npos)
      << *error;
  writeIndex(R"("x": "../a.safetensors")");
  error = WeightFile::open(dir.string(), file);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("must be a file next to the index"), std::string::npos)
      << *error;
  fs::remove_all(dir);
}

TEST(WeightFormats, BindsHuggingFaceGPT2HeadersWithoutReadingData) {
  HeaderMap headers = {
      {"wte.weight", {DType::BF16, {10, 4}}},
      {"h.0.attn.c_attn.weight", {DType::BF16, {4, 12}}},
      {"h.0.attn.bias", {DType::F32, {1, 1, 8, 8}}},
      {"h.0.attn.c_attn.bias", {DType::BF16, {12}}},
  };
  WeightBindings bindings;
  ASSERT_EQ(bindWeights(headers, WeightFormat::HF, bindings), std::nullopt);
  EXPECT_EQ(bindings.family, WeightFamily::GPT2);
  ASSERT_TRUE(bindings.params.count("transformer.h.0.attn.c_attn.weight"));
  const WeightBinding &attn =
      bindings.params.at("transformer.h.0.attn.c_attn.weight");
  EXPECT_TRUE(attn.transposed);
  EXPECT_EQ(attn.loomShape(), (std::vector<int64_t>{12, 4}));
  EXPECT_FALSE(
      bindings.params.at("transformer.h.0.attn.c_attn.bias").transposed);
  EXPECT_EQ(bindings.skipped, (std::vector<std::string>{"h.0.attn.bias"}));
  EXPECT_EQ(bindings.fileName("transformer.ln_f.weight"), "ln_f.weight");

  // Llama's names are Hugging Face's; nanoGPT names no Llama.
  HeaderMap llama = {{"model.embed_tokens.weight", {DType::F32, {10, 4}}}};
  EXPECT_EQ(bindWeights(llama, WeightFormat::HF, bindings), std::nullopt);
  EXPECT_EQ(bindings.family, WeightFamily::Llama);
  EXPECT_TRUE(bindWeights(llama, WeightFormat::NanoGPT, bindings));
}

} // namespace

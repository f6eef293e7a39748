//===- TokenFileTest.cpp - Token files and per-rank batches ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Token files in the three layouts round-trip; damaged files and ids outside
// the vocabulary give their messages; batches are a function of (seed,
// step); and every rank's block of a batch, under several layouts of the
// tokens tensor, equals that block of the global batch.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/TokenFile.h"
#include "loom/Runtime/IO/TensorFile.h"

#include "gtest/gtest.h"

#include <cstring>
#include <filesystem>
#include <numeric>

using namespace loom::runtime::io;
using loom::runtime::layout::BlockLayout;
using loom::runtime::layout::DeviceMesh;

namespace {

std::string tempPath(const std::string &name) {
  std::string dir =
      testing::TempDir() + "loom-tokenfile-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir + "/" + name;
}

std::vector<int32_t> ramp(int64_t count, int32_t modulo) {
  std::vector<int32_t> tokens(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    tokens[i] = static_cast<int32_t>((i * 7 + 3) % modulo);
  return tokens;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  ASSERT_FALSE(writeFileAtomically(path, bytes).has_value());
}

TEST(TokenFile, RoundTripsEveryFormat) {
  std::vector<int32_t> tokens = ramp(1000, 50257);
  for (TokenFormat format :
       {TokenFormat::Llmc, TokenFormat::UInt16, TokenFormat::Int32}) {
    std::string path = tempPath(std::string(tokenFormatName(format)) + ".bin");
    ASSERT_TRUE(writeTokenFile(path, format, tokens).ok());
    TokenFile file;
    // Auto recognizes llm.c files by their magic and reads the rest as
    // nanoGPT's uint16; int32 must be named.
    TokenFormat read =
        format == TokenFormat::Int32 ? TokenFormat::Int32 : TokenFormat::Auto;
    Status status = TokenFile::open(path, read, 50257, file);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(file.getFormat(), format);
    EXPECT_EQ(file.getNumTokens(), 1000);
    std::vector<int32_t> back(1000);
    ASSERT_TRUE(file.read(0, 1000, back.data()).ok());
    EXPECT_EQ(back, tokens);
    ASSERT_TRUE(file.read(990, 10, back.data()).ok());
    EXPECT_EQ(back[0], tokens[990]);
  }
}

TEST(TokenFile, LlmcHeaderIsLlmcs) {
  std::string path = tempPath("header.bin");
  ASSERT_TRUE(writeTokenFile(path, TokenFormat::Llmc, {5, 6, 7}).ok());
  std::string bytes;
  ASSERT_FALSE(readWholeFile(path, bytes).has_value());
  ASSERT_EQ(bytes.size(), 1024u + 3 * 2);
  int32_t header[4];
  std::memcpy(header, bytes.data(), sizeof(header));
  EXPECT_EQ(header[0], 20240520);
  EXPECT_EQ(header[1], 1);
  EXPECT_EQ(header[2], 3);
  EXPECT_EQ(header[3], 0);
  uint16_t first;
  std::memcpy(&first, bytes.data() + 1024, 2);
  EXPECT_EQ(first, 5);
}

TEST(TokenFile, DamagedFilesAndBadIdsAreErrors) {
  std::string path = tempPath("damaged.bin");
  ASSERT_TRUE(writeTokenFile(path, TokenFormat::Llmc, ramp(100, 256)).ok());
  std::string bytes;
  ASSERT_FALSE(readWholeFile(path, bytes).has_value());
  TokenFile file;

  writeBytes(path, bytes.substr(0, bytes.size() - 3));
  EXPECT_EQ(TokenFile::open(path, TokenFormat::Auto, 256, file).message(),
            "token file `" + path +
                "`: truncated: the header announces 100 tokens (1224 bytes), "
                "the file has 1221 bytes");

  std::string wrongMagic = bytes;
  wrongMagic[0] ^= 1;
  writeBytes(path, wrongMagic);
  EXPECT_EQ(TokenFile::open(path, TokenFormat::Llmc, 256, file).message(),
            "token file `" + path +
                "`: wrong magic 20240521 (an llm.c token file starts with "
                "20240520)");

  writeBytes(path, bytes.substr(0, 500));
  EXPECT_EQ(TokenFile::open(path, TokenFormat::Llmc, 256, file).message(),
            "token file `" + path +
                "`: truncated llm.c header: the file has 500 bytes, the "
                "header needs 1024");

  writeBytes(path, std::string(7, '\0'));
  EXPECT_EQ(TokenFile::open(path, TokenFormat::UInt16, 256, file).message(),
            "token file `" + path +
                "`: truncated: 7 bytes is not a whole number of uint16 "
                "tokens");

  ASSERT_TRUE(writeTokenFile(path, TokenFormat::UInt16, {1, 2, 300, 4}).ok());
  ASSERT_TRUE(TokenFile::open(path, TokenFormat::UInt16, 256, file).ok());
  int32_t out[4];
  EXPECT_TRUE(file.read(0, 2, out).ok());
  EXPECT_EQ(file.read(0, 4, out).message(),
            "token file `" + path +
                "`: token id 300 at position 2 is outside the vocabulary "
                "[0, 256)");
  EXPECT_EQ(file.read(2, 3, out).message(),
            "token file `" + path +
                "`: tokens [2, 5) are outside the file's 4 tokens");
}

TEST(TokenFile, ByteTokenizerMapsEachByte) {
  EXPECT_EQ(encodeBytes("Hi\n\xff"), (std::vector<int32_t>{72, 105, 10, 255}));
}

TEST(Batches, AreAFunctionOfSeedAndStep) {
  std::string path = tempPath("batches.bin");
  ASSERT_TRUE(writeTokenFile(path, TokenFormat::Llmc, ramp(5000, 256)).ok());
  TokenFile file;
  ASSERT_TRUE(TokenFile::open(path, TokenFormat::Auto, 256, file).ok());
  BatchSpec spec;
  spec.batchSize = 4;
  spec.seqLen = 16;
  spec.seed = 11;
  std::vector<int32_t> a, aLabels, b, bLabels, c, cLabels;
  ASSERT_TRUE(readGlobalBatch(file, spec, 3, a, aLabels).ok());
  ASSERT_TRUE(readGlobalBatch(file, spec, 3, b, bLabels).ok());
  EXPECT_EQ(a, b);
  ASSERT_TRUE(readGlobalBatch(file, spec, 4, c, cLabels).ok());
  EXPECT_NE(a, c);
  spec.seed = 12;
  ASSERT_TRUE(readGlobalBatch(file, spec, 3, c, cLabels).ok());
  EXPECT_NE(a, c);
  spec.seed = 11;

  // Row r is the window at batchWindowStart; labels are inputs shifted by one.
  std::vector<int32_t> tokens = ramp(5000, 256);
  for (int64_t r = 0; r < 4; ++r) {
    int64_t start = batchWindowStart(spec, 5000, 3, r);
    ASSERT_GE(start, 0);
    ASSERT_LE(start + 16, 4999);
    for (int64_t t = 0; t < 16; ++t) {
      EXPECT_EQ(a[r * 16 + t], tokens[start + t]);
      EXPECT_EQ(aLabels[r * 16 + t], tokens[start + t + 1]);
    }
  }

  spec.order = BatchSpec::Order::Sequential;
  EXPECT_EQ(batchWindowStart(spec, 5000, 2, 1), (2 * 4 + 1) * 16);

  spec.seqLen = 5000;
  EXPECT_EQ(readGlobalBatch(file, spec, 0, a, aLabels).message(),
            "token file `" + path +
                "` has 5000 tokens, a window of sequence length 5000 needs "
                "5001");
}

TEST(Batches, EachRankReadsItsBlockOfTheGlobalBatch) {
  std::string path = tempPath("ranks.bin");
  ASSERT_TRUE(writeTokenFile(path, TokenFormat::UInt16, ramp(3000, 1000)).ok());
  TokenFile file;
  ASSERT_TRUE(TokenFile::open(path, TokenFormat::UInt16, 1000, file).ok());
  DeviceMesh mesh;
  ASSERT_TRUE(DeviceMesh::parse("dp=2,tp=2", mesh).ok());
  BatchSpec spec;
  spec.batchSize = 8;
  spec.seqLen = 12;
  spec.seed = 5;
  for (const char *text :
       {"[[\"dp\"], []]", "[[\"dp\"], [\"tp\"]]", "[[\"dp\", \"tp\"], []]",
        "[[\"tp\"], [\"dp\"]]", "[[], []]"}) {
    BlockLayout layout;
    ASSERT_TRUE(BlockLayout::parse(text, mesh, layout).ok());
    for (int64_t step : {0, 1, 17}) {
      std::vector<int32_t> inputs, labels;
      ASSERT_TRUE(readGlobalBatch(file, spec, step, inputs, labels).ok());
      for (int64_t rank = 0; rank < 4; ++rank) {
        std::vector<int32_t> localInputs, localLabels;
        std::vector<int64_t> shape;
        Status status = readLocalBatch(file, spec, step, mesh, layout, rank,
                                       localInputs, localLabels, shape);
        ASSERT_TRUE(status.ok()) << status.message();
        std::vector<int64_t> offset =
            layout.getBlockOffset(mesh, {8, 12}, rank);
        ASSERT_EQ(static_cast<int64_t>(localInputs.size()),
                  shape[0] * shape[1]);
        for (int64_t r = 0; r < shape[0]; ++r)
          for (int64_t t = 0; t < shape[1]; ++t) {
            int64_t global = (offset[0] + r) * 12 + offset[1] + t;
            EXPECT_EQ(localInputs[r * shape[1] + t], inputs[global])
                << text << " step " << step << " rank " << rank;
            EXPECT_EQ(localLabels[r * shape[1] + t], labels[global]);
          }
      }
    }
  }

  BlockLayout partial;
  ASSERT_TRUE(
      BlockLayout::parse("[[\"dp\"], []], partial = [\"tp\"]", mesh, partial)
          .ok());
  std::vector<int32_t> inputs, labels;
  std::vector<int64_t> shape;
  EXPECT_EQ(
      readLocalBatch(file, spec, 0, mesh, partial, 0, inputs, labels, shape)
          .message(),
      "the tokens tensor cannot have a partial layout ([[\"dp\"], []], "
      "partial = [\"tp\"])");
  BlockLayout threeWays;
  ASSERT_TRUE(DeviceMesh::parse("dp=3", mesh).ok());
  ASSERT_TRUE(BlockLayout::parse("[[\"dp\"], []]", mesh, threeWays).ok());
  EXPECT_EQ(
      readLocalBatch(file, spec, 0, mesh, threeWays, 0, inputs, labels, shape)
          .message(),
      "tokens tensor: mesh axis `dp` (size 3) does not divide dim 0 "
      "(size 8)");
}

} // namespace

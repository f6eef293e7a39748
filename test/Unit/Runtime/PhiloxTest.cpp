//===- PhiloxTest.cpp - The shared host/device Philox and dropout stream --===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// loom/Runtime/Support/Philox.h is compiled for the host here and for the
// device in the CUDA dropout kernel (whose equality with the host kernel is
// LoomRuntimeCUDATests' DropoutMaskEqualsTheHostMask, on a GPU). These cases
// pin the host instantiation to Random123's known answers and to the stream
// layout the header documents.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/Philox.h"

#include <gtest/gtest.h>

#include <array>

using namespace loom::runtime::philox;

namespace {

std::array<uint32_t, 4> words(const Block &b) {
  return {b.word[0], b.word[1], b.word[2], b.word[3]};
}

TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  // Random123 tests/kat_vectors, the "philox4x32 10" lines; the key's
  // first word is its low half.
  EXPECT_EQ(words(philox4x32({{0, 0, 0, 0}}, 0)),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                     0x9b00dbd8}));
  EXPECT_EQ(words(philox4x32({{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
                             0xffffffffffffffffull)),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                     0x6d5451fd}));
  EXPECT_EQ(words(philox4x32({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
                             0x299f31d0a4093822ull)),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                     0x24126ea1}));
}

TEST(PhiloxTest, DropoutStreamOfRunSeedZeroAndStepZeroIsTheSiteSeed) {
  DropoutStream stream = dropoutStream(-3, 0, 0);
  EXPECT_EQ(stream.key, static_cast<uint64_t>(int64_t(-3)));
  EXPECT_EQ(stream.word2, 0u);
  EXPECT_EQ(stream.word3, 0u);
}

TEST(PhiloxTest, DropoutStreamMixesTheRunSeedAndCountsTheStep) {
  DropoutStream stream = dropoutStream(17, 2, (uint64_t(0x80000003) << 32) | 9);
  EXPECT_EQ(stream.key, 17ull ^ (2 * 0x9E3779B97F4A7C15ull));
  EXPECT_EQ(stream.word2, 9u);
  // Bit 31 of word 3 belongs to the initialization streams.
  EXPECT_EQ(stream.word3, 3u);
  // Distinct run seeds give distinct keys for a site.
  EXPECT_NE(dropoutStream(17, 1, 0).key, dropoutStream(17, 2, 0).key);
}

TEST(PhiloxTest, DropoutWordsFollowTheGlobalIndex) {
  DropoutStream stream = dropoutStream(5, 11, 4);
  for (uint64_t i : {0ull, 1ull, 6ull, 4000000001ull, (1ull << 34) + 3}) {
    uint64_t block = i / 4;
    Block expected = philox4x32(
        {{uint32_t(block), uint32_t(block >> 32), 4, 0}}, stream.key);
    EXPECT_EQ(words(dropoutBlock(stream, i)), words(expected)) << i;
    EXPECT_EQ(dropoutKeeps(stream, 0x40000000u, i),
              expected.word[i % 4] >= 0x40000000u)
        << i;
  }
}

TEST(PhiloxTest, ThresholdIsTheFloorOfRateTimesTwoToThe32) {
  EXPECT_EQ(dropoutThreshold(0.0), 0u);
  EXPECT_EQ(dropoutThreshold(0.5), 0x80000000u);
  EXPECT_EQ(dropoutThreshold(0.1), 429496729u);
  EXPECT_EQ(dropoutThreshold(0.9999999999), 4294967295u);
  // Rate 0 keeps every element, whatever its word.
  DropoutStream stream = dropoutStream(1, 2, 3);
  for (uint64_t i = 0; i < 64; ++i)
    EXPECT_TRUE(dropoutKeeps(stream, dropoutThreshold(0.0), i));
}

} // namespace

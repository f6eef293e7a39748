//===- RandomTest.cpp - Philox, initialization and dropout kernels --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Random.h"

#include "HostTestSupport.h"

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

TEST(RandomTest, PhiloxMatchesRandom123KnownAnswers) {
  // Random123 tests/kat_vectors, the three "philox4x32 10" lines
  // (counter, key, expected output).
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                       {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(RandomTest, TensorIdsAreFnv1a64) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(tensorIdFromName(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(tensorIdFromName("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(tensorIdFromName("foobar"), 0x85944171f73967e8ull);
  EXPECT_NE(tensorIdFromName("h.0.attn.c_attn.weight"),
            tensorIdFromName("h.1.attn.c_attn.weight"));
}

/// Word r of global element i of an initialization stream, from the layout
/// Random.h documents.
uint32_t initWord(uint64_t seed, uint64_t id, uint64_t i, unsigned w) {
  uint64_t block = i / 4;
  return philox4x32({uint32_t(block), uint32_t(block >> 32), uint32_t(id),
                     uint32_t(id >> 32) | 0x80000000u},
                    {uint32_t(seed), uint32_t(seed >> 32)})[w];
}

TEST(RandomTest, UniformFollowsTheDocumentedStream) {
  uint64_t seed = 0x123456789abcdefull, id = tensorIdFromName("wte.weight");
  std::vector<double> out(10);
  fillUniform(out.data(), {10}, {0}, {10}, seed, id, -2.0, 3.0);
  for (uint64_t i = 0; i < 10; ++i)
    EXPECT_EQ(out[i], -2.0 + 5.0 * ((initWord(seed, id, i, i % 4) + 0.5) /
                                    4294967296.0));
}

TEST(RandomTest, NormalFollowsTheDocumentedBoxMuller) {
  uint64_t seed = 7, id = 42;
  std::vector<double> out(8);
  fillNormal(out.data(), {2, 4}, {0, 0}, {2, 4}, seed, id, 1.0, 0.5);
  for (uint64_t i = 0; i < 8; ++i) {
    unsigned first = (i % 4) / 2 * 2;
    double u1 = (initWord(seed, id, i, first) + 0.5) / 4294967296.0;
    double u2 = initWord(seed, id, i, first + 1) / 4294967296.0;
    double angle = 6.283185307179586476925 * u2; // 2 pi u2
    double z = std::sqrt(-2 * std::log(u1)) *
               (i % 2 == 0 ? std::cos(angle) : std::sin(angle));
    EXPECT_NEAR(out[i], 1.0 + 0.5 * z, 1e-15) << "element " << i;
  }
}

TEST(RandomTest, DistributionsHaveTheirMoments) {
  // Deterministic for the fixed seed; each bound is at least six standard
  // errors wide for n = 40000 (0.0014 for the uniform mean, 0.005 for the
  // normal mean, 0.007 for its variance).
  const int64_t n = 40000;
  std::vector<double> u(n), z(n);
  fillUniform(u.data(), {n}, {0}, {n}, 1, 2, 0.0, 1.0);
  fillNormal(z.data(), {n}, {0}, {n}, 1, 2, 0.0, 1.0);
  double mu = 0, mz = 0, vz = 0;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_GT(u[i], 0.0);
    EXPECT_LT(u[i], 1.0);
    mu += u[i] / n;
    mz += z[i] / n;
  }
  for (int64_t i = 0; i < n; ++i)
    vz += (z[i] - mz) * (z[i] - mz) / n;
  EXPECT_NEAR(mu, 0.5, 0.01);
  EXPECT_NEAR(mz, 0.0, 0.03);
  EXPECT_NEAR(vz, 1.0, 0.05);
}

TEST(RandomTest, StreamsDependOnSeedAndTensorId) {
  std::vector<double> a(16), b(16), c(16);
  fillNormal(a.data(), {16}, {0}, {16}, 1, 10, 0, 1);
  fillNormal(b.data(), {16}, {0}, {16}, 1, 11, 0, 1);
  fillNormal(c.data(), {16}, {0}, {16}, 2, 10, 0, 1);
  for (int i = 0; i < 16; ++i) {
    EXPECT_NE(a[i], b[i]);
    EXPECT_NE(a[i], c[i]);
  }
}

/// The row-major slice [offset, offset + block) of a [global] tensor.
template <typename T>
std::vector<T> slice(const std::vector<T> &full, const Shape &global,
                     const Shape &offset, const Shape &block) {
  std::vector<T> out;
  int64_t n = numElements(global);
  for (int64_t e = 0; e < n; ++e) {
    bool inside = true;
    int64_t rest = e;
    for (size_t d = global.size(); d-- > 0;) {
      int64_t coord = rest % global[d];
      rest /= global[d];
      inside &= coord >= offset[d] && coord < offset[d] + block[d];
    }
    if (inside)
      out.push_back(full[e]);
  }
  return out;
}

/// The blocks (offset, shape) of [6, 8, 4] the sharding tests cut.
std::vector<std::pair<Shape, Shape>> blocksOf68x4() {
  return {{{3, 0, 0}, {3, 8, 4}},  // dim 0 split in 2, second shard
          {{0, 6, 0}, {6, 2, 4}},  // dim 1 split in 4, last shard
          {{2, 4, 2}, {2, 4, 2}},  // dims 0, 1, 2 split 3, 2, 2
          {{0, 0, 1}, {6, 8, 1}},  // dim 2 split in 4: runs of one
          {{1, 3, 1}, {4, 5, 3}},  // an unaligned window
          {{0, 0, 0}, {6, 8, 4}}}; // the whole tensor
}

TEST(RandomTest, ShardsEqualTheSliceOfTheUnshardedTensor) {
  Shape global{6, 8, 4};
  std::vector<double> fullNormal(192), fullUniform(192), fullDropout(192);
  std::vector<float> fullNormalF(192);
  std::vector<double> x = randomValues(192, 160);
  fillNormal(fullNormal.data(), global, {0, 0, 0}, global, 5, 6, 0.0, 0.02);
  fillNormal(fullNormalF.data(), global, {0, 0, 0}, global, 5, 6, 0.0, 0.02);
  fillUniform(fullUniform.data(), global, {0, 0, 0}, global, 5, 6, -1, 1);
  dropout(x.data(), global, {0, 0, 0}, global, 0.3, 17, 5, 3,
          fullDropout.data());
  for (const auto &[offset, block] : blocksOf68x4()) {
    size_t n = numElements(block);
    std::vector<double> normal(n), uniform(n), dropped(n);
    std::vector<float> normalF(n);
    fillNormal(normal.data(), global, offset, block, 5, 6, 0.0, 0.02);
    fillNormal(normalF.data(), global, offset, block, 5, 6, 0.0, 0.02);
    fillUniform(uniform.data(), global, offset, block, 5, 6, -1, 1);
    std::vector<double> xBlock = slice(x, global, offset, block);
    dropout(xBlock.data(), global, offset, block, 0.3, 17, 5, 3,
            dropped.data());
    EXPECT_EQ(normal, slice(fullNormal, global, offset, block));
    EXPECT_EQ(normalF, slice(fullNormalF, global, offset, block));
    EXPECT_EQ(uniform, slice(fullUniform, global, offset, block));
    EXPECT_EQ(dropped, slice(fullDropout, global, offset, block));
  }
  // A rank-0 tensor is its own only block.
  double scalar = 0, again = 1;
  fillNormal(&scalar, {}, {}, {}, 5, 6, 0.0, 1.0);
  fillNormal(&again, {}, {}, {}, 5, 6, 0.0, 1.0);
  EXPECT_EQ(scalar, again);
}

TEST(RandomTest, DropoutFollowsTheOpDescription) {
  // At run seed 0 and step 0: key (lo32(seed), hi32(seed)); counter
  // (lo32(i/4), hi32(i/4), 0, 0); word i % 4; keep iff word >=
  // floor(rate * 2^32); scale 1 / (1 - rate).
  int64_t seed = -3; // The i64 attribute, read as its two's-complement bits.
  double rate = 0.25;
  int64_t n = 4000;
  std::vector<double> x = randomValues(n, 170), y(n);
  dropout(x.data(), {n}, {0}, {n}, rate, seed, 0, 0, y.data());
  uint64_t bits = static_cast<uint64_t>(seed);
  uint64_t threshold = static_cast<uint64_t>(rate * 4294967296.0);
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t block = i / 4;
    uint32_t r = philox4x32({uint32_t(block), uint32_t(block >> 32), 0, 0},
                            {uint32_t(bits), uint32_t(bits >> 32)})[i % 4];
    bool keep = r >= threshold;
    kept += keep;
    EXPECT_EQ(y[i], keep ? x[i] * (1 / 0.75) : 0.0) << "element " << i;
  }
  EXPECT_NEAR(double(kept) / n, 0.75, 0.03);
}

TEST(RandomTest, DropoutDrawsFromTheRunSeedAndTheStep) {
  // Key seed ^ runSeed * 0x9E3779B97F4A7C15; counter words 2-3 the step
  // (bit 63 cleared), as Support/Philox.h documents.
  int64_t seed = 41, n = 1000;
  uint64_t runSeed = 7, step = (uint64_t(5) << 32) | 12;
  std::vector<double> ones(n, 1.0), y(n);
  dropout(ones.data(), {n}, {0}, {n}, 0.5, seed, runSeed, step, y.data());
  uint64_t key = uint64_t(seed) ^ (runSeed * 0x9E3779B97F4A7C15ull);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t block = i / 4;
    uint32_t r = philox4x32({uint32_t(block), uint32_t(block >> 32), 12, 5},
                            {uint32_t(key), uint32_t(key >> 32)})[i % 4];
    EXPECT_EQ(y[i], r >= 0x80000000u ? 2.0 : 0.0) << "element " << i;
  }
}

TEST(RandomTest, DropoutMasksChangeWithTheStepAndTheRunSeed) {
  int64_t n = 512;
  std::vector<double> ones(n, 1.0);
  auto mask = [&](uint64_t runSeed, uint64_t step) {
    std::vector<double> y(n);
    dropout(ones.data(), {n}, {0}, {n}, 0.5, 3, runSeed, step, y.data());
    return y;
  };
  std::vector<double> base = mask(0, 0);
  EXPECT_EQ(mask(0, 0), base);
  for (auto [runSeed, step] : {std::pair<uint64_t, uint64_t>{0, 1},
                               {0, 2},
                               {1, 0},
                               {1, 1},
                               {0, uint64_t(1) << 32}}) {
    std::vector<double> other = mask(runSeed, step);
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i)
      differ += (other[i] != 0) != (base[i] != 0);
    // Independent masks at rate 1/2 differ in about half the elements.
    EXPECT_GT(differ, n / 4) << "run seed " << runSeed << ", step " << step;
  }
  // Bit 63 of the step is not part of the stream.
  EXPECT_EQ(mask(0, uint64_t(1) << 63), base);
}

TEST(RandomTest, DropoutMaskDoesNotDependOnTheElementType) {
  int64_t n = 256;
  std::vector<double> ones(n, 1.0), y(n);
  std::vector<float> onesF(n, 1.0f), yF(n);
  dropout(ones.data(), {n}, {0}, {n}, 0.5, 99, 0, 0, y.data());
  dropout(onesF.data(), {n}, {0}, {n}, 0.5, 99, 0, 0, yF.data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(y[i] != 0, yF[i] != 0) << "element " << i;
    if (yF[i] != 0)
      EXPECT_EQ(yF[i], 2.0f);
  }
}

TEST(RandomTest, DropoutAtRateZeroIsTheIdentity) {
  std::vector<double> x = randomValues(37, 180), y(37);
  dropout(x.data(), {37}, {0}, {37}, 0.0, 1, 4, 9, y.data());
  EXPECT_EQ(y, x);
}

} // namespace

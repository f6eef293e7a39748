//===- AttentionTest.cpp - Host attention kernels -------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Attention.h"

#include "HostTestSupport.h"

#include <limits>

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

/// One attention problem with its data, in double.
struct Case {
  int64_t b, hq, hkv, sq, skv, d, dv;
  bool causal = false;
  std::optional<double> scale;
  Shape maskShape; // Used when `mask` is non-empty.
  std::vector<double> q, k, v, mask;

  Case(int64_t b, int64_t hq, int64_t hkv, int64_t sq, int64_t skv, int64_t d,
       int64_t dv, uint64_t seed)
      : b(b), hq(hq), hkv(hkv), sq(sq), skv(skv), d(d), dv(dv) {
    q = randomValues(b * hq * sq * d, seed, -1.5, 1.5);
    k = randomValues(b * hkv * skv * d, seed + 1, -1.5, 1.5);
    v = randomValues(b * hkv * skv * dv, seed + 2);
  }

  Shape qShape() const { return {b, hq, sq, d}; }
  Shape kShape() const { return {b, hkv, skv, d}; }
  Shape vShape() const { return {b, hkv, skv, dv}; }
  size_t outSize() const { return b * hq * sq * dv; }
  const double *maskData() const {
    return mask.empty() ? nullptr : mask.data();
  }

  /// Gives the case a random additive mask of `shape`, with some keys masked
  /// out by a large negative value.
  void setMask(Shape shape, uint64_t seed) {
    maskShape = std::move(shape);
    mask = randomValues(numElements(maskShape), seed, -1, 1);
    for (size_t i = 0; i < mask.size(); i += 3)
      mask[i] = -1e9;
  }

  std::vector<double> run(const std::vector<double> &qv,
                          const std::vector<double> &kv,
                          const std::vector<double> &vv) const {
    std::vector<double> out(outSize());
    attention(qv.data(), qShape(), kv.data(), kShape(), vv.data(), vShape(),
              maskData(), maskShape, causal, scale, out.data());
    return out;
  }
};

/// Reads mask element (bi, h, i, j) the numpy way: the mask's dims align with
/// the last dims of [B, Hq, Sq, Skv], and a dim of size 1 always reads 0.
double maskAt(const Case &c, int64_t bi, int64_t h, int64_t i, int64_t j) {
  if (c.mask.empty())
    return 0;
  int64_t coords[4] = {bi, h, i, j};
  int64_t rank = c.maskShape.size(), index = 0;
  for (int64_t m = 0; m < rank; ++m) {
    int64_t size = c.maskShape[m];
    index = index * size + (size == 1 ? 0 : coords[4 - rank + m]);
  }
  return c.mask[index];
}

/// Attention with the score matrix materialized: scores, -inf above the
/// causal diagonal, softmax, then the product with the values.
std::vector<double> referenceAttention(const Case &c) {
  std::vector<double> out(c.outSize());
  double scale = c.scale ? *c.scale : 1 / std::sqrt(double(c.d));
  int64_t group = c.hq / c.hkv;
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t h = 0; h < c.hq; ++h) {
      int64_t kvh = h / group;
      for (int64_t i = 0; i < c.sq; ++i) {
        std::vector<double> s(c.skv);
        for (int64_t j = 0; j < c.skv; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < c.d; ++x)
            dot += c.q[((bi * c.hq + h) * c.sq + i) * c.d + x] *
                   c.k[((bi * c.hkv + kvh) * c.skv + j) * c.d + x];
          s[j] = scale * dot + maskAt(c, bi, h, i, j);
          if (c.causal && j > i + (c.skv - c.sq))
            s[j] = -std::numeric_limits<double>::infinity();
        }
        double m = *std::max_element(s.begin(), s.end()), sum = 0;
        for (double &e : s)
          sum += (e = std::exp(e - m));
        for (int64_t y = 0; y < c.dv; ++y) {
          double acc = 0;
          for (int64_t j = 0; j < c.skv; ++j)
            acc +=
                s[j] / sum * c.v[((bi * c.hkv + kvh) * c.skv + j) * c.dv + y];
          out[((bi * c.hq + h) * c.sq + i) * c.dv + y] = acc;
        }
      }
    }
  return out;
}

/// Checks attention_grad against finite differences of attention for q, k, v.
void expectGradientsMatchFiniteDifferences(const Case &c) {
  std::vector<double> w = randomValues(c.outSize(), 99);
  std::vector<double> out = c.run(c.q, c.k, c.v);
  std::vector<double> dq(c.q.size()), dk(c.k.size()), dv(c.v.size());
  attentionGrad(c.q.data(), c.qShape(), c.k.data(), c.kShape(), c.v.data(),
                c.vShape(), out.data(), w.data(), c.maskData(), c.maskShape,
                c.causal, c.scale, dq.data(), dk.data(), dv.data());
  expectAllClose(dq,
                 numericGradient(
                     [&](const std::vector<double> &x) {
                       return weightedSum(w, c.run(x, c.k, c.v));
                     },
                     c.q),
                 kGradTolerance, "dquery");
  expectAllClose(dk,
                 numericGradient(
                     [&](const std::vector<double> &x) {
                       return weightedSum(w, c.run(c.q, x, c.v));
                     },
                     c.k),
                 kGradTolerance, "dkey");
  expectAllClose(dv,
                 numericGradient(
                     [&](const std::vector<double> &x) {
                       return weightedSum(w, c.run(c.q, c.k, x));
                     },
                     c.v),
                 kGradTolerance, "dvalue");
}

TEST(AttentionTest, ZeroQueriesAverageTheAttendedValues) {
  // With q = 0 every attended key scores alike, so each output row is the
  // mean of the values its row may see.
  Case c(1, 1, 1, 2, 2, 1, 1, 0);
  c.q = {0, 0};
  c.v = {2, 6};
  EXPECT_EQ(c.run(c.q, c.k, c.v), (std::vector<double>{4, 4}));
  c.causal = true;
  EXPECT_EQ(c.run(c.q, c.k, c.v), (std::vector<double>{2, 4}));
}

TEST(AttentionTest, CausalAlignsAtTheBottomRight) {
  // Sq = 2 queries over Skv = 4 keys: query 0 sees keys 0..2, query 1 all.
  Case c(1, 1, 1, 2, 4, 1, 1, 0);
  c.q = {0, 0};
  c.v = {1, 2, 3, 10};
  c.causal = true;
  expectAllClose(c.run(c.q, c.k, c.v), std::vector<double>{2, 4}, 1e-15);
}

TEST(AttentionTest, MatchesReference) {
  Case c(2, 2, 2, 3, 5, 4, 3, 30);
  expectAllClose(c.run(c.q, c.k, c.v), referenceAttention(c), 1e-14);
  c.scale = 0.3;
  expectAllClose(c.run(c.q, c.k, c.v), referenceAttention(c), 1e-14);
}

TEST(AttentionTest, CausalMatchesReference) {
  Case square(1, 2, 1, 4, 4, 3, 2, 40);
  square.causal = true;
  expectAllClose(square.run(square.q, square.k, square.v),
                 referenceAttention(square), 1e-14);
  Case chunk(2, 2, 2, 2, 5, 3, 3, 41);
  chunk.causal = true;
  expectAllClose(chunk.run(chunk.q, chunk.k, chunk.v),
                 referenceAttention(chunk), 1e-14);
}

TEST(AttentionTest, GroupedQueryHeadsShareKeyValueHeads) {
  // Hq = 4 over Hkv = 2 equals Hkv = 4 with each key/value head repeated for
  // the two query heads of its group.
  Case gqa(2, 4, 2, 3, 3, 2, 2, 50);
  Case repeated = gqa;
  repeated.hkv = 4;
  repeated.k.clear();
  repeated.v.clear();
  for (int64_t bi = 0; bi < 2; ++bi)
    for (int64_t h = 0; h < 4; ++h) {
      int64_t kvh = h / 2;
      auto kBegin = gqa.k.begin() + (bi * 2 + kvh) * 3 * 2;
      auto vBegin = gqa.v.begin() + (bi * 2 + kvh) * 3 * 2;
      repeated.k.insert(repeated.k.end(), kBegin, kBegin + 6);
      repeated.v.insert(repeated.v.end(), vBegin, vBegin + 6);
    }
  expectAllClose(gqa.run(gqa.q, gqa.k, gqa.v),
                 repeated.run(repeated.q, repeated.k, repeated.v), 1e-15);
  expectAllClose(gqa.run(gqa.q, gqa.k, gqa.v), referenceAttention(gqa), 1e-14);
  Case mqa(1, 3, 1, 2, 4, 2, 3, 51);
  mqa.causal = true;
  expectAllClose(mqa.run(mqa.q, mqa.k, mqa.v), referenceAttention(mqa), 1e-14);
}

TEST(AttentionTest, MasksBroadcastNumpyStyle) {
  for (Shape maskShape : {Shape{3, 4}, Shape{2, 1, 1, 4}, Shape{1, 2, 3, 4},
                          Shape{4}, Shape{2, 2, 3, 4}}) {
    Case c(2, 2, 1, 3, 4, 2, 2, 60);
    c.setMask(maskShape, 61);
    expectAllClose(c.run(c.q, c.k, c.v), referenceAttention(c), 1e-14);
    c.causal = true;
    expectAllClose(c.run(c.q, c.k, c.v), referenceAttention(c), 1e-14);
  }
}

TEST(AttentionTest, MaskedKeysGetNoWeight) {
  // A key masked with a large negative value contributes nothing: masking
  // key 1 leaves the output of attending key 0 alone.
  Case c(1, 1, 1, 1, 2, 1, 1, 0);
  c.q = {0.7};
  c.k = {0.2, -0.4};
  c.v = {5, 100};
  c.setMask({2}, 0);
  c.mask = {0, -1e30};
  EXPECT_EQ(c.run(c.q, c.k, c.v), (std::vector<double>{5}));
}

TEST(AttentionTest, GradientMatchesFiniteDifferences) {
  expectGradientsMatchFiniteDifferences(Case(2, 2, 2, 3, 4, 3, 2, 70));
}

TEST(AttentionTest, CausalGradientMatchesFiniteDifferences) {
  Case square(1, 2, 2, 4, 4, 2, 3, 71);
  square.causal = true;
  expectGradientsMatchFiniteDifferences(square);
  Case chunk(1, 2, 1, 2, 5, 3, 2, 72);
  chunk.causal = true;
  chunk.scale = 0.7;
  expectGradientsMatchFiniteDifferences(chunk);
}

TEST(AttentionTest, GroupedQueryGradientMatchesFiniteDifferences) {
  expectGradientsMatchFiniteDifferences(Case(2, 4, 2, 3, 3, 2, 2, 73));
}

TEST(AttentionTest, MaskedGradientMatchesFiniteDifferences) {
  Case c(2, 2, 1, 3, 4, 2, 2, 74);
  c.setMask({2, 1, 3, 4}, 75);
  expectGradientsMatchFiniteDifferences(c);
  c.causal = true;
  expectGradientsMatchFiniteDifferences(c);
}

TEST(AttentionTest, FloatKernelsAgreeWithDouble) {
  Case c(2, 4, 2, 5, 7, 8, 4, 80);
  c.causal = true;
  c.setMask({5, 7}, 81);
  std::vector<double> out = c.run(c.q, c.k, c.v);
  std::vector<float> qf = toFloat(c.q), kf = toFloat(c.k), vf = toFloat(c.v),
                     mf = toFloat(c.mask), outf(c.outSize());
  attention(qf.data(), c.qShape(), kf.data(), c.kShape(), vf.data(), c.vShape(),
            mf.data(), c.maskShape, true, std::nullopt, outf.data());
  expectAllClose(outf, out, 1e-6, "attention");
  std::vector<double> w = randomValues(c.outSize(), 82);
  std::vector<float> wf = toFloat(w);
  std::vector<double> dq(c.q.size()), dk(c.k.size()), dv(c.v.size());
  std::vector<float> dqf(dq.size()), dkf(dk.size()), dvf(dv.size());
  attentionGrad(c.q.data(), c.qShape(), c.k.data(), c.kShape(), c.v.data(),
                c.vShape(), out.data(), w.data(), c.mask.data(), c.maskShape,
                true, std::nullopt, dq.data(), dk.data(), dv.data());
  attentionGrad(qf.data(), c.qShape(), kf.data(), c.kShape(), vf.data(),
                c.vShape(), outf.data(), wf.data(), mf.data(), c.maskShape,
                true, std::nullopt, dqf.data(), dkf.data(), dvf.data());
  expectAllClose(dqf, dq, 1e-5, "dquery");
  expectAllClose(dkf, dk, 1e-5, "dkey");
  expectAllClose(dvf, dv, 1e-5, "dvalue");
}

} // namespace

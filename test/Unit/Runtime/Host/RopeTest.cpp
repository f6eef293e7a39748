//===- RopeTest.cpp - Host rotary position embedding kernel ---------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Rope.h"

#include "HostTestSupport.h"

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

/// Hugging Face's apply_rotary_pos_emb written out for one [B, H, S, D]
/// tensor: angle = cat(p * inv_freq, p * inv_freq), x * cos + rotate_half(x)
/// * sin, with position(b, s) giving each row's position.
template <typename PositionFn>
std::vector<double> referenceRope(const std::vector<double> &x,
                                  const Shape &shape, double theta,
                                  PositionFn position) {
  int64_t d = shape[3], half = d / 2;
  std::vector<double> y(x.size());
  for (int64_t bi = 0; bi < shape[0]; ++bi)
    for (int64_t h = 0; h < shape[1]; ++h)
      for (int64_t s = 0; s < shape[2]; ++s) {
        const double *row = x.data() + ((bi * shape[1] + h) * shape[2] + s) * d;
        double *out = y.data() + ((bi * shape[1] + h) * shape[2] + s) * d;
        for (int64_t i = 0; i < d; ++i) {
          double invFreq = 1 / std::pow(theta, double(2 * (i % half)) / d);
          double angle = position(bi, s) * invFreq;
          double rotated = i < half ? -row[i + half] : row[i - half];
          out[i] = row[i] * std::cos(angle) + rotated * std::sin(angle);
        }
      }
  return y;
}

TEST(RopeTest, HandComputedRotation) {
  // D = 2: one pair rotated by angle p (inv_freq[0] = 1); row s = 1 turns
  // (1, 0) into (cos 1, sin 1).
  std::vector<double> x{1, 0, 1, 0}, y(4);
  rope(x.data(), {1, 1, 2, 2}, nullptr, {}, 10000.0, false, y.data());
  EXPECT_DOUBLE_EQ(y[0], 1);
  EXPECT_DOUBLE_EQ(y[1], 0);
  EXPECT_NEAR(y[2], std::cos(1.0), 1e-15);
  EXPECT_NEAR(y[3], std::sin(1.0), 1e-15);
}

TEST(RopeTest, DefaultPositionsMatchReference) {
  Shape shape{2, 3, 5, 8};
  std::vector<double> x = randomValues(240, 100), y(240);
  rope(x.data(), shape, nullptr, {}, 10000.0, false, y.data());
  expectAllClose(y,
                 referenceRope(x, shape, 10000.0,
                               [](int64_t, int64_t s) { return double(s); }),
                 1e-14);
}

TEST(RopeTest, ExplicitPositionsMatchReference) {
  Shape shape{2, 2, 3, 6};
  std::vector<double> x = randomValues(72, 101), y(72);
  std::vector<int64_t> perBatch{7, 8, 9, 0, 1, 500};
  rope(x.data(), shape, perBatch.data(), {2, 3}, 500000.0, false, y.data());
  expectAllClose(y,
                 referenceRope(x, shape, 500000.0,
                               [&](int64_t b, int64_t s) {
                                 return double(perBatch[b * 3 + s]);
                               }),
                 1e-13);
  std::vector<int64_t> shared{4, 2, 11};
  rope(x.data(), shape, shared.data(), {3}, 10000.0, false, y.data());
  expectAllClose(
      y,
      referenceRope(x, shape, 10000.0,
                    [&](int64_t, int64_t s) { return double(shared[s]); }),
      1e-13);
}

TEST(RopeTest, InverseUndoesTheRotationAndIsItsGradient) {
  Shape shape{1, 2, 4, 4};
  std::vector<int64_t> positions{3, 1, 4, 1};
  std::vector<double> x = randomValues(32, 102), y(32), back(32), dx(32);
  rope(x.data(), shape, positions.data(), {4}, 10000.0, false, y.data());
  rope(y.data(), shape, positions.data(), {4}, 10000.0, true, back.data());
  expectAllClose(back, x, 1e-15);
  std::vector<double> w = randomValues(32, 103);
  rope(w.data(), shape, positions.data(), {4}, 10000.0, true, dx.data());
  auto loss = [&](const std::vector<double> &v) {
    std::vector<double> out(32);
    rope(v.data(), shape, positions.data(), {4}, 10000.0, false, out.data());
    return weightedSum(w, out);
  };
  expectAllClose(dx, numericGradient(loss, x), kGradTolerance);
}

TEST(RopeTest, FloatKernelAgreesWithDouble) {
  Shape shape{2, 2, 8, 16};
  std::vector<double> x = randomValues(512, 104), y(512);
  std::vector<float> xf = toFloat(x), yf(512);
  rope(x.data(), shape, nullptr, {}, 10000.0, false, y.data());
  rope(xf.data(), shape, nullptr, {}, 10000.0, false, yf.data());
  expectAllClose(yf, y, 1e-6);
}

} // namespace

//===- HostKernelsTest.cpp - Host kernels against loops -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The host kernels of lib/Runtime/Host checked against straightforward
// reference loops on small shapes (numpy cross-checks live in
// test/python/test_loom_run.py).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Elementwise.h"
#include "loom/Runtime/Host/Matmul.h"
#include "loom/Runtime/Host/Reduction.h"
#include "loom/Runtime/Host/Shape.h"
#include "loom/Runtime/Support/MatmulRows.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace loom::runtime;
using namespace loom::runtime::host;

namespace {

std::vector<double> iota(int64_t n, double scale = 0.25) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = (i % 7 - 3) * scale + i * 0.01;
  return v;
}

TEST(HostMatmul, MatchesNaiveLoopsWithBroadcastAndTransposes) {
  // lhs [2, 1, 3, 4] transposed -> [2, 1, 4, 3]; rhs [5, 3] -> result
  // [2, 1, 4, 5]; then a broadcast rhs batch [3, 3, 5] -> [2, 3, 4, 5].
  Shape lhsShape = {2, 1, 3, 4}, rhsShape = {3, 3, 5};
  auto outShape = matmulResultShape(lhsShape, rhsShape, true, false);
  ASSERT_TRUE(outShape);
  EXPECT_EQ(*outShape, (Shape{2, 3, 4, 5}));
  std::vector<double> lhs = iota(24), rhs = iota(45, 0.5),
                      out(numElements(*outShape));
  matmul<double>(lhs.data(), lhsShape, rhs.data(), rhsShape, true, false,
                 out.data());
  for (int b0 = 0; b0 < 2; ++b0)
    for (int b1 = 0; b1 < 3; ++b1)
      for (int m = 0; m < 4; ++m)
        for (int n = 0; n < 5; ++n) {
          double sum = 0;
          for (int k = 0; k < 3; ++k)
            sum += lhs[b0 * 12 + k * 4 + m] * rhs[b1 * 15 + k * 5 + n];
          EXPECT_NEAR(out[((b0 * 3 + b1) * 4 + m) * 5 + n], sum, 1e-12);
        }
  EXPECT_FALSE(matmulResultShape({2, 3}, {4, 5}, false, false));
  EXPECT_FALSE(matmulResultShape({2, 2, 3}, {3, 3, 5}, false, false));
}

TEST(HostMatmul, SharedWeightBatchDimsFoldIntoRows) {
  // GPT-2's fused q/k/v projection: x [2, 3, 4] times the weight viewed
  // [3, 1, 5, 4] (transposed) is [3, 2, 3, 5]. The weight is shared along
  // the activations' batch dim, which folds into the rows: lhs [6, 4], rhs
  // [3, 5, 4], three products of 6 rows.
  Shape lhsShape = {2, 3, 4}, rhsShape = {3, 1, 5, 4};
  Shape lhsRows = lhsShape, rhsRows = rhsShape;
  ASSERT_TRUE(foldSharedBatchDimsIntoRows(lhsRows, rhsRows, false));
  EXPECT_EQ(lhsRows, (Shape{6, 4}));
  EXPECT_EQ(rhsRows, (Shape{3, 5, 4}));
  // Nothing folds when the weight differs along the dim, or lhs is
  // transposed.
  Shape l = {2, 3, 4}, r = {3, 2, 5, 4};
  EXPECT_FALSE(foldSharedBatchDimsIntoRows(l, r, false));
  l = lhsShape, r = rhsShape;
  EXPECT_FALSE(foldSharedBatchDimsIntoRows(l, r, true));

  auto outShape = matmulResultShape(lhsShape, rhsShape, false, true);
  ASSERT_TRUE(outShape);
  EXPECT_EQ(*outShape, (Shape{3, 2, 3, 5}));
  std::vector<double> lhs = iota(24), rhs = iota(60, 0.5),
                      out(numElements(*outShape));
  matmul<double>(lhs.data(), lhsShape, rhs.data(), rhsShape, false, true,
                 out.data());
  for (int j = 0; j < 3; ++j)
    for (int b = 0; b < 2; ++b)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 5; ++n) {
          double sum = 0;
          for (int k = 0; k < 4; ++k)
            sum += lhs[(b * 3 + m) * 4 + k] * rhs[(j * 5 + n) * 4 + k];
          EXPECT_NEAR(out[((j * 2 + b) * 3 + m) * 5 + n], sum, 1e-12);
        }
}

TEST(HostElementwise, BroadcastsAndReportsIntegerDivisionByZero) {
  std::vector<double> a = {1, 2, 3}, b = {10, 20}, out(6);
  ASSERT_EQ(binary<double>(BinaryKind::Sub, a.data(), {1, 3}, b.data(), {2, 1},
                           out.data(), {2, 3}),
            std::nullopt);
  EXPECT_EQ(out, (std::vector<double>{-9, -8, -7, -19, -18, -17}));
  std::vector<int64_t> x = {7, -7}, y = {2, 0}, z(2);
  EXPECT_EQ(binary<int64_t>(BinaryKind::Div, x.data(), {2}, y.data(), {2},
                            z.data(), {2}),
            "integer division by zero");
  y[1] = 2;
  binary<int64_t>(BinaryKind::Div, x.data(), {2}, y.data(), {2}, z.data(), {2});
  EXPECT_EQ(z, (std::vector<int64_t>{3, -3})); // truncates toward zero
}

TEST(HostElementwise, CastsAsLoomCastSpecifies) {
  std::vector<double> in = {-2.7, 0.0, 3.9, 1.0 + 1.0 / 512};
  std::vector<int64_t> ints(4);
  cast<double, int64_t>(in.data(), 4, CastTarget::I64, ints.data());
  EXPECT_EQ(ints, (std::vector<int64_t>{-2, 0, 3, 1}));
  std::vector<uint8_t> bools(4);
  cast<double, uint8_t>(in.data(), 4, CastTarget::I1, bools.data());
  EXPECT_EQ(bools, (std::vector<uint8_t>{1, 0, 1, 1}));
  std::vector<double> bf(4);
  cast<double, double>(in.data(), 4, CastTarget::BF16, bf.data());
  EXPECT_EQ(bf[3], 1.0); // 1 + 2^-9 rounds to 1 in bf16
  std::vector<int64_t> wide = {(1ll << 32) + 5, -1};
  cast<int64_t, int64_t>(wide.data(), 2, CastTarget::I32, ints.data());
  EXPECT_EQ(ints[0], 5);
  EXPECT_EQ(ints[1], -1);
}

TEST(HostElementwise, RoundsLowPrecisionResultsToNearestEven) {
  // bf16 keeps 8 significant bits: between 1 and 1 + 2^-7 the tie
  // 1 + 2^-8 goes to the even 1, 1 + 3 * 2^-8 to the even 1 + 2^-6; f16
  // keeps 11 (ulp 2^-10 at 1), and 65520 is past its largest finite value.
  std::vector<float> f = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -1.0f - 0x1p-9f,
                          1.0f + 0x1p-11f, 65520.0f};
  std::vector<float> bf = f;
  roundToPrecision<float>(bf.data(), 5, CastTarget::BF16);
  EXPECT_EQ(bf[0], 1.0f);
  EXPECT_EQ(bf[1], 1.0f + 0x1p-6f);
  EXPECT_EQ(bf[2], -1.0f);
  std::vector<double> half(f.begin(), f.end());
  roundToPrecision<double>(half.data(), 5, CastTarget::F16);
  EXPECT_EQ(half[3], 1.0); // the tie 1 + 2^-11 goes to the even 1
  EXPECT_TRUE(std::isinf(half[4]));
  // Other targets leave the elements as they are.
  std::vector<float> same = f;
  roundToPrecision<float>(same.data(), 5, CastTarget::F32);
  EXPECT_EQ(same, f);
}

TEST(HostReduction, ReducesAnySubsetOfDims) {
  std::vector<double> in = iota(24), sum(4), max(4), mean(4);
  reduce<double>(ReduceKind::Sum, in.data(), {2, 4, 3}, {0, 2}, sum.data());
  reduce<double>(ReduceKind::Max, in.data(), {2, 4, 3}, {0, 2}, max.data());
  reduce<double>(ReduceKind::Mean, in.data(), {2, 4, 3}, {0, 2}, mean.data());
  for (int j = 0; j < 4; ++j) {
    double s = 0, m = -INFINITY;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 3; ++k) {
        s += in[i * 12 + j * 3 + k];
        m = std::max(m, in[i * 12 + j * 3 + k]);
      }
    EXPECT_DOUBLE_EQ(sum[j], s);
    EXPECT_DOUBLE_EQ(max[j], m);
    EXPECT_DOUBLE_EQ(mean[j], s / 6);
  }
  in[5] = NAN;
  reduce<double>(ReduceKind::Max, in.data(), {2, 4, 3}, {0, 2}, max.data());
  EXPECT_TRUE(std::isnan(max[1]));
}

TEST(HostShape, TransposeSlicePadConcatSplit) {
  std::vector<int64_t> in(24);
  for (int i = 0; i < 24; ++i)
    in[i] = i;
  std::vector<int64_t> t(24);
  transpose<int64_t>(in.data(), {2, 3, 4}, {2, 0, 1}, t.data());
  // t[c][a][b] = in[a][b][c]
  EXPECT_EQ(t[1 * 6 + 1 * 3 + 2], in[1 * 12 + 2 * 4 + 1]);

  std::vector<int64_t> s(4);
  slice<int64_t>(in.data(), {2, 3, 4}, {0, 1, 1}, {2, 3, 4}, {1, 2, 2},
                 s.data());
  EXPECT_EQ(s, (std::vector<int64_t>{5, 7, 17, 19}));

  std::vector<int64_t> small = {1, 2}, padded(6);
  pad<int64_t>(small.data(), {2}, {1}, {2}, {1}, padded.data());
  EXPECT_EQ(padded, (std::vector<int64_t>{0, 1, 0, 2, 0, 0}));

  std::vector<int64_t> a = {1, 2, 3, 4}, b = {5, 6}, c(6);
  concat<int64_t>({a.data(), b.data()}, {{2, 2}, {2, 1}}, 1, c.data());
  EXPECT_EQ(c, (std::vector<int64_t>{1, 2, 5, 3, 4, 6}));
  std::vector<int64_t> p(4), q(2);
  split<int64_t>(c.data(), {2, 3}, 1, {2, 1}, {p.data(), q.data()});
  EXPECT_EQ(p, a);
  EXPECT_EQ(q, b);
}

} // namespace

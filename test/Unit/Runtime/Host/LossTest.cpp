//===- LossTest.cpp - Host cross-entropy kernels --------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Loss.h"

#include "HostTestSupport.h"

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

/// Mean of -log(softmax(row)[label]) over the rows whose label is kept.
double referenceLoss(const std::vector<double> &logits, int64_t vocab,
                     const std::vector<int64_t> &labels, int64_t ignore) {
  double total = 0;
  int64_t count = 0;
  for (size_t n = 0; n < labels.size(); ++n) {
    if (labels[n] == ignore)
      continue;
    double sum = 0;
    for (int64_t v = 0; v < vocab; ++v)
      sum += std::exp(logits[n * vocab + v]);
    total -= std::log(std::exp(logits[n * vocab + labels[n]]) / sum);
    ++count;
  }
  return total / count;
}

TEST(LossTest, HandComputedLoss) {
  // Two equal logits: -log(1/2) per row.
  std::vector<double> logits{0, 0, 3, 3}, loss(1);
  std::vector<int64_t> labels{0, 1};
  ASSERT_TRUE(
      crossEntropy(logits.data(), {2, 2}, labels.data(), -100, loss.data()));
  EXPECT_NEAR(loss[0], std::log(2.0), 1e-15);
  // Large logits do not overflow: the loss of the smaller one is 1000.
  logits = {1000, 0};
  labels = {1};
  ASSERT_TRUE(
      crossEntropy(logits.data(), {2}, labels.data(), -100, loss.data()));
  EXPECT_NEAR(loss[0], 1000.0, 1e-12);
}

TEST(LossTest, IgnoredLabelsLeaveTheMean) {
  Shape shape{2, 3, 5};
  std::vector<double> logits = randomValues(30, 120, -3, 3), loss(1);
  std::vector<int64_t> labels{4, -100, 0, 2, -100, 3};
  ASSERT_TRUE(
      crossEntropy(logits.data(), shape, labels.data(), -100, loss.data()));
  EXPECT_NEAR(loss[0], referenceLoss(logits, 5, labels, -100), 1e-14);
  // A custom ignore index inside the vocabulary ignores that class.
  labels = {4, 1, 0, 2, 1, 3};
  ASSERT_TRUE(
      crossEntropy(logits.data(), shape, labels.data(), 1, loss.data()));
  EXPECT_NEAR(loss[0], referenceLoss(logits, 5, labels, 1), 1e-14);
}

TEST(LossTest, EveryLabelIgnoredIsNaN) {
  std::vector<double> logits{1, 2, 3, 4}, loss(1);
  std::vector<int64_t> labels{-100, -100};
  ASSERT_TRUE(
      crossEntropy(logits.data(), {2, 2}, labels.data(), -100, loss.data()));
  EXPECT_TRUE(std::isnan(loss[0]));
  std::vector<double> grad(4, 7.0);
  ASSERT_TRUE(crossEntropyGrad(logits.data(), {2, 2}, labels.data(), 1.0, -100,
                               grad.data()));
  EXPECT_EQ(grad, (std::vector<double>{0, 0, 0, 0}));
}

TEST(LossTest, OutOfRangeLabelsAreErrors) {
  std::vector<double> logits(6), out(6);
  std::vector<int64_t> labels{0, 3};
  Status status =
      crossEntropy(logits.data(), {2, 3}, labels.data(), -100, out.data());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "label 3 at index 1 is outside [0, 3) and is not "
                              "the ignore index -100");
  labels = {-1, 0};
  status = crossEntropyGrad(logits.data(), {2, 3}, labels.data(), 1.0, -100,
                            out.data());
  EXPECT_EQ(status.message(), "label -1 at index 0 is outside [0, 3) and is "
                              "not the ignore index -100");
}

TEST(LossTest, GradientMatchesFiniteDifferences) {
  Shape shape{3, 2, 4};
  std::vector<double> logits = randomValues(24, 121, -2, 2);
  std::vector<int64_t> labels{3, 0, -100, 1, 2, 2};
  double dloss = 1.7;
  auto loss = [&](const std::vector<double> &x) {
    std::vector<double> out(1);
    EXPECT_TRUE(crossEntropy(x.data(), shape, labels.data(), -100, out.data()));
    return dloss * out[0];
  };
  std::vector<double> grad(24);
  ASSERT_TRUE(crossEntropyGrad(logits.data(), shape, labels.data(), dloss, -100,
                               grad.data()));
  expectAllClose(grad, numericGradient(loss, logits), kGradTolerance);
  // The ignored row (position 2) gets exactly zero.
  for (int64_t v = 0; v < 4; ++v)
    EXPECT_EQ(grad[2 * 4 + v], 0.0);
}

TEST(LossTest, FloatKernelsAgreeWithDouble) {
  Shape shape{4, 50};
  std::vector<double> logits = randomValues(200, 122, -8, 8), loss(1),
                      grad(200);
  std::vector<float> logitsf = toFloat(logits), lossf(1), gradf(200);
  std::vector<int64_t> labels{49, 0, -100, 17};
  ASSERT_TRUE(
      crossEntropy(logits.data(), shape, labels.data(), -100, loss.data()));
  ASSERT_TRUE(
      crossEntropy(logitsf.data(), shape, labels.data(), -100, lossf.data()));
  expectAllClose(lossf, loss, 1e-6, "cross_entropy");
  ASSERT_TRUE(crossEntropyGrad(logits.data(), shape, labels.data(), 0.5, -100,
                               grad.data()));
  ASSERT_TRUE(crossEntropyGrad(logitsf.data(), shape, labels.data(), 0.5f, -100,
                               gradf.data()));
  expectAllClose(gradf, grad, 1e-6, "cross_entropy_grad");
}

/// The local forms over column blocks of the log-probabilities add up to
/// the global loss and concatenate to the global gradient (what a
/// vocab-parallel partition relies on).
TEST(LossTest, VocabBlocksOfLogProbabilitiesAddUp) {
  const int64_t rows = 4, vocab = 6, block = 3;
  std::vector<double> logits = randomValues(rows * vocab, 321, -3, 3);
  std::vector<int64_t> labels{5, -100, 0, 3};
  // Log-probabilities, row by row.
  std::vector<double> logp(logits.size());
  for (int64_t n = 0; n < rows; ++n) {
    double sum = 0;
    for (int64_t v = 0; v < vocab; ++v)
      sum += std::exp(logits[n * vocab + v]);
    for (int64_t v = 0; v < vocab; ++v)
      logp[n * vocab + v] = logits[n * vocab + v] - std::log(sum);
  }
  std::vector<double> mean(1), sum(1), grad(rows * vocab);
  ASSERT_TRUE(crossEntropy(logits.data(), {rows, vocab}, labels.data(), -100,
                           mean.data()));
  ASSERT_TRUE(crossEntropyLocal(logits.data(), {rows, vocab}, labels.data(),
                                -100, /*offset=*/nullptr, /*sum=*/true,
                                sum.data()));
  EXPECT_NEAR(sum[0], 3 * mean[0], 1e-13);
  ASSERT_TRUE(crossEntropyGrad(logits.data(), {rows, vocab}, labels.data(),
                               0.5, -100, grad.data()));

  double partialMeans = 0, partialSums = 0;
  for (int64_t first = 0; first < vocab; first += block) {
    std::vector<double> z(rows * block), part(1), gradBlock(rows * block);
    for (int64_t n = 0; n < rows; ++n)
      for (int64_t v = 0; v < block; ++v)
        z[n * block + v] = logp[n * vocab + first + v];
    ASSERT_TRUE(crossEntropyLocal(z.data(), {rows, block}, labels.data(), -100,
                                  &first, /*sum=*/false, part.data()));
    partialMeans += part[0];
    ASSERT_TRUE(crossEntropyLocal(z.data(), {rows, block}, labels.data(), -100,
                                  &first, /*sum=*/true, part.data()));
    partialSums += part[0];
    // The summed form takes dloss / count (3 labelled rows).
    ASSERT_TRUE(crossEntropyGradLocal(z.data(), {rows, block}, labels.data(),
                                      0.5 / 3, -100, &first, /*sum=*/true,
                                      gradBlock.data()));
    for (int64_t n = 0; n < rows; ++n)
      for (int64_t v = 0; v < block; ++v)
        EXPECT_NEAR(gradBlock[n * block + v], grad[n * vocab + first + v],
                    1e-15)
            << "row " << n << " column " << first + v;
  }
  EXPECT_NEAR(partialMeans, mean[0], 1e-14);
  EXPECT_NEAR(partialSums, sum[0], 1e-13);
}

TEST(LossTest, LabelCountSkipsTheIgnoreIndex) {
  std::vector<int64_t> labels{4, -100, 0, -100, 7};
  float count;
  labelCount(labels.data(), 5, -100, &count);
  EXPECT_EQ(count, 3.0f);
  double none;
  labelCount(labels.data(), 0, -100, &none);
  EXPECT_EQ(none, 0.0);
}

} // namespace

//===- KernelsTest.cpp - Every CUDA kernel against its host kernel --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each case runs a CUDA kernel and the host kernel of the same op
// (lib/Runtime/Host, the interpreter's) on the same random inputs, in f32
// and f64, and compares within CUDATestSupport.h's tolerances. Shapes are
// small but exercise broadcasting, non-last axes, GQA, causal masks with
// Sq != Skv, ignore indices and vocabulary blocks. Without a GPU every case
// skips.
//
//===----------------------------------------------------------------------===//

#include "CUDATestSupport.h"

#include "loom/Runtime/CUDA/Activation.h"
#include "loom/Runtime/CUDA/Attention.h"
#include "loom/Runtime/CUDA/Elementwise.h"
#include "loom/Runtime/CUDA/Embedding.h"
#include "loom/Runtime/CUDA/Loss.h"
#include "loom/Runtime/CUDA/LossScaling.h"
#include "loom/Runtime/CUDA/Matmul.h"
#include "loom/Runtime/CUDA/Normalization.h"
#include "loom/Runtime/CUDA/Optimizer.h"
#include "loom/Runtime/CUDA/Random.h"
#include "loom/Runtime/CUDA/Reduction.h"
#include "loom/Runtime/CUDA/Rope.h"
#include "loom/Runtime/CUDA/Shape.h"
#include "loom/Runtime/CUDA/Softmax.h"
#include "loom/Runtime/CUDA/Workspace.h"
#include "loom/Runtime/Host/Activation.h"
#include "loom/Runtime/Host/Attention.h"
#include "loom/Runtime/Host/Elementwise.h"
#include "loom/Runtime/Host/Embedding.h"
#include "loom/Runtime/Host/Loss.h"
#include "loom/Runtime/Host/LossScaling.h"
#include "loom/Runtime/Host/Matmul.h"
#include "loom/Runtime/Host/Normalization.h"
#include "loom/Runtime/Host/Optimizer.h"
#include "loom/Runtime/Host/Random.h"
#include "loom/Runtime/Host/Reduction.h"
#include "loom/Runtime/Host/Rope.h"
#include "loom/Runtime/Host/Shape.h"
#include "loom/Runtime/Host/Softmax.h"
#include "loom/Runtime/Support/Transfers.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace loom::runtime;
using namespace loom::runtime::cuda::test;
template <typename T> using Buf = DeviceBuffer<T>;

namespace {

template <typename T> class CudaKernelsTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaKernelsTest, FloatTypes);

//===----------------------------------------------------------------------===//
// Elementwise and activations
//===----------------------------------------------------------------------===//

TYPED_TEST(CudaKernelsTest, BinaryBroadcastsLikeTheHost) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape lhsShape = {4, 1, 6}, rhsShape = {3, 1}, outShape = {4, 3, 6};
  auto lhs = randomVector<T>(24, 1), rhs = randomVector<T>(3, 2, 0.5, 2.0);
  for (auto kind : {host::BinaryKind::Add, host::BinaryKind::Sub,
                    host::BinaryKind::Mul, host::BinaryKind::Div}) {
    std::vector<T> expected(72);
    ASSERT_FALSE(host::binary<T>(kind, lhs.data(), lhsShape, rhs.data(),
                                 rhsShape, expected.data(), outShape));
    Buf<T> dl(lhs), dr(rhs), out(72);
    cuda::binary<T>(nullptr, kind, dl.get(), lhsShape, dr.get(), rhsShape,
                    out.get(), outShape);
    // One operation on the same two numbers: bit-identical.
    EXPECT_EQ(out.download(), expected);
  }
}

TEST(CudaKernelsIntTest, IntegerDivisionByZeroIsRecorded) {
  LOOM_REQUIRE_CUDA_DEVICE();
  std::vector<int64_t> lhs = {7, -9, 4}, rhs = {2, 0, 3};
  Buf<int64_t> dl(lhs), dr(rhs), out(3);
  Buf<cuda::DeviceError> slot(1);
  cuda::binary<int64_t>(nullptr, host::BinaryKind::Div, dl.get(), {3}, dr.get(),
                        {3}, out.get(), {3}, {slot.get(), 5});
  cuda::DeviceError error = slot.download()[0];
  EXPECT_EQ(error.tag, 5u);
  EXPECT_EQ(cuda::describeDeviceError(error), "integer division by zero");
  std::vector<int64_t> values = out.download();
  EXPECT_EQ(values[0], 3);
  EXPECT_EQ(values[2], 1);
}

TYPED_TEST(CudaKernelsTest, UnaryScaleAndCast) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  auto in = randomVector<T>(50, 3, 0.1, 3.0);
  Buf<T> din(in), out(50);
  for (auto kind :
       {host::UnaryKind::Neg, host::UnaryKind::Exp, host::UnaryKind::Log,
        host::UnaryKind::Sqrt, host::UnaryKind::Rsqrt, host::UnaryKind::Tanh,
        host::UnaryKind::Sigmoid}) {
    std::vector<T> expected(50);
    host::unary<T>(kind, in.data(), 50, expected.data());
    cuda::unary<T>(nullptr, kind, din.get(), 50, out.get());
    expectClose(out.download(), expected, "unary");
  }
  std::vector<T> scaled(50);
  host::scale<T>(in.data(), 50, -2.5, scaled.data());
  cuda::scale<T>(nullptr, din.get(), 50, -2.5, out.get());
  EXPECT_EQ(out.download(), scaled);

  auto wide = randomVector<T>(50, 4, -300.0, 300.0);
  Buf<T> dwide(wide);
  for (auto target :
       {host::CastTarget::BF16, host::CastTarget::F16, host::CastTarget::F32}) {
    std::vector<T> expected(50);
    host::cast<T, T>(wide.data(), 50, target, expected.data());
    cuda::cast<T, T>(nullptr, dwide.get(), 50, target, out.get());
    EXPECT_EQ(out.download(), expected);
  }
  std::vector<int64_t> ints(50);
  host::cast<T, int64_t>(wide.data(), 50, host::CastTarget::I32, ints.data());
  Buf<int64_t> dints(50);
  cuda::cast<T, int64_t>(nullptr, dwide.get(), 50, host::CastTarget::I32,
                         dints.get());
  EXPECT_EQ(dints.download(), ints);
}

TYPED_TEST(CudaKernelsTest, ActivationsAndTheirGradients) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape shape = {5, 13};
  auto x = randomVector<T>(65, 5, -4.0, 4.0), dy = randomVector<T>(65, 6);
  Buf<T> dx(x), ddy(dy), out(65);
  std::vector<T> expected(65);
  for (auto approx :
       {host::GeluApproximation::None, host::GeluApproximation::Tanh}) {
    host::gelu<T>(x.data(), shape, approx, expected.data());
    cuda::gelu<T>(nullptr, dx.get(), shape, approx, out.get());
    expectClose(out.download(), expected, "gelu");
    host::geluGrad<T>(dy.data(), x.data(), shape, approx, expected.data());
    cuda::geluGrad<T>(nullptr, ddy.get(), dx.get(), shape, approx, out.get());
    expectClose(out.download(), expected, "gelu_grad");
  }
  host::silu<T>(x.data(), shape, expected.data());
  cuda::silu<T>(nullptr, dx.get(), shape, out.get());
  expectClose(out.download(), expected, "silu");
  host::siluGrad<T>(dy.data(), x.data(), shape, expected.data());
  cuda::siluGrad<T>(nullptr, ddy.get(), dx.get(), shape, out.get());
  expectClose(out.download(), expected, "silu_grad");
  host::relu<T>(x.data(), shape, expected.data());
  cuda::relu<T>(nullptr, dx.get(), shape, out.get());
  EXPECT_EQ(out.download(), expected);
  host::reluGrad<T>(dy.data(), x.data(), shape, expected.data());
  cuda::reluGrad<T>(nullptr, ddy.get(), dx.get(), shape, out.get());
  EXPECT_EQ(out.download(), expected);
}

//===----------------------------------------------------------------------===//
// Softmax, normalization, loss, reductions
//===----------------------------------------------------------------------===//

TYPED_TEST(CudaKernelsTest, SoftmaxFamilyOnEveryAxis) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape shape = {3, 130, 7};
  size_t n = 3 * 130 * 7;
  auto x = randomVector<T>(n, 7, -5.0, 5.0), g = randomVector<T>(n, 8);
  Buf<T> dx(x), dg(g), out(n);
  std::vector<T> expected(n);
  for (int64_t axis : {0, 1, 2}) {
    host::softmax<T>(x.data(), shape, axis, expected.data());
    cuda::softmax<T>(nullptr, dx.get(), shape, axis, out.get());
    expectClose(out.download(), expected, "softmax");
    host::logSoftmax<T>(x.data(), shape, axis, expected.data());
    cuda::logSoftmax<T>(nullptr, dx.get(), shape, axis, out.get());
    expectClose(out.download(), expected, "log_softmax");
    host::softmaxGrad<T>(x.data(), g.data(), shape, axis, expected.data());
    cuda::softmaxGrad<T>(nullptr, dx.get(), dg.get(), shape, axis, out.get());
    expectClose(out.download(), expected, "softmax_grad");
    host::logSoftmaxGrad<T>(x.data(), g.data(), shape, axis, expected.data());
    cuda::logSoftmaxGrad<T>(nullptr, dx.get(), dg.get(), shape, axis,
                            out.get());
    expectClose(out.download(), expected, "log_softmax_grad");
  }
}

TYPED_TEST(CudaKernelsTest, LayerAndRmsNormWithAndWithoutParameters) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  // 74 rows: the parameter gradients sum them in chunks of 32 (two whole
  // chunks and a partial one).
  Shape shape = {2, 37, 300};
  size_t n = 2 * 37 * 300;
  auto x = randomVector<T>(n, 9, -3.0, 3.0), dy = randomVector<T>(n, 10);
  auto gamma = randomVector<T>(300, 11, 0.5, 1.5);
  auto beta = randomVector<T>(300, 12);
  Buf<T> dx(x), ddy(dy), dgamma(gamma), dbeta(beta), out(n), pg(300), pb(300);
  std::vector<T> expected(n), eg(300), eb(300);
  for (bool affine : {false, true}) {
    const T *hg = affine ? gamma.data() : nullptr;
    const T *hb = affine ? beta.data() : nullptr;
    T *cg = affine ? dgamma.get() : nullptr;
    T *cb = affine ? dbeta.get() : nullptr;
    host::layerNorm<T>(x.data(), shape, hg, hb, 1e-5, expected.data());
    cuda::layerNorm<T>(nullptr, dx.get(), shape, cg, cb, 1e-5, out.get());
    expectClose(out.download(), expected, "layer_norm");
    host::rmsNorm<T>(x.data(), shape, hg, 1e-6, expected.data());
    cuda::rmsNorm<T>(nullptr, dx.get(), shape, cg, 1e-6, out.get());
    expectClose(out.download(), expected, "rms_norm");

    host::layerNormGrad<T>(dy.data(), x.data(), shape, hg, 1e-5,
                           expected.data(), affine ? eg.data() : nullptr,
                           affine ? eb.data() : nullptr);
    cuda::layerNormGrad<T>(nullptr, ddy.get(), dx.get(), shape, cg, 1e-5,
                           out.get(), affine ? pg.get() : nullptr,
                           affine ? pb.get() : nullptr);
    expectClose(out.download(), expected, "layer_norm_grad dx");
    if (affine) {
      expectClose(pg.download(), eg, "layer_norm_grad dgamma");
      expectClose(pb.download(), eb, "layer_norm_grad dbeta");
    }
    host::rmsNormGrad<T>(dy.data(), x.data(), shape, hg, 1e-6, expected.data(),
                         affine ? eg.data() : nullptr);
    cuda::rmsNormGrad<T>(nullptr, ddy.get(), dx.get(), shape, cg, 1e-6,
                         out.get(), affine ? pg.get() : nullptr);
    expectClose(out.download(), expected, "rms_norm_grad dx");
    if (affine)
      expectClose(pg.download(), eg, "rms_norm_grad dgamma");
  }
}

TYPED_TEST(CudaKernelsTest, CrossEntropyWithIgnoreIndexSumAndOffset) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape shape = {2, 6, 300};
  size_t n = 2 * 6 * 300;
  auto logits = randomVector<T>(n, 13, -6.0, 6.0);
  auto labels = randomInts(12, 14, 0, 299);
  labels[3] = -100; // Ignored.
  labels[7] = -100;
  T dloss = static_cast<T>(0.75);
  Buf<T> dlogits(logits), loss(1), grad(n), ddloss(std::vector<T>{dloss});
  Buf<int64_t> dlabels(labels);
  std::vector<T> expected(n), expectedLoss(1);
  int64_t blockOffset = 150;
  for (const int64_t *offset : {static_cast<const int64_t *>(nullptr),
                                static_cast<const int64_t *>(&blockOffset)}) {
    for (bool sum : {false, true}) {
      ASSERT_TRUE(host::crossEntropyLocal<T>(logits.data(), shape,
                                             labels.data(), -100, offset, sum,
                                             expectedLoss.data())
                      .ok());
      cuda::crossEntropyLocal<T>(nullptr, dlogits.get(), shape, dlabels.get(),
                                 -100, offset, sum, loss.get());
      expectClose(loss.download(), expectedLoss, "cross_entropy");
      ASSERT_TRUE(host::crossEntropyGradLocal<T>(logits.data(), shape,
                                                 labels.data(), dloss, -100,
                                                 offset, sum, expected.data())
                      .ok());
      cuda::crossEntropyGradLocal<T>(nullptr, dlogits.get(), shape,
                                     dlabels.get(), ddloss.get(), -100, offset,
                                     sum, grad.get());
      expectClose(grad.download(), expected, "cross_entropy_grad");
    }
  }
  host::labelCount<T>(labels.data(), 12, -100, expectedLoss.data());
  cuda::labelCount<T>(nullptr, dlabels.get(), 12, -100, loss.get());
  EXPECT_EQ(loss.download(), expectedLoss);
}

TYPED_TEST(CudaKernelsTest, LossScalingMatchesHost) {
  LOOM_REQUIRE_CUDA_DEVICE();
  using T = TypeParam;
  // More elements than one block's threads, non-finite ones spread out.
  std::vector<T> g(1000);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = static_cast<T>(0.001 * double(i) - 0.3);
  g[17] = std::numeric_limits<T>::infinity();
  g[512] = -std::numeric_limits<T>::infinity();
  g[999] = std::numeric_limits<T>::quiet_NaN();
  Buf<T> dg(g), count(1);
  T expected = 0;
  host::nonfiniteCount<T>(g.data(), 1000, &expected);
  cuda::nonfiniteCount<T>(nullptr, dg.get(), 1000, count.get());
  EXPECT_EQ(count.download()[0], expected);
  EXPECT_EQ(expected, T(3));

  std::vector<T> other(1000, T(2));
  Buf<T> dother(other), out(1000);
  cuda::selectWhole<T, T>(nullptr, count.get(), dg.get(), dother.get(), 1000,
                          out.get());
  std::vector<T> chosen = out.download();
  EXPECT_TRUE(std::isinf(chosen[17]) && chosen[1] == g[1]);
  Buf<T> zero(std::vector<T>{T(0)});
  cuda::selectWhole<T, T>(nullptr, zero.get(), dg.get(), dother.get(), 1000,
                          out.get());
  EXPECT_EQ(out.download(), other);
  Buf<int64_t> step(std::vector<int64_t>{4}), next(std::vector<int64_t>{5}),
      kept(1);
  cuda::selectWhole<T, int64_t>(nullptr, count.get(), step.get(), next.get(), 1,
                                kept.get());
  EXPECT_EQ(kept.download()[0], 4);

  for (T nonfinite : {T(0), T(3)})
    for (int64_t tracker : {int64_t(0), int64_t(1999)}) {
      T hostScale = 0;
      int64_t hostTracker = -1;
      host::updateLossScale<T>(T(65536), tracker, nonfinite, 2.0, 0.5, 2000,
                               &hostScale, &hostTracker);
      Buf<T> scale(std::vector<T>{T(65536)}), found(std::vector<T>{nonfinite}),
          newScale(1);
      Buf<int64_t> dtracker(std::vector<int64_t>{tracker}), newTracker(1);
      cuda::updateLossScale<T>(nullptr, scale.get(), dtracker.get(),
                               found.get(), 2.0, 0.5, 2000, newScale.get(),
                               newTracker.get());
      EXPECT_EQ(newScale.download()[0], hostScale);
      EXPECT_EQ(newTracker.download()[0], hostTracker);
    }
}

TEST(CudaKernelsIntTest, LabelOutOfRangeIsRecordedAsTheHostWordsIt) {
  LOOM_REQUIRE_CUDA_DEVICE();
  std::vector<double> logits(2 * 4, 0.5);
  std::vector<int64_t> labels = {1, 9};
  std::vector<double> hostLoss(1);
  host::Status expected =
      host::crossEntropyLocal<double>(logits.data(), {2, 4}, labels.data(),
                                      -100, nullptr, false, hostLoss.data());
  ASSERT_FALSE(expected.ok());
  Buf<double> dlogits(logits), loss(1);
  Buf<int64_t> dlabels(labels);
  Buf<cuda::DeviceError> slot(1);
  cuda::crossEntropyLocal<double>(nullptr, dlogits.get(), {2, 4}, dlabels.get(),
                                  -100, nullptr, false, loss.get(),
                                  {slot.get(), 2});
  cuda::DeviceError error = slot.download()[0];
  EXPECT_EQ(error.tag, 2u);
  EXPECT_EQ(cuda::describeDeviceError(error), expected.message());
}

TYPED_TEST(CudaKernelsTest, ReductionsOverSeveralAxes) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape shape = {4, 5, 300};
  size_t n = 4 * 5 * 300;
  auto x = randomVector<T>(n, 15, -2.0, 2.0);
  x[17] = std::numeric_limits<T>::quiet_NaN();
  Buf<T> dx(x);
  for (std::vector<int64_t> axes :
       {std::vector<int64_t>{2}, std::vector<int64_t>{0, 2},
        std::vector<int64_t>{1}, std::vector<int64_t>{0, 1, 2}}) {
    int64_t outCount = 1;
    for (size_t d = 0; d < shape.size(); ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end())
        outCount *= shape[d];
    for (auto kind : {host::ReduceKind::Sum, host::ReduceKind::Mean,
                      host::ReduceKind::Max}) {
      std::vector<T> expected(outCount);
      host::reduce<T>(kind, x.data(), shape, axes, expected.data());
      Buf<T> out(outCount);
      cuda::reduce<T>(nullptr, kind, dx.get(), shape, axes, out.get());
      // Host sums in T; the device in double: f32 gets a looser bound.
      expectClose(out.download(), expected, "reduce",
                  std::is_same_v<T, float> ? 1e-4 : 1e-12);
    }
  }
  std::vector<int64_t> ints = randomInts(60, 16, -50, 50), expected(5);
  host::reduce<int64_t>(host::ReduceKind::Max, ints.data(), {4, 5, 3}, {0, 2},
                        expected.data());
  Buf<int64_t> dints(ints), out(5);
  cuda::reduce<int64_t>(nullptr, host::ReduceKind::Max, dints.get(), {4, 5, 3},
                        {0, 2}, out.get());
  EXPECT_EQ(out.download(), expected);
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

TYPED_TEST(CudaKernelsTest, ShapeOpsMoveTheSameElements) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape shape = {3, 4, 5};
  auto x = randomVector<T>(60, 17);
  Buf<T> dx(x);
  {
    std::vector<T> expected(60);
    host::transpose<T>(x.data(), shape, {2, 0, 1}, expected.data());
    Buf<T> out(60);
    cuda::transpose<T>(nullptr, dx.get(), shape, {2, 0, 1}, out.get());
    EXPECT_EQ(out.download(), expected);
  }
  {
    std::vector<T> expected(2 * 2 * 2);
    host::slice<T>(x.data(), shape, {1, 0, 1}, {3, 4, 5}, {1, 2, 2},
                   expected.data());
    Buf<T> out(8);
    cuda::slice<T>(nullptr, dx.get(), shape, {1, 0, 1}, {3, 4, 5}, {1, 2, 2},
                   out.get());
    EXPECT_EQ(out.download(), expected);
  }
  {
    // [3, 4, 5] padded low {1,0,2}, high {0,1,0}, interior {0,1,0}.
    size_t count = 4 * (4 + 3 + 1) * 7;
    std::vector<T> expected(count);
    host::pad<T>(x.data(), shape, {1, 0, 2}, {0, 1, 0}, {0, 1, 0},
                 expected.data());
    Buf<T> out(count);
    cuda::pad<T>(nullptr, dx.get(), shape, {1, 0, 2}, {0, 1, 0}, {0, 1, 0},
                 out.get());
    EXPECT_EQ(out.download(), expected);
  }
  {
    auto y = randomVector<T>(3 * 2 * 5, 18);
    Buf<T> dy(y);
    std::vector<T> expected(3 * 6 * 5);
    host::concat<T>({x.data(), y.data()}, {shape, {3, 2, 5}}, 1,
                    expected.data());
    Buf<T> out(90);
    cuda::concat<T>(nullptr, {dx.get(), dy.get()}, {shape, {3, 2, 5}}, 1,
                    out.get());
    EXPECT_EQ(out.download(), expected);
  }
  {
    std::vector<T> e0(3 * 4 * 2), e1(3 * 4 * 3);
    host::split<T>(x.data(), shape, 2, {2, 3}, {e0.data(), e1.data()});
    Buf<T> o0(24), o1(36);
    cuda::split<T>(nullptr, dx.get(), shape, 2, {2, 3}, {o0.get(), o1.get()});
    EXPECT_EQ(o0.download(), e0);
    EXPECT_EQ(o1.download(), e1);
  }
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

TYPED_TEST(CudaKernelsTest, MatmulBatchesBroadcastsAndTransposes) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  cublasHandle_t handle;
  LOOM_CUBLAS_CHECK(cublasCreate(&handle));
  LOOM_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
  struct Case {
    Shape lhs, rhs;
    bool tl, tr;
  };
  for (const Case &c : std::vector<Case>{
           {{2, 3, 4, 5}, {5, 6}, false, false},      // Folds into M.
           {{2, 3, 4, 5}, {6, 5}, false, true},       // Linear layer, W^T.
           {{2, 3, 5, 4}, {2, 3, 5, 6}, true, false}, // Strided batches.
           {{2, 1, 4, 5}, {3, 5, 6}, false, false},   // Irregular broadcast.
           {{4, 5}, {2, 5, 6}, false, false},         // Left broadcast.
       }) {
    Shape out = *host::matmulResultShape(c.lhs, c.rhs, c.tl, c.tr);
    auto lhs = randomVector<T>(numElements(c.lhs), 19);
    auto rhs = randomVector<T>(numElements(c.rhs), 20);
    std::vector<T> expected(numElements(out));
    host::matmul<T>(lhs.data(), c.lhs, rhs.data(), c.rhs, c.tl, c.tr,
                    expected.data());
    Buf<T> dl(lhs), dr(rhs), dout(expected.size());
    cuda::matmul<T>(handle, dl.get(), c.lhs, dr.get(), c.rhs, c.tl, c.tr,
                    dout.get());
    expectClose(dout.download(), expected, "matmul");
  }
  LOOM_CUBLAS_CHECK(cublasDestroy(handle));
}

// Operands holding bf16 or f16 values (as a mixed-precision program's are),
// multiplied with 16-bit inputs and f32 sums (the tensor cores on a GPU):
// every product is exact, so the result is the host's f32 GEMM of the same
// values up to summation order, and on the CUDA emulator (OpenBLAS's order,
// as the host's) bit for bit. An f64 run is the f64 GEMM. The scratch is
// reused by every case, growing from the smallest.
TYPED_TEST(CudaKernelsTest, MatmulOfLowPrecisionValuesOnTensorCores) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  cublasHandle_t handle;
  LOOM_CUBLAS_CHECK(cublasCreate(&handle));
  LOOM_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
  cuda::GemmScratch scratch;
  struct Case {
    Shape lhs, rhs;
    bool tl, tr;
    host::CastTarget type;
  };
  for (const Case &c : std::vector<Case>{
           {{2, 3}, {3, 4}, false, false, host::CastTarget::BF16},
           {{2, 3, 4, 5}, {6, 5}, false, true, host::CastTarget::BF16},
           {{2, 3, 5, 4}, {2, 3, 5, 6}, true, false, host::CastTarget::BF16},
           {{2, 1, 4, 5}, {3, 5, 6}, false, false, host::CastTarget::BF16},
           {{2, 3, 4, 5}, {6, 5}, false, true, host::CastTarget::F16},
           {{2, 3, 5, 4}, {2, 3, 5, 6}, true, false, host::CastTarget::F16},
       }) {
    Shape out = *host::matmulResultShape(c.lhs, c.rhs, c.tl, c.tr);
    // Magnitudes across f16's normal and subnormal range.
    auto lhs = randomVector<T>(numElements(c.lhs), 41, -3.0, 3.0);
    auto rhs = randomVector<T>(numElements(c.rhs), 42, -3.0, 3.0);
    lhs[0] = static_cast<T>(3e-6); // An f16 subnormal.
    host::roundToPrecision(lhs.data(), numElements(c.lhs), c.type);
    host::roundToPrecision(rhs.data(), numElements(c.rhs), c.type);
    std::vector<T> expected(numElements(out));
    host::matmul<T>(lhs.data(), c.lhs, rhs.data(), c.rhs, c.tl, c.tr,
                    expected.data());
    Buf<T> dl(lhs), dr(rhs), dout(expected.size());
    cuda::matmulLowPrecision<T>(handle, scratch, c.type, dl.get(), c.lhs,
                                dr.get(), c.rhs, c.tl, c.tr, dout.get());
    std::vector<T> actual = dout.download();
    expectClose(actual, expected, "matmul of low-precision values");
#ifdef LOOM_CUDA_EMULATOR
    EXPECT_EQ(actual, expected) << "the emulator sums as the host does";
#endif
  }
  cublasMath_t mode;
  LOOM_CUBLAS_CHECK(cublasGetMathMode(handle, &mode));
  EXPECT_EQ(mode, CUBLAS_PEDANTIC_MATH) << "the handle's mode is restored";
  LOOM_CUBLAS_CHECK(cublasDestroy(handle));
}

/// The value of a bf16 or IEEE binary16 bit pattern (finite ones).
float widenSixteenBits(uint16_t bits, host::CastTarget type) {
  if (type == host::CastTarget::BF16) {
    uint32_t word = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &word, sizeof value);
    return value;
  }
  float sign = bits & 0x8000u ? -1.0f : 1.0f;
  int exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
  return exponent == 0 ? sign * std::ldexp(static_cast<float>(fraction), -24)
                       : sign * std::ldexp(static_cast<float>(fraction + 1024),
                                           exponent - 25);
}

TEST(CudaKernels16BitTest, WideningIsExactAndPackingsInverse) {
  // Every one of the 2^16 patterns of each type. The finite non-negative
  // ones (0x0000 up to the first infinity pattern) must widen to values
  // that are bf16 (f16) values (fixed points of the host's rounding), in
  // strictly increasing order: as many patterns as such values exist, so
  // the map is the only order-preserving one, the right one. Negative
  // patterns mirror them, infinities and NaNs stay what they are, f64 gets
  // the same values, and packing gives back every non-NaN pattern.
  LOOM_REQUIRE_CUDA_DEVICE();
  std::vector<uint16_t> patterns(1 << 16);
  for (size_t i = 0; i < patterns.size(); ++i)
    patterns[i] = static_cast<uint16_t>(i);
  for (host::CastTarget type :
       {host::CastTarget::BF16, host::CastTarget::F16}) {
    SCOPED_TRACE(type == host::CastTarget::BF16 ? "bf16" : "f16");
    uint16_t infinity = type == host::CastTarget::BF16 ? 0x7f80u : 0x7c00u;
    Buf<uint16_t> bits(patterns), repacked(patterns.size());
    Buf<float> wideFloat(patterns.size());
    Buf<double> wideDouble(patterns.size());
    cuda::widenLowPrecision(nullptr, bits.get(), patterns.size(), type,
                            wideFloat.get());
    cuda::widenLowPrecision(nullptr, bits.get(), patterns.size(), type,
                            wideDouble.get());
    cuda::packLowPrecision(nullptr, wideFloat.get(), patterns.size(), type,
                           repacked.get());
    std::vector<float> values = wideFloat.download();
    std::vector<double> doubles = wideDouble.download();
    std::vector<uint16_t> packed = repacked.download();
    for (uint32_t p = 0; p < patterns.size(); ++p) {
      float v = values[p];
      uint32_t magnitude = p & 0x7fffu;
      if (magnitude > infinity) {
        ASSERT_TRUE(std::isnan(v)) << "pattern " << p;
        ASSERT_TRUE(std::isnan(doubles[p])) << "pattern " << p;
        continue;
      }
      ASSERT_EQ(doubles[p], static_cast<double>(v)) << "pattern " << p;
      ASSERT_EQ(packed[p], p) << "pattern " << p << " widened to " << v;
      ASSERT_EQ(std::signbit(v), (p & 0x8000u) != 0) << "pattern " << p;
      ASSERT_EQ(v, -values[p ^ 0x8000u]) << "pattern " << p;
      if (magnitude == infinity) {
        ASSERT_TRUE(std::isinf(v)) << "pattern " << p;
        continue;
      }
      float rounded = v;
      host::roundToPrecision(&rounded, 1, type);
      ASSERT_EQ(rounded, v) << "pattern " << p << " is not a value of its type";
      if (p > 0 && p < 0x8000u) // Increasing over the non-negative ones.
        ASSERT_LT(values[p - 1], v) << "pattern " << p << " out of order";
    }
  }
}

TEST(CudaKernels16BitTest, MatmulOf16BitBuffersReadsThemWithoutPacking) {
  LOOM_REQUIRE_CUDA_DEVICE();
  cublasHandle_t handle;
  LOOM_CUBLAS_CHECK(cublasCreate(&handle));
  LOOM_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
  struct Case {
    Shape lhs, rhs;
    bool tl, tr;
    host::CastTarget type;
  };
  for (const Case &c : std::vector<Case>{
           {{2, 3}, {3, 4}, false, false, host::CastTarget::BF16},
           {{2, 3, 4, 5}, {6, 5}, false, true, host::CastTarget::BF16},
           {{2, 3, 5, 4}, {2, 3, 5, 6}, true, false, host::CastTarget::BF16},
           {{2, 1, 4, 5}, {3, 5, 6}, false, false, host::CastTarget::BF16},
           {{2, 3, 4, 5}, {6, 5}, false, true, host::CastTarget::F16},
           {{2, 1, 5, 4}, {3, 5, 6}, true, false, host::CastTarget::F16},
       }) {
    Shape outShape = *host::matmulResultShape(c.lhs, c.rhs, c.tl, c.tr);
    int64_t lhsCount = numElements(c.lhs), rhsCount = numElements(c.rhs),
            outCount = numElements(outShape);
    auto lhs = randomVector<float>(lhsCount, 43, -3.0, 3.0);
    auto rhs = randomVector<float>(rhsCount, 44, -3.0, 3.0);
    host::roundToPrecision(lhs.data(), lhsCount, c.type);
    host::roundToPrecision(rhs.data(), rhsCount, c.type);
    std::vector<float> expected(outCount);
    host::matmul<float>(lhs.data(), c.lhs, rhs.data(), c.rhs, c.tl, c.tr,
                        expected.data());
    std::vector<float> expectedRounded = expected;
    host::roundToPrecision(expectedRounded.data(), outCount, c.type);
    // The 16-bit buffers a program would hold (the packing kernel is exact
    // on values that already are bf16/f16 ones).
    Buf<float> wideLhs(lhs), wideRhs(rhs);
    Buf<uint16_t> dl(lhsCount), dr(rhsCount), narrowOut(outCount);
    cuda::packLowPrecision(nullptr, wideLhs.get(), lhsCount, c.type, dl.get());
    cuda::packLowPrecision(nullptr, wideRhs.get(), rhsCount, c.type, dr.get());
    Buf<float> wideOut(outCount);
    cuda::matmulOf16BitBuffers(handle, c.type, dl.get(), c.lhs, dr.get(), c.rhs,
                               c.tl, c.tr, wideOut.get());
    cuda::matmulOf16BitBuffers(handle, c.type, dl.get(), c.lhs, dr.get(), c.rhs,
                               c.tl, c.tr, narrowOut.get());
    std::vector<float> wide = wideOut.download(), narrow;
    for (uint16_t bits : narrowOut.download())
      narrow.push_back(widenSixteenBits(bits, c.type));
    expectClose(wide, expected, "f32 result of 16-bit buffers");
    // On a GPU cuBLAS may sum in another order: one rounding apart at most.
    expectClose(narrow, expectedRounded, "16-bit result of 16-bit buffers",
                c.type == host::CastTarget::BF16 ? 0x1p-7 : 0x1p-10);
#ifdef LOOM_CUDA_EMULATOR
    EXPECT_EQ(wide, expected) << "the emulator sums as the host does";
    EXPECT_EQ(narrow, expectedRounded)
        << "and rounds once to nearest even, as the host rounds";
    EXPECT_NE(narrow, wide) << "no result needed rounding: a weak case";
#endif
  }
  cublasMath_t mode;
  LOOM_CUBLAS_CHECK(cublasGetMathMode(handle, &mode));
  EXPECT_EQ(mode, CUBLAS_PEDANTIC_MATH) << "the handle's mode is restored";
  LOOM_CUBLAS_CHECK(cublasDestroy(handle));
}

//===----------------------------------------------------------------------===//
// Attention, rope, embeddings
//===----------------------------------------------------------------------===//

TYPED_TEST(CudaKernelsTest, AttentionCausalGqaAndMaskWithGradients) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  // 4 query heads over 2 key/value heads, Sq = 5 < Skv = 7, head dim 40
  // (two slots per lane), value dim 24.
  Shape q = {2, 4, 5, 40}, k = {2, 2, 7, 40}, v = {2, 2, 7, 24},
        o = {2, 4, 5, 24}, mask = {1, 4, 5, 7};
  auto hq = randomVector<T>(numElements(q), 21);
  auto hk = randomVector<T>(numElements(k), 22);
  auto hv = randomVector<T>(numElements(v), 23);
  auto hdo = randomVector<T>(numElements(o), 24);
  auto hmask = randomVector<T>(numElements(mask), 25, -2.0, 0.0);
  Buf<T> dq(hq), dk(hk), dv(hv), ddo(hdo), dmask(hmask), dout(numElements(o));
  for (bool causal : {false, true}) {
    for (bool withMask : {false, true}) {
      const T *hm = withMask ? hmask.data() : nullptr;
      const T *cm = withMask ? dmask.get() : nullptr;
      std::optional<double> scale =
          withMask ? std::optional<double>(0.3) : std::nullopt;
      std::vector<T> expected(numElements(o));
      host::attention<T>(hq.data(), q, hk.data(), k, hv.data(), v, hm, mask,
                         causal, scale, expected.data());
      cuda::attention<T>(nullptr, dq.get(), q, dk.get(), k, dv.get(), v, cm,
                         mask, causal, scale, dout.get());
      expectClose(dout.download(), expected, "attention");

      std::vector<T> eq(hq.size()), ek(hk.size()), ev(hv.size());
      host::attentionGrad<T>(hq.data(), q, hk.data(), k, hv.data(), v,
                             expected.data(), hdo.data(), hm, mask, causal,
                             scale, eq.data(), ek.data(), ev.data());
      Buf<T> gq(hq.size()), gk(hk.size()), gv(hv.size());
      cuda::attentionGrad<T>(nullptr, dq.get(), q, dk.get(), k, dv.get(), v,
                             dout.get(), ddo.get(), cm, mask, causal, scale,
                             gq.get(), gk.get(), gv.get());
      expectClose(gq.download(), eq, "attention_grad dquery");
      expectClose(gk.download(), ek, "attention_grad dkey");
      expectClose(gv.download(), ev, "attention_grad dvalue");
    }
  }
}

// Rows and keys spanning several tiles of the kernels (a tile is at most 32
// rows), with a partial last tile, for every width of their accumulators
// (head dims up to 32, 64, 128 and 256): the running max and sum must carry
// across key tiles, and the causal walk must stop at the last key a tile's
// rows attend.
TYPED_TEST(CudaKernelsTest, AttentionAcrossTilesForEveryHeadDim) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  struct Case {
    int64_t sq, skv, d, dv;
    bool causal;
  };
  for (const Case &c : std::vector<Case>{{70, 70, 64, 64, true},
                                         {37, 75, 24, 32, true},
                                         {45, 45, 100, 72, false},
                                         {33, 33, 256, 130, true}}) {
    SCOPED_TRACE("sq " + std::to_string(c.sq) + ", d " + std::to_string(c.d));
    // Two query heads share one key/value head.
    Shape q = {1, 2, c.sq, c.d}, k = {1, 1, c.skv, c.d},
          v = {1, 1, c.skv, c.dv}, o = {1, 2, c.sq, c.dv};
    // Scores of several units, so that the max moves between key tiles.
    auto hq = randomVector<T>(numElements(q), 31, -2.0, 2.0);
    auto hk = randomVector<T>(numElements(k), 32, -2.0, 2.0);
    auto hv = randomVector<T>(numElements(v), 33);
    auto hdo = randomVector<T>(numElements(o), 34);
    Buf<T> dq(hq), dk(hk), dv(hv), ddo(hdo), dout(numElements(o));
    std::vector<T> expected(numElements(o));
    host::attention<T>(hq.data(), q, hk.data(), k, hv.data(), v, nullptr, {},
                       c.causal, std::nullopt, expected.data());
    cuda::attention<T>(nullptr, dq.get(), q, dk.get(), k, dv.get(), v, nullptr,
                       {}, c.causal, std::nullopt, dout.get());
    expectClose(dout.download(), expected, "attention");
    std::vector<T> eq(hq.size()), ek(hk.size()), ev(hv.size());
    host::attentionGrad<T>(hq.data(), q, hk.data(), k, hv.data(), v,
                           expected.data(), hdo.data(), nullptr, {}, c.causal,
                           std::nullopt, eq.data(), ek.data(), ev.data());
    Buf<T> gq(hq.size()), gk(hk.size()), gv(hv.size());
    cuda::attentionGrad<T>(nullptr, dq.get(), q, dk.get(), k, dv.get(), v,
                           dout.get(), ddo.get(), nullptr, {}, c.causal,
                           std::nullopt, gq.get(), gk.get(), gv.get());
    expectClose(gq.download(), eq, "attention_grad dquery");
    expectClose(gk.download(), ek, "attention_grad dkey");
    expectClose(gv.download(), ev, "attention_grad dvalue");
  }
}

// The low-precision kernels (float sums in an f32 run) on bf16 values,
// causal and not, GQA, across tiles, with a mask: within the f32 tolerance
// of the host's double sums (the scores, exponentials and weighted sums of
// a row of 75 keys lose a few float ulps). f64 runs take the exact kernels.
TYPED_TEST(CudaKernelsTest, AttentionOfLowPrecisionValuesSumsInFloat) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  struct Case {
    int64_t sq, skv, d, dv;
    bool causal, withMask;
  };
  for (const Case &c : std::vector<Case>{{70, 70, 64, 64, true, false},
                                         {37, 75, 24, 32, true, true},
                                         {45, 45, 100, 72, false, false}}) {
    SCOPED_TRACE("sq " + std::to_string(c.sq) + ", d " + std::to_string(c.d));
    Shape q = {2, 2, c.sq, c.d}, k = {2, 1, c.skv, c.d},
          v = {2, 1, c.skv, c.dv}, o = {2, 2, c.sq, c.dv},
          mask = {1, 2, c.sq, c.skv};
    auto hq = randomVector<T>(numElements(q), 51, -2.0, 2.0);
    auto hk = randomVector<T>(numElements(k), 52, -2.0, 2.0);
    auto hv = randomVector<T>(numElements(v), 53);
    auto hdo = randomVector<T>(numElements(o), 54);
    auto hmask = randomVector<T>(numElements(mask), 55, -2.0, 0.0);
    for (auto *values : {&hq, &hk, &hv, &hdo})
      host::roundToPrecision(values->data(),
                             static_cast<int64_t>(values->size()),
                             host::CastTarget::BF16);
    const T *hm = c.withMask ? hmask.data() : nullptr;
    Buf<T> dq(hq), dk(hk), dv(hv), ddo(hdo), dmask(hmask), dout(numElements(o));
    const T *cm = c.withMask ? dmask.get() : nullptr;
    std::vector<T> expected(numElements(o));
    host::attention<T>(hq.data(), q, hk.data(), k, hv.data(), v, hm, mask,
                       c.causal, std::nullopt, expected.data());
    cuda::attentionLowPrecision<T>(nullptr, dq.get(), q, dk.get(), k, dv.get(),
                                   v, cm, mask, c.causal, std::nullopt,
                                   dout.get());
    expectClose(dout.download(), expected, "attention");
    std::vector<T> eq(hq.size()), ek(hk.size()), ev(hv.size());
    host::attentionGrad<T>(hq.data(), q, hk.data(), k, hv.data(), v,
                           expected.data(), hdo.data(), hm, mask, c.causal,
                           std::nullopt, eq.data(), ek.data(), ev.data());
    Buf<T> gq(hq.size()), gk(hk.size()), gv(hv.size());
    cuda::attentionGradLowPrecision<T>(
        nullptr, dq.get(), q, dk.get(), k, dv.get(), v, dout.get(), ddo.get(),
        cm, mask, c.causal, std::nullopt, gq.get(), gk.get(), gv.get());
    expectClose(gq.download(), eq, "attention_grad dquery");
    expectClose(gk.download(), ek, "attention_grad dkey");
    expectClose(gv.download(), ev, "attention_grad dvalue");
  }
}

TYPED_TEST(CudaKernelsTest, RopeWithPositionsAndInverse) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape shape = {2, 3, 6, 16};
  auto x = randomVector<T>(numElements(shape), 26);
  auto positions = randomInts(12, 27, 0, 500);
  Buf<T> dx(x), out(x.size());
  Buf<int64_t> dpos(positions);
  for (bool inverse : {false, true}) {
    for (bool perBatch : {false, true}) {
      Shape posShape = perBatch ? Shape{2, 6} : Shape{6};
      std::vector<T> expected(x.size());
      host::rope<T>(x.data(), shape, positions.data(), posShape, 10000.0,
                    inverse, expected.data());
      cuda::rope<T>(nullptr, dx.get(), shape, dpos.get(), posShape, 10000.0,
                    inverse, out.get());
      expectClose(out.download(), expected, "rope");
    }
  }
  std::vector<T> expected(x.size());
  host::rope<T>(x.data(), shape, nullptr, {}, 500.0, false, expected.data());
  cuda::rope<T>(nullptr, dx.get(), shape, nullptr, {}, 500.0, false, out.get());
  expectClose(out.download(), expected, "rope without positions");
}

TYPED_TEST(CudaKernelsTest, EmbeddingsAndTheirGradients) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape table = {40, 12}, ids = {3, 9}, dyShape = {3, 9, 12};
  auto htable = randomVector<T>(480, 28);
  auto hids = randomInts(27, 29, 0, 39);
  hids[4] = hids[5] = hids[20]; // Repeated ids sum in position order.
  auto hdy = randomVector<T>(27 * 12, 30);
  Buf<T> dtable(htable), ddy(hdy), out(27 * 12), grad(480), block(20 * 12);
  Buf<int64_t> dids(hids);
  std::vector<T> expected(27 * 12), expectedGrad(480), expectedBlock(20 * 12);
  ASSERT_TRUE(host::embedding<T>(htable.data(), table, hids.data(), ids,
                                 expected.data())
                  .ok());
  cuda::embedding<T>(nullptr, dtable.get(), table, dids.get(), ids, out.get());
  EXPECT_EQ(out.download(), expected);
  // The block holds rows 15..34 of the vocabulary (the first 20 of the
  // table stand in for them).
  ASSERT_TRUE(host::embeddingBlock<T>(htable.data(), {20, 12}, hids.data(), ids,
                                      15, expected.data())
                  .ok());
  cuda::embeddingBlock<T>(nullptr, dtable.get(), {20, 12}, dids.get(), ids, 15,
                          out.get());
  EXPECT_EQ(out.download(), expected);

  ASSERT_TRUE(host::embeddingGrad<T>(hdy.data(), dyShape, hids.data(), ids, 40,
                                     expectedGrad.data())
                  .ok());
  ASSERT_TRUE(cuda::embeddingGrad<T>(nullptr, ddy.get(), dyShape, dids.get(),
                                     ids, 40, grad.get())
                  .ok());
  // The same additions in the same order.
  EXPECT_EQ(grad.download(), expectedGrad);
  ASSERT_TRUE(host::embeddingGradBlock<T>(hdy.data(), dyShape, hids.data(), ids,
                                          15, 20, expectedBlock.data())
                  .ok());
  ASSERT_TRUE(cuda::embeddingGradBlock<T>(nullptr, ddy.get(), dyShape,
                                          dids.get(), ids, 15, 20, block.get())
                  .ok());
  EXPECT_EQ(block.download(), expectedBlock);

  // Out of range: the gradient returns the host's Status, the lookup
  // records it.
  std::vector<int64_t> bad = {3, 41};
  Buf<int64_t> dbad(bad);
  host::Status status = cuda::embeddingGrad<T>(nullptr, ddy.get(), {2, 12},
                                               dbad.get(), {2}, 40, grad.get());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "id 41 at index 1 is outside [0, 40)");
  Buf<cuda::DeviceError> slot(1);
  cuda::embedding<T>(nullptr, dtable.get(), table, dbad.get(), {2}, out.get(),
                     {slot.get(), 3});
  cuda::DeviceError error = slot.download()[0];
  EXPECT_EQ(error.tag, 3u);
  EXPECT_EQ(cuda::describeDeviceError(error), status.message());
}

//===----------------------------------------------------------------------===//
// Optimizers and the workspace
//===----------------------------------------------------------------------===//

TYPED_TEST(CudaKernelsTest, SgdAndAdamwUpdates) {
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape shape = {7, 11};
  size_t n = 77;
  auto p = randomVector<T>(n, 31), g = randomVector<T>(n, 32),
       m = randomVector<T>(n, 33), v = randomVector<T>(n, 34, 0.0, 0.1);
  Buf<T> dp(p), dg(g), dm(m), dv(v), np(n), nm(n), nv(n);
  std::vector<T> ep(n), em(n), ev(n);
  for (bool nesterov : {false, true}) {
    host::sgdUpdate<T>(p.data(), g.data(), m.data(), shape, 0.1, 0.9, 0.01, 0.0,
                       nesterov, ep.data(), em.data());
    cuda::sgdUpdate<T>(nullptr, dp.get(), dg.get(), dm.get(), shape, 0.1,
                       nullptr, 0.9, 0.01, 0.0, nesterov, np.get(), nm.get());
    expectClose(np.download(), ep, "sgd param");
    expectClose(nm.download(), em, "sgd momentum");
  }
  host::sgdUpdate<T>(p.data(), g.data(), nullptr, shape, 0.1, 0.0, 0.0, 0.0,
                     false, ep.data(), nullptr);
  cuda::sgdUpdate<T>(nullptr, dp.get(), dg.get(), nullptr, shape, 0.1, nullptr,
                     0.0, 0.0, 0.0, false, np.get(), nullptr);
  expectClose(np.download(), ep, "plain sgd");
  // A learning-rate factor on the device scales lr (the schedule's input).
  Buf<T> lrScale(std::vector<T>{T(0.25)});
  host::sgdUpdate<T>(p.data(), g.data(), nullptr, shape, 0.1 * 0.25, 0.0, 0.0,
                     0.0, false, ep.data(), nullptr);
  cuda::sgdUpdate<T>(nullptr, dp.get(), dg.get(), nullptr, shape, 0.1,
                     lrScale.get(), 0.0, 0.0, 0.0, false, np.get(), nullptr);
  expectClose(np.download(), ep, "sgd with lr_scale");

  host::adamwUpdate<T>(p.data(), g.data(), m.data(), v.data(), shape, 4, 1e-3,
                       0.9, 0.95, 1e-8, 0.1, ep.data(), em.data(), ev.data());
  Buf<int64_t> intStep(std::vector<int64_t>{4});
  cuda::adamwUpdate<T, int64_t>(nullptr, dp.get(), dg.get(), dm.get(), dv.get(),
                                shape, intStep.get(), 1e-3, nullptr, 0.9, 0.95,
                                1e-8, 0.1, np.get(), nm.get(), nv.get());
  expectClose(np.download(), ep, "adamw param");
  expectClose(nm.download(), em, "adamw exp_avg");
  expectClose(nv.download(), ev, "adamw exp_avg_sq");
  Buf<T> floatStep(std::vector<T>{T(4)});
  cuda::adamwUpdate<T, T>(nullptr, dp.get(), dg.get(), dm.get(), dv.get(),
                          shape, floatStep.get(), 1e-3, nullptr, 0.9, 0.95,
                          1e-8, 0.1, np.get(), nm.get(), nv.get());
  expectClose(np.download(), ep, "adamw param, float step");
  host::adamwUpdate<T>(p.data(), g.data(), m.data(), v.data(), shape, 4,
                       1e-3 * 0.25, 0.9, 0.95, 1e-8, 0.1, ep.data(), em.data(),
                       ev.data());
  cuda::adamwUpdate<T, int64_t>(nullptr, dp.get(), dg.get(), dm.get(), dv.get(),
                                shape, intStep.get(), 1e-3, lrScale.get(), 0.9,
                                0.95, 1e-8, 0.1, np.get(), nm.get(), nv.get());
  expectClose(np.download(), ep, "adamw param with lr_scale");
}

TYPED_TEST(CudaKernelsTest, DropoutMaskEqualsTheHostMask) {
  // The device draws with the host's Philox (Support/Philox.h): masks and
  // results are bit-identical, for blocks anywhere in the global tensor,
  // run seeds and steps.
  using T = TypeParam;
  LOOM_REQUIRE_CUDA_DEVICE();
  Shape global = {6, 8, 10};
  auto x = randomVector<T>(480, 40);
  struct Case {
    Shape offset, block;
    uint64_t runSeed, step;
  };
  for (const Case &c :
       {Case{{0, 0, 0}, {6, 8, 10}, 0, 0}, Case{{0, 0, 0}, {6, 8, 10}, 3, 1},
        Case{{3, 0, 0}, {3, 8, 10}, 3, 7},
        Case{{1, 2, 5}, {4, 5, 5}, 12345, (1ull << 32) + 2}}) {
    size_t n = numElements(c.block);
    std::vector<int64_t> limits(3);
    for (size_t d = 0; d < 3; ++d)
      limits[d] = c.offset[d] + c.block[d];
    std::vector<T> block(n);
    host::slice<T>(x.data(), global, c.offset, limits, {1, 1, 1}, block.data());
    std::vector<T> expected(n);
    host::dropout<T>(block.data(), global, c.offset, c.block, 0.3, -11,
                     c.runSeed, c.step, expected.data());
    Buf<T> din(block), out(n);
    cuda::dropout<T>(nullptr, din.get(), global, c.offset, c.block, 0.3, -11,
                     c.runSeed, c.step, out.get());
    EXPECT_EQ(out.download(), expected)
        << "run seed " << c.runSeed << ", step " << c.step;
  }
}

TEST(CudaWorkspaceTest, BuffersStartZeroedAndRoundTrip) {
  LOOM_REQUIRE_CUDA_DEVICE();
  cudaStream_t stream;
  LOOM_CUDA_CHECK(cudaStreamCreate(&stream));
  {
    cuda::Workspace ws(stream);
    double *zeros = ws.alloc<double>(100);
    std::vector<double> back;
    ws.download(back, zeros, 100);
    EXPECT_EQ(back, std::vector<double>(100, 0.0));
    std::vector<int64_t> ints = {4, -2, 9};
    const int64_t *up = ws.upload(ints);
    std::vector<int64_t> intsBack;
    ws.download(intsBack, up, 3);
    EXPECT_EQ(intsBack, ints);
    EXPECT_EQ(ws.getBytes(), 100 * 8 + 3 * 8);
  }
  LOOM_CUDA_CHECK(cudaStreamSynchronize(stream));
  LOOM_CUDA_CHECK(cudaStreamDestroy(stream));
}

// What resident state relies on: every copy is counted in
// deviceTransfers(), and a released buffer survives the workspace (the
// caller frees it) while a pointer the workspace does not own is refused.
TEST(CudaWorkspaceTest, CountsCopiesAndReleasesBuffers) {
  LOOM_REQUIRE_CUDA_DEVICE();
  cudaStream_t stream;
  LOOM_CUDA_CHECK(cudaStreamCreate(&stream));
  TransferCounts before = deviceTransfers();
  void *kept = nullptr;
  std::vector<float> values = {1.5f, -2.0f, 3.25f};
  {
    cuda::Workspace ws(stream);
    const float *up = ws.upload(values);
    std::vector<float> back;
    ws.download(back, up, 2);
    EXPECT_EQ(deviceTransfers().toDevice - before.toDevice, 12);
    EXPECT_EQ(deviceTransfers().toHost - before.toHost, 8);
    kept = ws.release(up);
    EXPECT_EQ(kept, up);
    EXPECT_EQ(ws.release(up), nullptr) << "released twice";
    EXPECT_EQ(ws.release(values.data()), nullptr) << "not the workspace's";
  }
  LOOM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> back(3);
  LOOM_CUDA_CHECK(cudaMemcpy(back.data(), kept, 12, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, values);
  LOOM_CUDA_CHECK(cudaFree(kept));
  LOOM_CUDA_CHECK(cudaStreamDestroy(stream));
}

} // namespace

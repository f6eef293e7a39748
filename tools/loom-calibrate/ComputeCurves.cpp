//===- ComputeCurves.cpp - GEMM, attention and bandwidth curves -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "ComputeCurves.h"

#include "loom/Runtime/Host/Attention.h"
#include "loom/Runtime/Host/Elementwise.h"
#include "loom/Runtime/Host/Matmul.h"
#include "loom/Runtime/Host/Normalization.h"
#include "loom/Runtime/Host/Softmax.h"

#include <algorithm>
#include <vector>

using mlir::loom::dist::Curve1D;
using mlir::loom::dist::GemmCurve;
namespace host = loom::runtime::host;

namespace loom::calibrate {

ComputePlan ComputePlan::get(bool quick) {
  ComputePlan plan;
  if (quick) {
    plan.gemmSizes = {16, 128};
    plan.attentionSeqs = {16, 64};
    plan.streamElements = {1 << 10, 1 << 16};
    plan.budget = {0.001, 1};
    return plan;
  }
  // Powers of 4 from 8 to 512, then 1024: from a narrow tensor-parallel
  // slice to the widest products the host runs in reasonable time.
  plan.gemmSizes = {8, 32, 128, 512, 1024};
  plan.attentionSeqs = {16, 64, 256, 512};
  plan.streamElements = {1 << 10, 1 << 13, 1 << 16, 1 << 19, 1 << 22};
  return plan;
}

/// Values in [-1, 1) that do not repeat often, so no kernel sees zeros.
template <typename T> std::vector<T> makeData(size_t count) {
  std::vector<T> data(count);
  for (size_t i = 0; i < count; ++i)
    data[i] = T(double((i * 7919) % 2003) / 1001.5 - 1.0);
  return data;
}

template <typename T> static GemmCurve measureGemmOf(const ComputePlan &plan) {
  GemmCurve curve;
  curve.m = curve.n = curve.k = plan.gemmSizes;
  size_t largest = size_t(plan.gemmSizes.back());
  std::vector<T> lhs = makeData<T>(largest * largest);
  std::vector<T> rhs = makeData<T>(largest * largest);
  std::vector<T> out(largest * largest);
  for (double m : curve.m) {
    curve.flopsPerSecond.emplace_back();
    for (double n : curve.n) {
      curve.flopsPerSecond.back().emplace_back();
      for (double k : curve.k) {
        loom::runtime::Shape lhsShape = {int64_t(m), int64_t(k)};
        loom::runtime::Shape rhsShape = {int64_t(k), int64_t(n)};
        double seconds = timeOnAllRanks(
            [&] {
              host::matmul<T>(lhs.data(), lhsShape, rhs.data(), rhsShape, false,
                              false, out.data());
            },
            plan.budget);
        curve.flopsPerSecond.back().back().push_back(2 * m * n * k / seconds);
      }
    }
  }
  makeTimeMonotone(curve);
  return curve;
}

GemmCurve measureGemm(const ComputePlan &plan, const std::string &dtype) {
  return dtype == "f64" ? measureGemmOf<double>(plan)
                        : measureGemmOf<float>(plan);
}

template <typename T>
static Curve1D measureAttentionOf(const ComputePlan &plan) {
  Curve1D curve;
  int64_t heads = plan.attentionHeads, dim = plan.attentionHeadDim;
  for (int64_t seq : plan.attentionSeqs) {
    loom::runtime::Shape shape = {1, heads, seq, dim};
    size_t count = size_t(heads * seq * dim);
    std::vector<T> q = makeData<T>(count), k = makeData<T>(count),
                   v = makeData<T>(count), out(count);
    double seconds = timeOnAllRanks(
        [&] {
          host::attention<T>(q.data(), shape, k.data(), shape, v.data(), shape,
                             nullptr, {}, /*causal=*/true, std::nullopt,
                             out.data());
        },
        plan.budget);
    // loom.attention's count (AttentionOp::getCost): per attended pair two
    // products of length dim and 5 more; one division per output element.
    double pairs = double(seq) * double(seq + 1) / 2;
    double flops =
        double(heads) * (pairs * (4.0 * dim + 5) + double(seq) * dim);
    curve.sizes.push_back(flops);
    curve.rates.push_back(flops / seconds);
  }
  makeTimeMonotone(curve);
  return curve;
}

Curve1D measureAttention(const ComputePlan &plan, const std::string &dtype) {
  return dtype == "f64" ? measureAttentionOf<double>(plan)
                        : measureAttentionOf<float>(plan);
}

Curve1D measureElementwise(const ComputePlan &plan) {
  Curve1D curve;
  for (int64_t count : plan.streamElements) {
    std::vector<float> a = makeData<float>(count), b = makeData<float>(count),
                       out(count);
    loom::runtime::Shape shape = {count};
    double seconds = timeOnAllRanks(
        [&] {
          (void)host::binary<float>(host::BinaryKind::Add, a.data(), shape,
                                    b.data(), shape, out.data(), shape);
        },
        plan.budget);
    double bytes = 3.0 * count * sizeof(float);
    curve.sizes.push_back(bytes);
    curve.rates.push_back(bytes / seconds);
  }
  makeTimeMonotone(curve);
  return curve;
}

Curve1D measureRowKernels(const ComputePlan &plan) {
  Curve1D curve;
  int64_t row = plan.rowLength;
  for (int64_t count : plan.streamElements) {
    int64_t rows = std::max<int64_t>(1, count / row);
    loom::runtime::Shape shape = {rows, row};
    size_t elements = size_t(rows * row);
    std::vector<float> in = makeData<float>(elements), out(elements);
    std::vector<float> gamma = makeData<float>(row),
                       beta = makeData<float>(row);
    double softmax = timeOnAllRanks(
        [&] { host::softmax<float>(in.data(), shape, 1, out.data()); },
        plan.budget);
    double layerNorm = timeOnAllRanks(
        [&] {
          host::layerNorm<float>(in.data(), shape, gamma.data(), beta.data(),
                                 1e-5, out.data());
        },
        plan.budget);
    double bytes = 2.0 * double(elements) * sizeof(float);
    curve.sizes.push_back(bytes);
    curve.rates.push_back(bytes / ((softmax + layerNorm) / 2));
  }
  makeTimeMonotone(curve);
  return curve;
}

} // namespace loom::calibrate

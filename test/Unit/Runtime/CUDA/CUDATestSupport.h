//===- CUDATestSupport.h - Helpers of the CUDA kernel tests -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Device buffers that upload host vectors and download results, random
// inputs, and the comparison with the host kernel's result. Tests that need
// a device start with LOOM_REQUIRE_CUDA_DEVICE(), which skips (and says so)
// on machines without one, so CI stays green and a GPU machine runs them.
//
// Tolerances (also in docs/Codegen.md, "CUDA"): both sides compute in double
// where the host does, but sum in another order and use the device's libm,
// so f64 results agree to ~1e-12 relative and f32 results to ~1e-5 (one or
// two f32 ulps of the inputs' scale).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TEST_UNIT_RUNTIME_CUDA_CUDATESTSUPPORT_H
#define LOOM_TEST_UNIT_RUNTIME_CUDA_CUDATESTSUPPORT_H

#include "loom/Runtime/CUDA/Check.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace loom::runtime::cuda::test {

inline bool haveDevice() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define LOOM_REQUIRE_CUDA_DEVICE()                                             \
  do {                                                                         \
    if (!::loom::runtime::cuda::test::haveDevice())                            \
      GTEST_SKIP() << "no CUDA device";                                        \
  } while (false)

/// A device copy of a host vector (or zeros), freed on destruction.
template <typename T> class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t count) : count(count) {
    LOOM_CUDA_CHECK(
        cudaMalloc(reinterpret_cast<void **>(&data), bytes() ? bytes() : 1));
    LOOM_CUDA_CHECK(cudaMemset(data, 0, bytes()));
  }
  explicit DeviceBuffer(const std::vector<T> &values)
      : DeviceBuffer(values.size()) {
    LOOM_CUDA_CHECK(
        cudaMemcpy(data, values.data(), bytes(), cudaMemcpyHostToDevice));
  }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  T *get() const { return data; }
  std::vector<T> download() const {
    LOOM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> values(count);
    LOOM_CUDA_CHECK(
        cudaMemcpy(values.data(), data, bytes(), cudaMemcpyDeviceToHost));
    return values;
  }

private:
  size_t bytes() const { return count * sizeof(T); }
  T *data = nullptr;
  size_t count;
};

/// `n` values uniform in [lo, hi), reproducible from `seed`.
template <typename T>
std::vector<T> randomVector(size_t n, uint64_t seed, double lo = -1.0,
                            double hi = 1.0) {
  std::mt19937_64 engine(seed);
  std::vector<T> values(n);
  for (T &v : values)
    v = static_cast<T>(
        lo + (hi - lo) * (static_cast<double>(engine() >> 11) * 0x1.0p-53));
  return values;
}

/// Integers uniform in [lo, hi].
inline std::vector<int64_t> randomInts(size_t n, uint64_t seed, int64_t lo,
                                       int64_t hi) {
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<int64_t> values(n);
  for (int64_t &v : values)
    v = dist(engine);
  return values;
}

/// The relative tolerance of T (see the file comment).
template <typename T> double tolerance() {
  return std::is_same_v<T, double> ? 1e-12 : 2e-5;
}

/// |actual - expected| <= rtol * max(1, max |expected|) elementwise; NaNs
/// must match.
template <typename T>
void expectClose(const std::vector<T> &actual, const std::vector<T> &expected,
                 const char *what, double rtol = tolerance<T>()) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double scale = 1.0;
  for (T e : expected)
    if (!std::isnan(static_cast<double>(e)))
      scale = std::max(scale, std::abs(static_cast<double>(e)));
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = static_cast<double>(actual[i]);
    double e = static_cast<double>(expected[i]);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << what << " element " << i;
      continue;
    }
    EXPECT_NEAR(a, e, rtol * scale) << what << " element " << i;
  }
}

} // namespace loom::runtime::cuda::test

#endif // LOOM_TEST_UNIT_RUNTIME_CUDA_CUDATESTSUPPORT_H

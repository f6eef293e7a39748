//===- Optimizer.cpp - Host optimizer-update kernels ----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each element reads all of its inputs before writing any output, which is
// what lets outputs alias their inputs.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Optimizer.h"

#include <cmath>

namespace loom::runtime::host {

template <typename T>
void sgdUpdate(const T *param, const T *grad, const T *momentumBuf,
               const Shape &shape, double lr, double momentum,
               double weightDecay, double dampening, bool nesterov, T *newParam,
               T *newMomentumBuf) {
  int64_t n = numElements(shape);
  for (int64_t e = 0; e < n; ++e) {
    double p = param[e];
    double g = grad[e] + weightDecay * p;
    if (momentumBuf) {
      double b = momentum * momentumBuf[e] + (1.0 - dampening) * g;
      g = nesterov ? g + momentum * b : b;
      newMomentumBuf[e] = static_cast<T>(b);
    }
    newParam[e] = static_cast<T>(p - lr * g);
  }
}

template <typename T>
void adamwUpdate(const T *param, const T *grad, const T *expAvg,
                 const T *expAvgSq, const Shape &shape, int64_t step, double lr,
                 double beta1, double beta2, double eps, double weightDecay,
                 T *newParam, T *newExpAvg, T *newExpAvgSq) {
  double t = static_cast<double>(step) + 1.0;
  double c1 = 1.0 - std::pow(beta1, t);
  double sqrtC2 = std::sqrt(1.0 - std::pow(beta2, t));
  double stepSize = lr / c1;
  double decay = 1.0 - lr * weightDecay;
  int64_t n = numElements(shape);
  for (int64_t e = 0; e < n; ++e) {
    double g = grad[e];
    double p = param[e] * decay;
    double m = beta1 * expAvg[e] + (1.0 - beta1) * g;
    double v = beta2 * expAvgSq[e] + (1.0 - beta2) * g * g;
    newParam[e] =
        static_cast<T>(p - stepSize * m / (std::sqrt(v) / sqrtC2 + eps));
    newExpAvg[e] = static_cast<T>(m);
    newExpAvgSq[e] = static_cast<T>(v);
  }
}

#define LOOM_INSTANTIATE(T)                                                    \
  template void sgdUpdate<T>(const T *, const T *, const T *, const Shape &,   \
                             double, double, double, double, bool, T *, T *);  \
  template void adamwUpdate<T>(const T *, const T *, const T *, const T *,     \
                               const Shape &, int64_t, double, double, double, \
                               double, double, T *, T *, T *);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
#undef LOOM_INSTANTIATE

} // namespace loom::runtime::host

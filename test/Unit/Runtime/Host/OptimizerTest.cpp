//===- OptimizerTest.cpp - Host optimizer-update kernels ------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Optimizer.h"

#include "HostTestSupport.h"

using namespace loom::runtime;
using namespace loom::runtime::host;
using namespace loom::runtime::host::test;

namespace {

TEST(OptimizerTest, SgdHandComputedSteps) {
  std::vector<double> p{1}, g{0.5}, b{0.2}, newP(1), newB(1);
  // Plain SGD with weight decay: p - lr * (g + wd * p).
  sgdUpdate(p.data(), g.data(), static_cast<const double *>(nullptr), {1}, 0.1,
            0.0, 0.01, 0.0, false, newP.data(), static_cast<double *>(nullptr));
  EXPECT_NEAR(newP[0], 1 - 0.1 * 0.51, 1e-15);
  // Momentum: b' = 0.9 * 0.2 + 0.51 = 0.69.
  sgdUpdate(p.data(), g.data(), b.data(), {1}, 0.1, 0.9, 0.01, 0.0, false,
            newP.data(), newB.data());
  EXPECT_NEAR(newB[0], 0.69, 1e-15);
  EXPECT_NEAR(newP[0], 1 - 0.1 * 0.69, 1e-15);
  // Nesterov: g' = 0.51 + 0.9 * 0.69.
  sgdUpdate(p.data(), g.data(), b.data(), {1}, 0.1, 0.9, 0.01, 0.0, true,
            newP.data(), newB.data());
  EXPECT_NEAR(newB[0], 0.69, 1e-15);
  EXPECT_NEAR(newP[0], 1 - 0.1 * (0.51 + 0.9 * 0.69), 1e-15);
  // Dampening scales the new gradient: b' = 0.18 + 0.5 * 0.51.
  sgdUpdate(p.data(), g.data(), b.data(), {1}, 0.1, 0.9, 0.01, 0.5, false,
            newP.data(), newB.data());
  EXPECT_NEAR(newB[0], 0.18 + 0.255, 1e-15);
}

TEST(OptimizerTest, AdamwFirstStepMovesBySignOfGradient) {
  // At step 0 with zero moments the bias corrections cancel: m'/c1 = g and
  // sqrt(v')/sqrt(c2) = |g|, so p' = p (1 - lr wd) - lr g / (|g| + eps).
  std::vector<double> p{2, -1}, g{0.3, -4}, m{0, 0}, v{0, 0};
  std::vector<double> newP(2), newM(2), newV(2);
  adamwUpdate(p.data(), g.data(), m.data(), v.data(), {2}, 0, 0.01, 0.9, 0.999,
              1e-8, 0.1, newP.data(), newM.data(), newV.data());
  EXPECT_NEAR(newP[0], 2 * 0.999 - 0.01 * 0.3 / (0.3 + 1e-8), 1e-15);
  EXPECT_NEAR(newP[1], -1 * 0.999 + 0.01 * 4 / (4 + 1e-8), 1e-15);
  EXPECT_NEAR(newM[1], 0.1 * -4, 1e-15);
  EXPECT_NEAR(newV[1], 0.001 * 16, 1e-15);
}

/// torch.optim.AdamW's single-tensor step, statement by statement.
void torchAdamwStep(std::vector<double> &p, const std::vector<double> &g,
                    std::vector<double> &m, std::vector<double> &v, int t,
                    double lr, double beta1, double beta2, double eps,
                    double wd) {
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] *= 1 - lr * wd;
    m[i] += (g[i] - m[i]) * (1 - beta1); // exp_avg.lerp_(grad, 1 - beta1)
    v[i] = v[i] * beta2 + (1 - beta2) * g[i] * g[i];
    double bc1 = 1 - std::pow(beta1, t), bc2 = 1 - std::pow(beta2, t);
    double denom = std::sqrt(v[i]) / std::sqrt(bc2) + eps;
    p[i] -= lr / bc1 * m[i] / denom;
  }
}

TEST(OptimizerTest, AdamwMatchesTorchOverSeveralSteps) {
  std::vector<double> p = randomValues(10, 140), m(10, 0.0), v(10, 0.0);
  std::vector<double> rp = p, rm = m, rv = v;
  for (int step = 0; step < 4; ++step) {
    std::vector<double> g = randomValues(10, 141 + step);
    // In place: outputs alias their inputs.
    adamwUpdate(p.data(), g.data(), m.data(), v.data(), {10}, step, 1e-3, 0.9,
                0.95, 1e-8, 0.1, p.data(), m.data(), v.data());
    torchAdamwStep(rp, g, rm, rv, step + 1, 1e-3, 0.9, 0.95, 1e-8, 0.1);
  }
  expectAllClose(p, rp, 1e-14, "param");
  expectAllClose(m, rm, 1e-14, "exp_avg");
  expectAllClose(v, rv, 1e-14, "exp_avg_sq");
}

TEST(OptimizerTest, FloatKernelsAgreeWithDouble) {
  std::vector<double> p = randomValues(16, 150), g = randomValues(16, 151),
                      m = randomValues(16, 152),
                      v = randomValues(16, 153, 0.1, 1.0);
  std::vector<double> outP(16), outM(16), outV(16);
  std::vector<float> pf = toFloat(p), gf = toFloat(g), mf = toFloat(m),
                     vf = toFloat(v), outPf(16), outMf(16), outVf(16);
  adamwUpdate(p.data(), g.data(), m.data(), v.data(), {16}, 5, 1e-2, 0.9, 0.999,
              1e-8, 0.01, outP.data(), outM.data(), outV.data());
  adamwUpdate(pf.data(), gf.data(), mf.data(), vf.data(), {16}, 5, 1e-2, 0.9,
              0.999, 1e-8, 0.01, outPf.data(), outMf.data(), outVf.data());
  expectAllClose(outPf, outP, 1e-6, "adamw param");
  expectAllClose(outVf, outV, 1e-6, "adamw exp_avg_sq");
  sgdUpdate(p.data(), g.data(), m.data(), {16}, 0.1, 0.9, 1e-4, 0.0, true,
            outP.data(), outM.data());
  sgdUpdate(pf.data(), gf.data(), mf.data(), {16}, 0.1, 0.9, 1e-4, 0.0, true,
            outPf.data(), outMf.data());
  expectAllClose(outPf, outP, 1e-6, "sgd param");
  expectAllClose(outMf, outM, 1e-6, "sgd momentum");
}

} // namespace

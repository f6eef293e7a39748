//===- CalibrationFitting.cpp - From raw timings to valid curves ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/CalibrationFitting.h"

#include <algorithm>

namespace mlir::loom::dist {

void makeTimeMonotone(Curve1D &curve) {
  for (size_t i = 1; i < curve.sizes.size(); ++i) {
    double before = curve.sizes[i - 1] / curve.rates[i - 1];
    if (curve.sizes[i] / curve.rates[i] < before)
      curve.rates[i] = curve.sizes[i] / before;
  }
}

void makeTimeMonotone(GemmCurve &curve) {
  // In index order each point's predecessors along every axis are final,
  // so raising it to their largest time keeps every axis monotone.
  auto &r = curve.flopsPerSecond;
  auto time = [&](size_t i, size_t j, size_t l) {
    return 2 * curve.m[i] * curve.n[j] * curve.k[l] / r[i][j][l];
  };
  for (size_t i = 0; i < curve.m.size(); ++i)
    for (size_t j = 0; j < curve.n.size(); ++j)
      for (size_t l = 0; l < curve.k.size(); ++l) {
        double floor = 0;
        if (i > 0)
          floor = std::max(floor, time(i - 1, j, l));
        if (j > 0)
          floor = std::max(floor, time(i, j - 1, l));
        if (l > 0)
          floor = std::max(floor, time(i, j, l - 1));
        if (time(i, j, l) < floor)
          r[i][j][l] = 2 * curve.m[i] * curve.n[j] * curve.k[l] / floor;
      }
}

CollectiveFit fitAlphaBeta(const std::vector<double> &bytes,
                           const std::vector<double> &seconds) {
  double n = double(bytes.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    sx += bytes[i];
    sy += seconds[i];
    sxx += bytes[i] * bytes[i];
    sxy += bytes[i] * seconds[i];
  }
  double denominator = n * sxx - sx * sx;
  double slope = denominator > 0 ? (n * sxy - sx * sy) / denominator : 0;
  double alpha = (sy - slope * sx) / n;
  CollectiveFit fit;
  fit.latencySeconds =
      alpha > 0 ? alpha
                : *std::min_element(seconds.begin(), seconds.end()) / 10;
  fit.bandwidthBytesPerSecond =
      slope > 0 ? 1 / slope : bytes.back() / seconds.back();
  return fit;
}

} // namespace mlir::loom::dist

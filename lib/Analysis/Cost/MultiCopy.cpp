//===- MultiCopy.cpp - What interleaved copies can hide -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/MultiCopy.h"

#include <algorithm>

double mlir::loom::dist::getMultiCopyHiddenSeconds(double layerComputeSeconds,
                                                   double layerCommSeconds,
                                                   int64_t copies) {
  if (copies < 2 || layerComputeSeconds <= 0 || layerCommSeconds <= 0)
    return 0;
  double n = static_cast<double>(copies);
  return std::min(layerComputeSeconds, layerCommSeconds) * (n - 1) / n;
}

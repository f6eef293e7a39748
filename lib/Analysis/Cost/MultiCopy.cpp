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

mlir::loom::dist::MultiCopyPrice
mlir::loom::dist::priceMultiCopies(double computeAtCopies, double commSeconds,
                                   int64_t copies) {
  MultiCopyPrice price;
  price.copies = copies;
  price.computeSeconds = computeAtCopies;
  price.exposedCommSeconds =
      std::max(0.0, commSeconds - getMultiCopyHiddenSeconds(
                                      computeAtCopies, commSeconds, copies));
  return price;
}

const mlir::loom::dist::MultiCopyPrice &
mlir::loom::dist::chooseMultiCopies(llvm::ArrayRef<MultiCopyPrice> prices) {
  const MultiCopyPrice *best = &prices.front();
  for (const MultiCopyPrice &price : prices.drop_front())
    if (price.getLayerSeconds() < best->getLayerSeconds() ||
        (price.getLayerSeconds() == best->getLayerSeconds() &&
         price.copies < best->copies))
      best = &price;
  return *best;
}

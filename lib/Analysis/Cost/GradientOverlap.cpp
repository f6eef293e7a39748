//===- GradientOverlap.cpp - How much gradient sync the backward hides ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The rule of GradientOverlap.h: one pass over the nodes in backward order,
// closing a bucket when the next node would overflow the cap, and a queue
// of buckets on the network.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/GradientOverlap.h"

#include <algorithm>

using namespace mlir::loom;

GradientOverlap
mlir::loom::estimateGradientOverlap(const std::vector<GradientSlot> &slots,
                                    double bucketCapBytes) {
  GradientOverlap result;
  double backward = 0;
  for (const GradientSlot &slot : slots) {
    backward += slot.backwardSeconds;
    result.syncSeconds += slot.syncSeconds;
  }
  if (bucketCapBytes <= 0) {
    result.exposedSeconds = result.syncSeconds;
    return result;
  }
  // The open bucket: its bytes, its reductions' time, and when its last
  // gradient is ready. `networkFree` is when the previous bucket finishes.
  double now = 0, networkFree = 0;
  double openBytes = 0, openSync = 0, openReady = 0;
  bool open = false;
  auto close = [&] {
    if (!open)
      return;
    networkFree = std::max(networkFree, openReady) + openSync;
    ++result.buckets;
    open = false;
    openBytes = openSync = 0;
  };
  for (const GradientSlot &slot : slots) {
    now += slot.backwardSeconds;
    if (slot.bytes <= 0 && slot.syncSeconds <= 0)
      continue;
    if (open && openBytes + slot.bytes > bucketCapBytes)
      close();
    open = true;
    openBytes += slot.bytes;
    openSync += slot.syncSeconds;
    openReady = now;
  }
  close();
  result.exposedSeconds =
      std::min(result.syncSeconds, std::max(0.0, networkFree - backward));
  return result;
}

GradientOverlap mlir::loom::estimateAccumulatedReduceScatterOverlap(
    double reduceSeconds, double computeSeconds, int64_t microBatches) {
  GradientOverlap result;
  auto early = static_cast<double>(std::max<int64_t>(microBatches, 1) - 1);
  result.syncSeconds = (early + 1) * reduceSeconds;
  result.exposedSeconds =
      early * std::max(0.0, reduceSeconds - computeSeconds) + reduceSeconds;
  result.buckets = static_cast<int64_t>(early);
  return result;
}

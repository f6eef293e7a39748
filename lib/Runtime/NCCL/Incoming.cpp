//===- Incoming.cpp - A rank's beginStep() table from the sends -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The compiler used to print each rank's table; this is the same pairing
// done by the receiver for itself. A site on axis `a` that sends to
// coordinate `to` reaches this rank only when this rank's coordinate on `a`
// is `to`, and then from every rank that differs from it only on `a` (and
// runs the site's stage). Stable-sorting by sender keeps each sender's
// program order, which is all NCCL needs.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/NCCL/Incoming.h"

#include <algorithm>

namespace loom::runtime::nccl {

std::vector<Message> incomingMessages(const DeviceMesh &mesh, int64_t rank,
                                      int64_t pipelineAxis,
                                      const SendSite *sites, size_t numSites,
                                      ncclDataType_t floatType) {
  std::vector<int64_t> coordinates = mesh.getCoordinates(rank);
  std::vector<Message> messages;
  for (size_t s = 0; s < numSites; ++s) {
    const SendSite &site = sites[s];
    size_t axis = static_cast<size_t>(site.axis);
    if (coordinates[axis] != site.to)
      continue;
    for (int64_t c = 0; c < mesh.getAxis(axis).size; ++c) {
      if (c == site.to)
        continue; // this rank itself
      std::vector<int64_t> sender = coordinates;
      sender[axis] = c;
      if (site.stage >= 0 &&
          sender[static_cast<size_t>(pipelineAxis)] != site.stage)
        continue;
      messages.push_back({mesh.getRank(sender), site.tag, site.count,
                          site.isInteger ? ncclTypeOf<int64_t>() : floatType});
    }
  }
  std::stable_sort(
      messages.begin(), messages.end(),
      [](const Message &a, const Message &b) { return a.peer < b.peer; });
  return messages;
}

} // namespace loom::runtime::nccl

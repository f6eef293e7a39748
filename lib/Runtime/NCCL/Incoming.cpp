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
// runs the site's stage). Grouping by sender, each group in program order,
// keeps each sender's order, which is all NCCL needs. (Grouped through a map
// rather than std::stable_sort: libstdc++ 12's stable_sort uses the
// deprecated get_temporary_buffer, an error under LOOM_WERROR with clang.)
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/NCCL/Incoming.h"

#include <map>

namespace loom::runtime::nccl {

std::vector<Message> incomingMessages(const DeviceMesh &mesh, int64_t rank,
                                      int64_t pipelineAxis,
                                      const SendSite *sites, size_t numSites,
                                      ncclDataType_t floatType) {
  std::vector<int64_t> coordinates = mesh.getCoordinates(rank);
  std::map<int64_t, std::vector<Message>> bySender;
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
      int64_t peer = mesh.getRank(sender);
      bySender[peer].push_back(
          {peer, site.tag, site.count,
           site.isInteger ? ncclTypeOf<int64_t>() : floatType});
    }
  }
  std::vector<Message> messages;
  for (auto &[peer, fromPeer] : bySender)
    messages.insert(messages.end(), fromPeer.begin(), fromPeer.end());
  return messages;
}

} // namespace loom::runtime::nccl

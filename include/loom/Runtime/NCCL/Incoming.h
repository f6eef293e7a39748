//===- Incoming.h - A rank's beginStep() table from the sends ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// NCCL matches a receive with the peer's next send, so every step declares
// up front which messages each peer sends this rank, in the peer's program
// order (Communicator::beginStep). An emitted CUDA program is one step for
// every rank (docs/Codegen.md, "One program for every rank"): it lists each
// `dist.send` of the program once (a SendSite: its pipeline stage, mesh
// axis, destination coordinate, tag and payload), and each rank derives its
// own table from that list and its mesh coordinates at run time. The list
// grows with the program, never with the rank count.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_NCCL_INCOMING_H
#define LOOM_RUNTIME_NCCL_INCOMING_H

#include "loom/Runtime/NCCL/Communicator.h"

#include <cstdint>
#include <vector>

namespace loom::runtime::nccl {

/// One `dist.send` of the program.
struct SendSite {
  /// The pipeline stage that runs it; -1 when every rank does.
  int64_t stage;
  /// The mesh axis it sends along and the coordinate on it it sends to.
  int64_t axis;
  int64_t to;
  Tag tag;
  /// Elements, and whether they are int64_t (else the step's float type).
  int64_t count;
  bool isInteger;
};

/// The messages that other ranks send `rank` during a step running `sites`
/// (in program order) on `mesh`, whose pipeline axis is `pipelineAxis` (-1:
/// not pipelined): senders in rank order, each sender's messages in its
/// program order, floats of type `floatType`. A send to oneself is no
/// message.
std::vector<Message> incomingMessages(const DeviceMesh &mesh, int64_t rank,
                                      int64_t pipelineAxis,
                                      const SendSite *sites, size_t numSites,
                                      ncclDataType_t floatType);

template <typename T>
std::vector<Message> incomingMessages(const DeviceMesh &mesh, int64_t rank,
                                      int64_t pipelineAxis,
                                      const SendSite *sites, size_t numSites) {
  return incomingMessages(mesh, rank, pipelineAxis, sites, numSites,
                          ncclTypeOf<T>());
}

} // namespace loom::runtime::nccl

#endif // LOOM_RUNTIME_NCCL_INCOMING_H

//===- Transfers.h - Bytes copied between host and device -------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What `--report-transfers` prints: the bytes a process's steps copied
// between host and device memory. The CUDA runtime's workspace adds every
// upload and download of an emitted CUDA step (cuda::Workspace, so also the
// step's constants); host steps copy nothing and leave both counts at 0. The
// counts live here, below both, so that the trainer reads them without
// linking the CUDA runtime.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SUPPORT_TRANSFERS_H
#define LOOM_RUNTIME_SUPPORT_TRANSFERS_H

#include <cstdint>

namespace loom::runtime {

/// Bytes copied host -> device and device -> host.
struct TransferCounts {
  int64_t toDevice = 0;
  int64_t toHost = 0;
};

/// The process's counts since it started (one rank per process); callers
/// take differences to measure one step.
TransferCounts &deviceTransfers();

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SUPPORT_TRANSFERS_H

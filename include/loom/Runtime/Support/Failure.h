//===- Failure.h - Report a failed runtime call and stop --------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Every call a Loom program makes into CUDA, cuBLAS, NCCL or MPI is checked.
// A failure is reported in one shape, whatever the library:
//
//   loom: rank 3: cudaMalloc(&ptr, bytes) failed at Train.cu:42:
//     cudaErrorMemoryAllocation: out of memory
//
// and the process exits with status 1, so mpirun tears the job down instead of
// letting the other ranks hang in a collective.
//
// Plain C++, no library headers: the CUDA, NCCL and MPI checks build on it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SUPPORT_FAILURE_H
#define LOOM_RUNTIME_SUPPORT_FAILURE_H

#include <string>
#include <string_view>

namespace loom::runtime {

/// Where a checked call was made: its source text and position.
struct CallSite {
  std::string_view call;
  std::string_view file;
  int line;
};

/// Sets the rank named in failure reports (the runtime calls this once the
/// communicator is up). Before that, the launcher's environment is used.
void setReportedRank(int rank);

/// Returns the rank named in failure reports: the one set by
/// setReportedRank, else OMPI_COMM_WORLD_RANK or PMI_RANK from mpirun's
/// environment, else -1 (unknown).
int reportedRank();

/// Formats a failure report (see the file comment). `detail` is the
/// library's own description, e.g. "cudaErrorMemoryAllocation: out of memory".
std::string formatCallFailure(const CallSite &site, std::string_view detail);

/// Prints formatCallFailure to stderr and exits with status 1.
[[noreturn]] void reportCallFailure(const CallSite &site,
                                    std::string_view detail);

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SUPPORT_FAILURE_H

//===- AvailableMemory.h - What the machine can still give -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A program emitted without a cluster spec was never checked against any
// device's memory, and Linux grants far more than it has (overcommit): a
// model whose state does not fit is either refused by the allocator deep in
// the first step (std::bad_alloc, an abort) or, worse, killed by the OOM
// killer once its pages are touched. The trainer therefore compares what a
// rank will allocate with what the machine can give before it allocates
// anything (docs/Testing.md, "Bad input"); part of the input-limits policy
// beside getPhysicalMemoryBytes (InputLimits.h), which bounds one tensor.
//
// "Available" is the smaller of the kernel's estimate of the memory it can
// hand out without swapping (MemAvailable in /proc/meminfo) and, inside a
// container with a memory limit, the limit's headroom (cgroup v2's
// memory.max minus memory.current, or v1's limit_in_bytes minus
// usage_in_bytes): the OOM killer acts on whichever is hit first.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_AVAILABLEMEMORY_H
#define LOOM_SUPPORT_AVAILABLEMEMORY_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom::support {

/// Memory the machine can still give this process, and where the number
/// comes from (for messages).
struct AvailableMemory {
  int64_t bytes = 0;
  std::string source;
};

/// Reads /proc/meminfo and the process's memory cgroup limits; nullopt where
/// neither can be read (not Linux), in which case nothing is checked.
std::optional<AvailableMemory> availableHostMemory();

/// MemAvailable of a /proc/meminfo text, in bytes; nullopt if the line is
/// missing or malformed.
std::optional<int64_t> parseMemAvailable(std::string_view meminfo);

/// A memory cgroup's headroom from the texts of its limit and usage files;
/// nullopt for no limit (v2's "max") or malformed text.
std::optional<int64_t> parseCgroupHeadroom(std::string_view max,
                                           std::string_view current);

} // namespace loom::support

#endif // LOOM_SUPPORT_AVAILABLEMEMORY_H

//===- Workspace.cpp - Host memory of one training step -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Workspace.h"
#include "loom/Runtime/Support/StepMemory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace loom::runtime::host {

namespace {

/// What the emitted plan aligns every offset to (emit::kArenaAlignment).
constexpr int64_t kAlignment = 64;

/// The process's arena: one block, grown when a step needs more. Its bytes
/// are dead between steps, so growing copies nothing.
struct ProcessArena {
  char *data = nullptr;
  int64_t bytes = 0;

  char *open(int64_t size) {
    if (size <= bytes && data)
      return data;
    std::free(data);
    int64_t rounded = (std::max<int64_t>(size, 1) + kAlignment - 1) /
                      kAlignment * kAlignment;
    data = static_cast<char *>(
        std::aligned_alloc(kAlignment, static_cast<size_t>(rounded)));
    if (!data) {
      std::fprintf(stderr, "loom: cannot allocate the step's arena of %lld "
                           "bytes\n",
                   static_cast<long long>(size));
      std::abort();
    }
    bytes = size;
    return data;
  }
};

ProcessArena &processArena() {
  static ProcessArena arena;
  return arena;
}

} // namespace

Workspace::Workspace(int64_t arenaBytes, int64_t predictedPeakBytes)
    : arenaBytes(arenaBytes) {
  arena = processArena().open(arenaBytes);
  stepMemory().predictedPeakBytes = predictedPeakBytes;
}

Workspace::~Workspace() {
  StepMemory &record = stepMemory();
  record.arenaBytes = std::max(record.arenaBytes, arenaBytes);
  record.otherBytes = std::max(record.otherBytes, otherBytes);
}

void *Workspace::arenaSlice(int64_t offset, int64_t size) {
  if (offset + size > arenaBytes) {
    // The plan places every buffer inside the arena; reaching this is a
    // Loom bug.
    std::fprintf(stderr,
                 "loom: arena slice [%lld, %lld) outside the step's arena of "
                 "%lld bytes\n",
                 static_cast<long long>(offset),
                 static_cast<long long>(offset + size),
                 static_cast<long long>(arenaBytes));
    std::abort();
  }
  if (size > 0)
    std::memset(arena + offset, 0, static_cast<size_t>(size));
  return arena + offset;
}

void *Workspace::ownBlock(int64_t size) {
  // Never a null pointer, even for an empty tensor: a null reads as
  // "absent" to optional operands.
  blocks.push_back(
      std::make_unique<char[]>(static_cast<size_t>(std::max<int64_t>(size, 1))));
  otherBytes += size;
  return blocks.back().get();
}

} // namespace loom::runtime::host

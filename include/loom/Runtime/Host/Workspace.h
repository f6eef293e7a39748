//===- Workspace.h - Host memory of one training step -----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The memory of one emitted host step (docs/Codegen.md, "Memory"). The
// values the step computes live in one arena, at the offsets of the step's
// static memory plan: two values share bytes only when their lifetimes do
// not overlap, so the step needs its liveness peak, not the sum of its
// buffers. The arena is one 64-byte aligned block of the process, allocated
// by the first step that needs it (grown, never shrunk, when a later step
// needs more) and reused by every step after, so a repeating step allocates
// nothing. A value the step returns is written straight into the caller's
// result buffer; a value the plan keeps out of the arena otherwise is a
// block of its own, freed with the workspace. Fresh buffers are zeroed, as
// the `std::vector<T>(n)` of the steps before the plan were, so no kernel
// sees another value's bytes.
//
// On destruction the workspace records the step's memory in stepMemory()
// (`--report-memory`): the arena, and the other bytes the step held (its
// own blocks, the arguments it read, the results it wrote, its constants).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_HOST_WORKSPACE_H
#define LOOM_RUNTIME_HOST_WORKSPACE_H

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace loom::runtime::host {

class Workspace {
public:
  /// Opens the process's arena with at least `arenaBytes` bytes and records
  /// `predictedPeakBytes`, the compiler's liveness peak for this rank.
  Workspace(int64_t arenaBytes, int64_t predictedPeakBytes);
  ~Workspace();
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;

  /// The zeroed buffer of `count` elements at byte `offset` of the arena; a
  /// negative offset (a value the plan keeps out of the arena) is a block
  /// of its own.
  template <typename T> T *at(int64_t offset, int64_t count) {
    int64_t size = count * static_cast<int64_t>(sizeof(T));
    void *block = offset < 0 ? ownBlock(size) : arenaSlice(offset, size);
    return static_cast<T *>(block);
  }
  /// `result`, `count` zeros: the caller's buffer of a returned value, which
  /// the step computes in place.
  template <typename T> T *result(std::vector<T> &result, int64_t count) {
    result.assign(static_cast<size_t>(count), T(0));
    otherBytes += count * static_cast<int64_t>(sizeof(T));
    return result.data();
  }
  /// `buffer`, the argument's buffer of a carried value the step computes
  /// in its place (no op reads the argument any more), zeroed.
  template <typename T> T *reuse(const T *buffer, int64_t count) {
    T *writable = const_cast<T *>(buffer);
    if (count > 0)
      std::memset(static_cast<void *>(writable), 0,
                  static_cast<size_t>(count) * sizeof(T));
    return writable;
  }
  /// Counts a constant's elements in the step's other memory.
  template <typename T> const T *constant(const std::vector<T> &values) {
    otherBytes += static_cast<int64_t>(values.size() * sizeof(T));
    return values.data();
  }
  /// Counts the arguments' buffers (harness::Buffer: `floats` and `ints`)
  /// in the step's other memory: what the step reads besides its arena.
  template <typename Buffers> void countArguments(const Buffers &args) {
    for (const auto &buffer : args)
      otherBytes += static_cast<int64_t>(
          buffer.floats.size() * sizeof(buffer.floats[0]) +
          buffer.ints.size() * sizeof(buffer.ints[0]));
  }

  int64_t getArenaBytes() const { return arenaBytes; }
  int64_t getOtherBytes() const { return otherBytes; }

private:
  void *arenaSlice(int64_t offset, int64_t size);
  void *ownBlock(int64_t size);

  char *arena = nullptr;
  int64_t arenaBytes = 0;
  int64_t otherBytes = 0;
  std::vector<std::unique_ptr<char[]>> blocks;
};

} // namespace loom::runtime::host

#endif // LOOM_RUNTIME_HOST_WORKSPACE_H

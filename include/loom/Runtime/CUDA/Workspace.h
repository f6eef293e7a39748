//===- Workspace.h - Device memory of one training step ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The device memory of one step. The values an emitted step computes live
// in one arena, at the offsets of the step's static memory plan
// (docs/Codegen.md, "Memory"): two values share bytes only when their
// lifetimes do not overlap, so the step needs its liveness peak, not the sum
// of its buffers. The uploaded arguments and the results (which outlive the
// step) are buffers of their own. Everything comes from the stream's memory
// pool (cudaMallocAsync), so a step that repeats reuses the same memory
// without returning it to the driver, and the destructor frees it
// (cudaFreeAsync, ordered after the step's work on the stream); the stream
// orders every reuse of arena bytes after the work on their previous value.
// Fresh buffers are zeroed, as the host program's std::vector<T>(n) is. Every
// copy between host and device is counted in loom::runtime::deviceTransfers()
// (`--report-transfers`). A buffer that must outlive the step (the resident
// copy of a carried value, cuda::Session) is handed over with release().
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_CUDA_WORKSPACE_H
#define LOOM_RUNTIME_CUDA_WORKSPACE_H

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace loom::runtime::cuda {

class Workspace {
public:
  explicit Workspace(cudaStream_t stream) : stream(stream) {}
  ~Workspace();
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;

  /// A zeroed device buffer of `count` elements.
  template <typename T> T *alloc(int64_t count) {
    return static_cast<T *>(
        allocBytes(count * static_cast<int64_t>(sizeof(T))));
  }
  /// Opens the step's arena of `size` bytes (once, before at()).
  void openArena(int64_t size);
  /// The zeroed buffer of `count` elements at byte `offset` of the arena;
  /// a negative offset (a value the plan keeps out of the arena) is a
  /// buffer of its own.
  template <typename T> T *at(int64_t offset, int64_t count) {
    if (offset < 0)
      return alloc<T>(count);
    return static_cast<T *>(
        arenaSlice(offset, count * static_cast<int64_t>(sizeof(T))));
  }
  /// `buffer`, the device buffer of a carried argument whose new value the
  /// step computes in its place (no op reads the argument any more),
  /// zeroed on the stream as at() zeroes.
  template <typename T> T *reuse(const T *buffer, int64_t count) {
    T *writable = const_cast<T *>(buffer);
    zeroBytes(writable, count * static_cast<int64_t>(sizeof(T)));
    return writable;
  }
  /// A device copy of `values` (enqueued; `values` must outlive the copy,
  /// which holds for the step's arguments and the vectors of constants).
  template <typename T> const T *upload(const std::vector<T> &values) {
    T *device = alloc<T>(static_cast<int64_t>(values.size()));
    copyToDevice(device, values.data(),
                 static_cast<int64_t>(values.size() * sizeof(T)));
    return device;
  }
  /// Copies `count` elements of `device` into `host` (resized), waiting for
  /// the stream.
  template <typename T>
  void download(std::vector<T> &host, const T *device, int64_t count) {
    host.resize(static_cast<size_t>(count));
    copyToHost(host.data(), device, count * static_cast<int64_t>(sizeof(T)));
  }

  /// Stops owning `block` (a buffer this workspace allocated) and returns
  /// it for the caller to free; nullptr when the workspace does not own it
  /// (another name for an argument's buffer, or already released).
  void *release(const void *block);

  cudaStream_t getStream() const { return stream; }
  /// Counts `bytes` of a resident argument the step reads (the session's
  /// block, not the workspace's) in the step's memory (StepMemory).
  void countResident(int64_t bytes) { residentBytes += bytes; }
  /// Bytes allocated so far, the arena included.
  int64_t getBytes() const { return bytes; }

private:
  void *allocBytes(int64_t size);
  void *allocBytesUnzeroed(int64_t size);
  void *arenaSlice(int64_t offset, int64_t size);
  void zeroBytes(void *device, int64_t size);
  void copyToDevice(void *device, const void *host, int64_t size);
  void copyToHost(void *host, const void *device, int64_t size);

  cudaStream_t stream;
  std::vector<void *> blocks;
  int64_t bytes = 0;
  char *arena = nullptr;
  int64_t arenaBytes = 0;
  int64_t residentBytes = 0;
};

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_WORKSPACE_H

//===- Workspace.h - Device memory of one training step ---------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Every value of an emitted step lives in a device buffer that the step
// allocates when the value is defined and frees when the step ends. The
// workspace allocates from the stream's memory pool (cudaMallocAsync), so a
// step that repeats reuses the same memory without returning it to the
// driver, and frees everything in its destructor (cudaFreeAsync, ordered
// after the step's work on the stream). Fresh buffers are zeroed, as the
// host program's std::vector<T>(n) is. Every copy between host and device
// is counted in loom::runtime::deviceTransfers() (`--report-transfers`). A
// buffer that must outlive the step (the resident copy of a carried value,
// cuda::Session) is handed over with release().
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
  /// Bytes allocated so far.
  int64_t getBytes() const { return bytes; }

private:
  void *allocBytes(int64_t size);
  void copyToDevice(void *device, const void *host, int64_t size);
  void copyToHost(void *host, const void *device, int64_t size);

  cudaStream_t stream;
  std::vector<void *> blocks;
  int64_t bytes = 0;
};

} // namespace loom::runtime::cuda

#endif // LOOM_RUNTIME_CUDA_WORKSPACE_H

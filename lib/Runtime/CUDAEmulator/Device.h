//===- Device.h - CUDA emulator: device memory and streams ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Private to the emulator: what cuBLAS, NCCL and launches ask of the
// emulated device (which pointers are device memory, which streams live)
// how the emulator reports misuse, and how work waits in stream order.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUDAEMULATOR_DEVICE_H
#define LOOM_LIB_RUNTIME_CUDAEMULATOR_DEVICE_H

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace loom::cudaemu {

/// Whether [pointer, pointer + bytes) lies inside one live device
/// allocation (any pointer when `bytes` is 0).
bool isDeviceRange(const void *pointer, size_t bytes);

/// Whether `stream` is the default stream or one created and not destroyed.
bool isLiveStream(cudaStream_t stream);

/// Makes `error` the one cudaGetLastError returns next; returns it.
cudaError_t recordError(cudaError_t error);

/// Writes "loom cuda emulator: MESSAGE" to stderr: why a call failed, where
/// the real library would only return a code.
void explain(const std::string &message);

/// Stops the program after explaining: misuse a GPU would not survive.
[[noreturn]] void fatal(const std::string &message);

//===----------------------------------------------------------------------===//
// Stream order (Streams.cpp)
//===----------------------------------------------------------------------===//

/// How far an event has got: `recorded` counts its cudaEventRecord calls,
/// `completed` is the latest of them whose stream has reached it.
struct EventProgress {
  uint64_t recorded = 0;
  uint64_t completed = 0;
};

/// Gives a created stream its place in the scheduler's ranking.
void registerStream(cudaStream_t stream);

/// Runs what `stream` still has pending, then forgets the stream.
void retireStream(cudaStream_t stream);

/// Runs `work` in `stream`'s order: on the default stream now, after all
/// pending work; on a created stream when a synchronization needs it. The
/// caller checks the arguments first: `work` cannot report an error.
void enqueue(cudaStream_t stream, std::function<void()> work);

/// Runs all pending work (cudaDeviceSynchronize, and what the host does:
/// synchronous copies, copies from or to host memory, default-stream work).
void synchronizeAll();

/// Runs pending work until `stream` has none (and what it waits on).
void synchronizeStream(cudaStream_t stream);

/// cudaEventRecord(event, stream).
void recordEvent(const std::shared_ptr<EventProgress> &event,
                 cudaStream_t stream);

/// cudaStreamWaitEvent(stream, event): holds `stream` until the latest
/// record of `event` so far has completed.
void waitForEvent(cudaStream_t stream,
                  const std::shared_ptr<EventProgress> &event);

/// cudaEventSynchronize(event).
void synchronizeEvent(const std::shared_ptr<EventProgress> &event);

} // namespace loom::cudaemu

#endif // LOOM_LIB_RUNTIME_CUDAEMULATOR_DEVICE_H

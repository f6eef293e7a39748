//===- Device.cpp - CUDA emulator: the runtime API ------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Devices, device memory, copies, streams and events of the CUDA runtime
// API, on the host:
//
//   - device memory is aligned host memory (256 bytes, as cudaMalloc
//     promises) listed in a registry, filled with 0xFF bytes when allocated
//     (NaN in f32 and f64) so a read of memory nobody wrote shows up;
//   - every copy and memset checks its pointers against the registry and the
//     direction it was given, and fails with cudaErrorInvalidValue (and a
//     line on stderr) where a GPU would fault or copy the wrong way;
//   - work on a created stream (async device-to-device copies, memsets,
//     frees; launches, cuBLAS and NCCL calls elsewhere) is checked when it is
//     enqueued and runs later in stream order, events ordering the streams
//     (Streams.cpp); a synchronous copy or memset, and an async copy from or
//     to host memory, first runs all pending work;
//   - the device count is $LOOM_CUDA_EMULATOR_DEVICES (8 when unset).
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

struct CUstream_st {
  unsigned flags;
};
struct CUevent_st {
  unsigned flags;
  std::shared_ptr<loom::cudaemu::EventProgress> progress;
};

namespace loom::cudaemu {

namespace {

constexpr size_t kAlignment = 256;

/// The process's emulated device state. Guarded by one mutex: the runtime
/// API may be called from several host threads.
struct DeviceState {
  std::mutex mutex;
  /// Start address -> size of each live allocation.
  std::map<uintptr_t, size_t> allocations;
  std::set<cudaStream_t> streams;
  std::set<cudaEvent_t> events;
};

DeviceState &state() {
  // Never destroyed: programs free device memory from static destructors.
  static DeviceState *instance = new DeviceState();
  return *instance;
}

thread_local cudaError_t lastError = cudaSuccess;
thread_local int currentDevice = 0;

int deviceCount() {
  static int count = [] {
    const char *text = std::getenv("LOOM_CUDA_EMULATOR_DEVICES");
    if (!text || !*text)
      return 8;
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (*end || value < 0 || value > 1024)
      fatal(std::string("LOOM_CUDA_EMULATOR_DEVICES must be a device count "
                        "in [0, 1024], not '") +
            text + "'");
    return static_cast<int>(value);
  }();
  return count;
}

/// The allocation holding [pointer, pointer + bytes), if any (lock held).
bool insideAllocation(DeviceState &s, uintptr_t begin, size_t bytes) {
  auto it = s.allocations.upper_bound(begin);
  if (it == s.allocations.begin())
    return false;
  --it;
  return begin + bytes <= it->first + it->second && begin >= it->first;
}

bool touchesAllocation(DeviceState &s, uintptr_t begin, size_t bytes) {
  if (insideAllocation(s, begin, bytes ? 1 : 0))
    return true;
  auto it = s.allocations.lower_bound(begin);
  return it != s.allocations.end() && it->first < begin + bytes;
}

std::string describe(const void *pointer, size_t bytes) {
  char text[96];
  std::snprintf(text, sizeof(text), "[%p, +%zu bytes)", pointer, bytes);
  return text;
}

const char *kindName(cudaMemcpyKind kind) {
  switch (kind) {
  case cudaMemcpyHostToHost:
    return "cudaMemcpyHostToHost";
  case cudaMemcpyHostToDevice:
    return "cudaMemcpyHostToDevice";
  case cudaMemcpyDeviceToHost:
    return "cudaMemcpyDeviceToHost";
  case cudaMemcpyDeviceToDevice:
    return "cudaMemcpyDeviceToDevice";
  case cudaMemcpyDefault:
    return "cudaMemcpyDefault";
  }
  return "an unknown cudaMemcpyKind";
}

/// Checks that each side of a copy is the memory `kind` says: `dstSpan` and
/// `srcSpan` bytes from each pointer.
cudaError_t checkCopy(const char *call, void *dst, size_t dstSpan,
                      const void *src, size_t srcSpan, cudaMemcpyKind kind) {
  if (dstSpan == 0 && srcSpan == 0)
    return cudaSuccess;
  if (!dst || !src) {
    explain(std::string(call) + ": null pointer");
    return recordError(cudaErrorInvalidValue);
  }
  DeviceState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto d = reinterpret_cast<uintptr_t>(dst);
  auto r = reinterpret_cast<uintptr_t>(src);
  bool dstDevice = insideAllocation(s, d, dstSpan);
  bool srcDevice = insideAllocation(s, r, srcSpan);
  bool dstHost = !touchesAllocation(s, d, dstSpan);
  bool srcHost = !touchesAllocation(s, r, srcSpan);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) {
    explain(std::string(call) + ": " + kindName(kind));
    return recordError(cudaErrorInvalidMemcpyDirection);
  }
  bool wantDstDevice = false, wantSrcDevice = false;
  switch (kind) {
  case cudaMemcpyHostToHost:
    wantDstDevice = wantSrcDevice = false;
    break;
  case cudaMemcpyHostToDevice:
    wantDstDevice = true, wantSrcDevice = false;
    break;
  case cudaMemcpyDeviceToHost:
    wantDstDevice = false, wantSrcDevice = true;
    break;
  case cudaMemcpyDeviceToDevice:
    wantDstDevice = wantSrcDevice = true;
    break;
  case cudaMemcpyDefault:
    if ((dstDevice || dstHost) && (srcDevice || srcHost))
      return cudaSuccess;
    explain(std::string(call) + ": " + describe(dst, dstSpan) + " or " +
            describe(src, srcSpan) + " straddles the end of an allocation");
    return recordError(cudaErrorInvalidValue);
  }
  auto side = [&](const char *which, const void *p, size_t span, bool want,
                  bool isDevice, bool isHost) {
    if (want ? isDevice : isHost)
      return true;
    explain(std::string(call) + " with " + kindName(kind) + ": the " + which +
            " " + describe(p, span) + " is not " +
            (want ? "inside one device allocation" : "host memory"));
    return false;
  };
  if (!side("destination", dst, dstSpan, wantDstDevice, dstDevice, dstHost) ||
      !side("source", src, srcSpan, wantSrcDevice, srcDevice, srcHost))
    return recordError(cudaErrorInvalidValue);
  return cudaSuccess;
}

cudaError_t checkStream(const char *call, cudaStream_t stream) {
  if (isLiveStream(stream))
    return cudaSuccess;
  explain(std::string(call) + ": the stream was never created or was "
                              "destroyed");
  return recordError(cudaErrorInvalidResourceHandle);
}

/// Runs an async copy of [src, src + bytes) to dst: in `stream`'s order
/// when both sides are device memory, else now after all pending work (as a
/// GPU copies pageable host memory before the call returns, and a program
/// reads what it copied to the host after a synchronization).
void runCopy(void *dst, const void *src, size_t bytes, cudaStream_t stream,
             std::function<void()> copy) {
  if (isDeviceRange(dst, bytes) && isDeviceRange(src, bytes)) {
    enqueue(stream, std::move(copy));
    return;
  }
  synchronizeAll();
  copy();
}

cudaError_t allocate(void **devPtr, size_t size) {
  if (!devPtr)
    return recordError(cudaErrorInvalidValue);
  *devPtr = nullptr;
  if (size == 0)
    return cudaSuccess;
  size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  void *memory = std::aligned_alloc(kAlignment, rounded);
  if (!memory)
    return recordError(cudaErrorMemoryAllocation);
  std::memset(memory, 0xFF, rounded);
  DeviceState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.allocations[reinterpret_cast<uintptr_t>(memory)] = size;
  *devPtr = memory;
  return cudaSuccess;
}

/// Takes `devPtr` out of the registry, or explains why it is not there.
cudaError_t unregister(const char *call, void *devPtr) {
  DeviceState &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.allocations.find(reinterpret_cast<uintptr_t>(devPtr));
    if (it == s.allocations.end()) {
      explain(std::string(call) + ": " + describe(devPtr, 0) +
              " is not the start of a live device allocation");
      return recordError(cudaErrorInvalidValue);
    }
    s.allocations.erase(it);
  }
  return cudaSuccess;
}

cudaError_t release(const char *call, void *devPtr) {
  if (!devPtr)
    return cudaSuccess;
  synchronizeAll();
  if (cudaError_t error = unregister(call, devPtr))
    return error;
  std::free(devPtr);
  return cudaSuccess;
}

/// The event's progress, or null when `event` is not a live event.
std::shared_ptr<EventProgress> progressOf(cudaEvent_t event) {
  DeviceState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!event || !s.events.count(event))
    return nullptr;
  return event->progress;
}

} // namespace

bool isDeviceRange(const void *pointer, size_t bytes) {
  if (bytes == 0)
    return true;
  DeviceState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return insideAllocation(s, reinterpret_cast<uintptr_t>(pointer), bytes);
}

bool isLiveStream(cudaStream_t stream) {
  if (!stream)
    return true;
  DeviceState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.streams.count(stream) != 0;
}

cudaError_t recordError(cudaError_t error) {
  if (error != cudaSuccess)
    lastError = error;
  return error;
}

void explain(const std::string &message) {
  std::fprintf(stderr, "loom cuda emulator: %s\n", message.c_str());
}

void fatal(const std::string &message) {
  explain(message);
  std::fflush(stderr);
  std::abort();
}

} // namespace loom::cudaemu

using namespace loom::cudaemu;

extern "C" {

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count)
    return recordError(cudaErrorInvalidValue);
  *count = deviceCount();
  return *count ? cudaSuccess : recordError(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= deviceCount())
    return recordError(cudaErrorInvalidDevice);
  currentDevice = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
  if (!device)
    return recordError(cudaErrorInvalidValue);
  *device = currentDevice;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  synchronizeAll();
  return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
  cudaError_t error = lastError;
  lastError = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError(void) { return lastError; }

const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration:
    return "cudaErrorInvalidConfiguration";
  case cudaErrorInvalidMemcpyDirection:
    return "cudaErrorInvalidMemcpyDirection";
  case cudaErrorNoDevice:
    return "cudaErrorNoDevice";
  case cudaErrorInvalidDevice:
    return "cudaErrorInvalidDevice";
  case cudaErrorInvalidResourceHandle:
    return "cudaErrorInvalidResourceHandle";
  }
  return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  case cudaErrorInvalidMemcpyDirection:
    return "invalid copy direction for memcpy";
  case cudaErrorNoDevice:
    return "no CUDA-capable device is detected";
  case cudaErrorInvalidDevice:
    return "invalid device ordinal";
  case cudaErrorInvalidResourceHandle:
    return "invalid resource handle";
  }
  return "unknown error";
}

cudaError_t cudaMalloc(void **devPtr, size_t size) {
  return allocate(devPtr, size);
}

cudaError_t cudaFree(void *devPtr) { return release("cudaFree", devPtr); }

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream) {
  if (cudaError_t error = checkStream("cudaMallocAsync", stream))
    return error;
  return allocate(devPtr, size);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream) {
  if (cudaError_t error = checkStream("cudaFreeAsync", stream))
    return error;
  if (!devPtr)
    return cudaSuccess;
  // Out of the registry now (a second free is an error at once); the memory
  // itself stays until the stream's earlier work, which may use it, has run.
  if (cudaError_t error = unregister("cudaFreeAsync", devPtr))
    return error;
  enqueue(stream, [devPtr] { std::free(devPtr); });
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device) {
  if (!memPool)
    return recordError(cudaErrorInvalidValue);
  if (device < 0 || device >= deviceCount())
    return recordError(cudaErrorInvalidDevice);
  // A distinct non-null handle per device; nothing is behind it.
  static char handles[64];
  *memPool = reinterpret_cast<cudaMemPool_t>(&handles[device % 64]);
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool,
                                    cudaMemPoolAttr attr, void *value) {
  if (!memPool || !value || attr != cudaMemPoolAttrReleaseThreshold)
    return recordError(cudaErrorInvalidValue);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       cudaMemcpyKind kind) {
  if (cudaError_t error = checkCopy("cudaMemcpy", dst, count, src, count, kind))
    return error;
  synchronizeAll();
  if (count)
    std::memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            cudaMemcpyKind kind, cudaStream_t stream) {
  if (cudaError_t error = checkStream("cudaMemcpyAsync", stream))
    return error;
  if (cudaError_t error =
          checkCopy("cudaMemcpyAsync", dst, count, src, count, kind))
    return error;
  if (count)
    runCopy(dst, src, count, stream, [=] { std::memmove(dst, src, count); });
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream) {
  if (cudaError_t error = checkStream("cudaMemcpy2DAsync", stream))
    return error;
  if (width > dpitch || width > spitch) {
    explain("cudaMemcpy2DAsync: a row of " + std::to_string(width) +
            " bytes exceeds a pitch (" + std::to_string(dpitch) + ", " +
            std::to_string(spitch) + ")");
    return recordError(cudaErrorInvalidValue);
  }
  if (width == 0 || height == 0)
    return cudaSuccess;
  size_t dstSpan = dpitch * (height - 1) + width;
  size_t srcSpan = spitch * (height - 1) + width;
  if (cudaError_t error = checkCopy("cudaMemcpy2DAsync", dst, dstSpan, src,
                                    srcSpan, kind))
    return error;
  runCopy(dst, src, 1, stream, [=] {
    for (size_t row = 0; row < height; ++row)
      std::memmove(static_cast<char *>(dst) + row * dpitch,
                   static_cast<const char *>(src) + row * spitch, width);
  });
  return cudaSuccess;
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
  if (count && !isDeviceRange(devPtr, count)) {
    explain("cudaMemset: " + describe(devPtr, count) +
            " is not inside one device allocation");
    return recordError(cudaErrorInvalidValue);
  }
  synchronizeAll();
  if (count)
    std::memset(devPtr, value, count);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
                            cudaStream_t stream) {
  if (cudaError_t error = checkStream("cudaMemsetAsync", stream))
    return error;
  if (count && !isDeviceRange(devPtr, count)) {
    explain("cudaMemsetAsync: " + describe(devPtr, count) +
            " is not inside one device allocation");
    return recordError(cudaErrorInvalidValue);
  }
  if (count)
    enqueue(stream, [=] { std::memset(devPtr, value, count); });
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags) {
  if (!stream || (flags & ~unsigned(cudaStreamNonBlocking)))
    return recordError(cudaErrorInvalidValue);
  *stream = new CUstream_st{flags};
  registerStream(*stream);
  DeviceState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.streams.insert(*stream);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream || !isLiveStream(stream))
    return recordError(cudaErrorInvalidResourceHandle);
  // A GPU finishes the stream's work after the call returns; here it runs
  // first, before the handle goes.
  retireStream(stream);
  DeviceState &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.streams.erase(stream);
  }
  // Not freed: a later stream must not reuse the address and bring a
  // destroyed handle back to life (a handle is a few bytes).
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (cudaError_t error = checkStream("cudaStreamSynchronize", stream))
    return error;
  synchronizeStream(stream);
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned flags) {
  if (cudaError_t error = checkStream("cudaStreamWaitEvent", stream))
    return error;
  std::shared_ptr<EventProgress> progress = progressOf(event);
  if (!progress)
    return recordError(cudaErrorInvalidResourceHandle);
  if (flags)
    return recordError(cudaErrorInvalidValue);
  waitForEvent(stream, progress);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags) {
  if (!event)
    return recordError(cudaErrorInvalidValue);
  *event = new CUevent_st{flags, std::make_shared<EventProgress>()};
  DeviceState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.events.insert(*event);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (cudaError_t error = checkStream("cudaEventRecord", stream))
    return error;
  std::shared_ptr<EventProgress> progress = progressOf(event);
  if (!progress)
    return recordError(cudaErrorInvalidResourceHandle);
  recordEvent(progress, stream);
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  std::shared_ptr<EventProgress> progress = progressOf(event);
  if (!progress)
    return recordError(cudaErrorInvalidResourceHandle);
  synchronizeEvent(progress);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  DeviceState &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!event || !s.events.erase(event))
      return recordError(cudaErrorInvalidResourceHandle);
  }
  // Not freed, as streams.
  return cudaSuccess;
}

} // extern "C"

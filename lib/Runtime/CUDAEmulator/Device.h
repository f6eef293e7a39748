//===- Device.h - CUDA emulator: device memory and streams ------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Private to the emulator: what cuBLAS, NCCL and launches ask of the
// emulated device (which pointers are device memory, which streams live)
// and how the emulator reports misuse.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUDAEMULATOR_DEVICE_H
#define LOOM_LIB_RUNTIME_CUDAEMULATOR_DEVICE_H

#include <cuda_runtime_api.h>

#include <cstddef>
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

} // namespace loom::cudaemu

#endif // LOOM_LIB_RUNTIME_CUDAEMULATOR_DEVICE_H

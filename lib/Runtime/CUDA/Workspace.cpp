//===- Workspace.cpp - Device memory of one training step -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Workspace.h"
#include "loom/Runtime/CUDA/Check.h"
#include "loom/Runtime/Support/StepMemory.h"
#include "loom/Runtime/Support/Transfers.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace loom::runtime::cuda {

Workspace::~Workspace() {
  StepMemory &record = stepMemory();
  record.arenaBytes = std::max(record.arenaBytes, arenaBytes);
  record.otherBytes =
      std::max(record.otherBytes, bytes - arenaBytes + residentBytes);
  for (void *block : blocks)
    LOOM_CUDA_CHECK(cudaFreeAsync(block, stream));
}

void Workspace::openArena(int64_t size) {
  if (arena) {
    // The emitter opens it once, first; reaching this is a Loom bug.
    std::fprintf(stderr, "loom: the step opened its arena twice\n");
    std::abort();
  }
  arena = static_cast<char *>(allocBytesUnzeroed(size));
  arenaBytes = size;
}

void *Workspace::arenaSlice(int64_t offset, int64_t size) {
  if (!arena || offset + size > arenaBytes) {
    std::fprintf(stderr,
                 "loom: arena slice [%lld, %lld) outside the step's arena of "
                 "%lld bytes\n",
                 static_cast<long long>(offset),
                 static_cast<long long>(offset + size),
                 static_cast<long long>(arenaBytes));
    std::abort();
  }
  if (size > 0)
    LOOM_CUDA_CHECK(cudaMemsetAsync(arena + offset, 0, size, stream));
  return arena + offset;
}

void Workspace::zeroBytes(void *device, int64_t size) {
  if (size > 0)
    LOOM_CUDA_CHECK(cudaMemsetAsync(device, 0, size, stream));
}

void *Workspace::allocBytesUnzeroed(int64_t size) {
  // Never a null pointer, even for an empty tensor: kernels are not launched
  // for those, but a null would read as "absent" to optional operands.
  void *block = nullptr;
  LOOM_CUDA_CHECK(cudaMallocAsync(&block, size > 0 ? size : 1, stream));
  blocks.push_back(block);
  bytes += size;
  return block;
}

void *Workspace::allocBytes(int64_t size) {
  void *block = allocBytesUnzeroed(size);
  if (size > 0)
    LOOM_CUDA_CHECK(cudaMemsetAsync(block, 0, size, stream));
  return block;
}

void *Workspace::release(const void *block) {
  auto it = std::find(blocks.begin(), blocks.end(), block);
  if (it == blocks.end())
    return nullptr;
  void *owned = *it;
  blocks.erase(it);
  return owned;
}

void Workspace::copyToDevice(void *device, const void *host, int64_t size) {
  deviceTransfers().toDevice += size;
  if (size > 0)
    LOOM_CUDA_CHECK(
        cudaMemcpyAsync(device, host, size, cudaMemcpyHostToDevice, stream));
}

void Workspace::copyToHost(void *host, const void *device, int64_t size) {
  deviceTransfers().toHost += size;
  if (size > 0)
    LOOM_CUDA_CHECK(
        cudaMemcpyAsync(host, device, size, cudaMemcpyDeviceToHost, stream));
  LOOM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

} // namespace loom::runtime::cuda

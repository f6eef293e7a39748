//===- Workspace.cpp - Device memory of one training step -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Workspace.h"
#include "loom/Runtime/CUDA/Check.h"
#include "loom/Runtime/Support/Transfers.h"

#include <algorithm>

namespace loom::runtime::cuda {

Workspace::~Workspace() {
  for (void *block : blocks)
    LOOM_CUDA_CHECK(cudaFreeAsync(block, stream));
}

void *Workspace::allocBytes(int64_t size) {
  // Never a null pointer, even for an empty tensor: kernels are not launched
  // for those, but a null would read as "absent" to optional operands.
  void *block = nullptr;
  LOOM_CUDA_CHECK(cudaMallocAsync(&block, size > 0 ? size : 1, stream));
  if (size > 0)
    LOOM_CUDA_CHECK(cudaMemsetAsync(block, 0, size, stream));
  blocks.push_back(block);
  bytes += size;
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

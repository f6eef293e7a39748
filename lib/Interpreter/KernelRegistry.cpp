//===- KernelRegistry.cpp - How the interpreter runs each op --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/KernelRegistry.h"
#include "loom/Analysis/Cost/InPlaceReuse.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

namespace mlir::loom::interp {

const HostTensor &KernelContext::get(Value value) const {
  auto it = values.find(value.getAsOpaquePointer());
  assert(it != values.end() && "operand used before its definition");
  return it->second;
}

HostTensor &KernelContext::allocate(Value result) {
  Shape shape;
  if (auto tensorType = dyn_cast<RankedTensorType>(result.getType()))
    shape.assign(tensorType.getShape().begin(), tensorType.getShape().end());
  StorageKind kind = storageKindFor(result.getType(), floatKind);
  if (std::optional<BlockArgument> donor =
          inPlace ? inPlace->getDonor(result) : std::nullopt) {
    // The argument's storage, when no one else (the caller, another rank's
    // replica, a message in flight) shares it: the donor has the result's
    // type, so its kind and shape.
    auto held = values.find(donor->getAsOpaquePointer());
    if (held != values.end() && held->second.ownsStorageAlone() &&
        held->second.getKind() == kind && held->second.getShape() == shape) {
      HostTensor storage = held->second;
      if (!inPlace->readsDonor(result))
        std::fill_n(storage.mutableRawData(), storage.getByteSize(), 0);
      HostTensor &slot = values[result.getAsOpaquePointer()];
      slot = std::move(storage);
      return slot;
    }
  }
  HostTensor &slot = values[result.getAsOpaquePointer()];
  slot = HostTensor::allocate(kind, std::move(shape));
  return slot;
}

void KernelContext::bind(Value result, HostTensor tensor) {
  values[result.getAsOpaquePointer()] = std::move(tensor);
}

const KernelFn *KernelRegistry::lookup(llvm::StringRef name) const {
  auto it = kernels.find(name);
  return it == kernels.end() ? nullptr : &it->second;
}

const KernelRegistry &KernelRegistry::getDefault() {
  // The table of every op family's kernels. A new family adds its register
  // function here (and declares it in KernelRegistry.h).
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerMatmulKernels(r);
    registerElementwiseKernels(r);
    registerReductionKernels(r);
    registerShapeKernels(r);
    registerActivationKernels(r);
    registerAttentionKernels(r);
    registerEmbeddingKernels(r);
    registerLossKernels(r);
    registerNormalizationKernels(r);
    registerOptimizerKernels(r);
    registerLossScalingKernels(r);
    registerRandomKernels(r);
    registerSoftmaxKernels(r);
    return r;
  }();
  return registry;
}

} // namespace mlir::loom::interp

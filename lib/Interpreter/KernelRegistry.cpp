//===- KernelRegistry.cpp - How the interpreter runs each op --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Interpreter/KernelRegistry.h"

#include "mlir/IR/BuiltinTypes.h"

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
  HostTensor &slot = values[result.getAsOpaquePointer()];
  slot = HostTensor::allocate(storageKindFor(result.getType(), floatKind),
                              std::move(shape));
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

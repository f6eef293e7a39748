//===- Loss.cpp - Interpreter kernels of cross_entropy --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Loss.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

static KernelStatus toKernelStatus(const host::Status &status) {
  if (status.ok())
    return std::nullopt;
  return status.message();
}

static KernelStatus runCrossEntropy(CrossEntropyOp op, KernelContext &ctx) {
  const HostTensor &logits = ctx.get(op.getLogits());
  const HostTensor &labels = ctx.get(op.getLabels());
  HostTensor &loss = ctx.allocate(op.getResult());
  int64_t ignoreIndex = op.getIgnoreIndexAttr().getInt();
  return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
    using T = decltype(zero);
    return toKernelStatus(host::crossEntropy<T>(
        logits.data<T>(), logits.getShape(), labels.data<int64_t>(),
        ignoreIndex, loss.mutableData<T>()));
  });
}

static KernelStatus runCrossEntropyGrad(CrossEntropyGradOp op,
                                        KernelContext &ctx) {
  const HostTensor &logits = ctx.get(op.getLogits());
  const HostTensor &labels = ctx.get(op.getLabels());
  const HostTensor &dloss = ctx.get(op.getDloss());
  HostTensor &dlogits = ctx.allocate(op.getResult());
  int64_t ignoreIndex = op.getIgnoreIndexAttr().getInt();
  return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
    using T = decltype(zero);
    return toKernelStatus(host::crossEntropyGrad<T>(
        logits.data<T>(), logits.getShape(), labels.data<int64_t>(),
        dloss.data<T>()[0], ignoreIndex, dlogits.mutableData<T>()));
  });
}

void registerLossKernels(KernelRegistry &registry) {
  registry.add<CrossEntropyOp>(runCrossEntropy);
  registry.add<CrossEntropyGradOp>(runCrossEntropyGrad);
}

} // namespace mlir::loom::interp

//===- Loss.cpp - Interpreter kernels of cross_entropy --------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// cross_entropy, cross_entropy_grad (both in their global and local forms:
// `sum`, and an `offset` for a block of columns of log-probabilities) and
// label_count.
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

/// The local form's column offset, or null in the global form.
static const int64_t *getOffset(Value offset, KernelContext &ctx) {
  return offset ? ctx.get(offset).data<int64_t>() : nullptr;
}

static KernelStatus runCrossEntropy(CrossEntropyOp op, KernelContext &ctx) {
  const HostTensor &logits = ctx.get(op.getLogits());
  const HostTensor &labels = ctx.get(op.getLabels());
  const int64_t *offset = getOffset(op.getOffset(), ctx);
  HostTensor &loss = ctx.allocate(op.getResult());
  int64_t ignoreIndex = op.getIgnoreIndexAttr().getInt();
  return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
    using T = decltype(zero);
    return toKernelStatus(host::crossEntropyLocal<T>(
        logits.data<T>(), logits.getShape(), labels.data<int64_t>(),
        ignoreIndex, offset, op.getSum(), loss.mutableData<T>()));
  });
}

static KernelStatus runCrossEntropyGrad(CrossEntropyGradOp op,
                                        KernelContext &ctx) {
  const HostTensor &logits = ctx.get(op.getLogits());
  const HostTensor &labels = ctx.get(op.getLabels());
  const HostTensor &dloss = ctx.get(op.getDloss());
  const int64_t *offset = getOffset(op.getOffset(), ctx);
  HostTensor &dlogits = ctx.allocate(op.getResult());
  int64_t ignoreIndex = op.getIgnoreIndexAttr().getInt();
  return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
    using T = decltype(zero);
    return toKernelStatus(host::crossEntropyGradLocal<T>(
        logits.data<T>(), logits.getShape(), labels.data<int64_t>(),
        dloss.data<T>()[0], ignoreIndex, offset, op.getSum(),
        dlogits.mutableData<T>()));
  });
}

static KernelStatus runLabelCount(LabelCountOp op, KernelContext &ctx) {
  const HostTensor &labels = ctx.get(op.getLabels());
  HostTensor &count = ctx.allocate(op.getResult());
  int64_t ignoreIndex = op.getIgnoreIndexAttr().getInt();
  return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
    using T = decltype(zero);
    host::labelCount<T>(labels.data<int64_t>(), labels.getNumElements(),
                        ignoreIndex, count.mutableData<T>());
    return std::nullopt;
  });
}

void registerLossKernels(KernelRegistry &registry) {
  registry.add<CrossEntropyOp>(runCrossEntropy);
  registry.add<CrossEntropyGradOp>(runCrossEntropyGrad);
  registry.add<LabelCountOp>(runLabelCount);
}

} // namespace mlir::loom::interp

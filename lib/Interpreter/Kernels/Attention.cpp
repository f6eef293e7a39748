//===- Attention.cpp - Interpreter kernels of attention and rope ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Attention.h"
#include "loom/Runtime/Host/Rope.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

static std::optional<double> scaleOf(std::optional<llvm::APFloat> scale) {
  if (!scale)
    return std::nullopt;
  return scale->convertToDouble();
}

static KernelStatus runAttention(AttentionOp op, KernelContext &ctx) {
  const HostTensor &q = ctx.get(op.getQuery());
  const HostTensor &k = ctx.get(op.getKey());
  const HostTensor &v = ctx.get(op.getValue());
  const HostTensor *mask = op.getMask() ? &ctx.get(op.getMask()) : nullptr;
  HostTensor &out = ctx.allocate(op.getResult());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::attention<T>(q.data<T>(), q.getShape(), k.data<T>(), k.getShape(),
                       v.data<T>(), v.getShape(),
                       mask ? mask->data<T>() : nullptr,
                       mask ? mask->getShape() : Shape(), op.getCausal(),
                       scaleOf(op.getScale()), out.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runAttentionGrad(AttentionGradOp op, KernelContext &ctx) {
  const HostTensor &q = ctx.get(op.getQuery());
  const HostTensor &k = ctx.get(op.getKey());
  const HostTensor &v = ctx.get(op.getValue());
  const HostTensor &out = ctx.get(op.getOut());
  const HostTensor &dout = ctx.get(op.getDout());
  const HostTensor *mask = op.getMask() ? &ctx.get(op.getMask()) : nullptr;
  HostTensor &dq = ctx.allocate(op.getDquery());
  HostTensor &dk = ctx.allocate(op.getDkey());
  HostTensor &dv = ctx.allocate(op.getDvalue());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::attentionGrad<T>(
        q.data<T>(), q.getShape(), k.data<T>(), k.getShape(), v.data<T>(),
        v.getShape(), out.data<T>(), dout.data<T>(),
        mask ? mask->data<T>() : nullptr,
        mask ? mask->getShape() : Shape(), op.getCausal(),
        scaleOf(op.getScale()), dq.mutableData<T>(), dk.mutableData<T>(),
        dv.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runRope(RopeOp op, KernelContext &ctx) {
  const HostTensor &x = ctx.get(op.getInput());
  const HostTensor *positions =
      op.getPositions() ? &ctx.get(op.getPositions()) : nullptr;
  HostTensor &y = ctx.allocate(op.getResult());
  double theta = op.getThetaAttr().getValueAsDouble();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::rope<T>(x.data<T>(), x.getShape(),
                  positions ? positions->data<int64_t>() : nullptr,
                  positions ? positions->getShape() : Shape(), theta,
                  op.getInverse(), y.mutableData<T>());
  });
  return std::nullopt;
}

void registerAttentionKernels(KernelRegistry &registry) {
  registry.add<AttentionOp>(runAttention);
  registry.add<AttentionGradOp>(runAttentionGrad);
  registry.add<RopeOp>(runRope);
}

} // namespace mlir::loom::interp

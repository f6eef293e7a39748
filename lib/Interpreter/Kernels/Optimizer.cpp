//===- Optimizer.cpp - Interpreter kernels of the optimizer updates -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Optimizer.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

/// The learning rate of an update: the compiled `lr`, times the step's
/// `lr_scale` when the update has one, in f64 as the emitted programs
/// compute it (so a factor of 1 keeps the compiled rate's bits).
static double learningRate(FloatAttr lr, Value scale, KernelContext &ctx) {
  double base = lr.getValueAsDouble();
  if (!scale)
    return base;
  const HostTensor &tensor = ctx.get(scale);
  double factor = 0;
  dispatchFloat(tensor.getKind(), [&](auto zero) {
    using T = decltype(zero);
    factor = static_cast<double>(tensor.data<T>()[0]);
  });
  return base * factor;
}

static KernelStatus runSgdUpdate(SgdUpdateOp op, KernelContext &ctx) {
  const HostTensor &param = ctx.get(op.getParam());
  const HostTensor &grad = ctx.get(op.getGrad());
  const HostTensor *buf =
      op.getMomentumBuf() ? &ctx.get(op.getMomentumBuf()) : nullptr;
  HostTensor &newParam = ctx.allocate(op.getNewParam());
  HostTensor *newBuf =
      op.getNewMomentumBuf() ? &ctx.allocate(op.getNewMomentumBuf()) : nullptr;
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::sgdUpdate<T>(
        param.data<T>(), grad.data<T>(), buf ? buf->data<T>() : nullptr,
        param.getShape(), learningRate(op.getLrAttr(), op.getLrScale(), ctx),
        op.getMomentumAttr().getValueAsDouble(),
        op.getWeightDecayAttr().getValueAsDouble(),
        op.getDampeningAttr().getValueAsDouble(), op.getNesterov(),
        newParam.mutableData<T>(), newBuf ? newBuf->mutableData<T>() : nullptr);
  });
  return std::nullopt;
}

static KernelStatus runAdamwUpdate(AdamwUpdateOp op, KernelContext &ctx) {
  const HostTensor &param = ctx.get(op.getParam());
  const HostTensor &grad = ctx.get(op.getGrad());
  const HostTensor &expAvg = ctx.get(op.getExpAvg());
  const HostTensor &expAvgSq = ctx.get(op.getExpAvgSq());
  int64_t step = ctx.get(op.getStep()).data<int64_t>()[0];
  HostTensor &newParam = ctx.allocate(op.getNewParam());
  HostTensor &newExpAvg = ctx.allocate(op.getNewExpAvg());
  HostTensor &newExpAvgSq = ctx.allocate(op.getNewExpAvgSq());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::adamwUpdate<T>(param.data<T>(), grad.data<T>(), expAvg.data<T>(),
                         expAvgSq.data<T>(), param.getShape(), step,
                         learningRate(op.getLrAttr(), op.getLrScale(), ctx),
                         op.getBeta1Attr().getValueAsDouble(),
                         op.getBeta2Attr().getValueAsDouble(),
                         op.getEpsAttr().getValueAsDouble(),
                         op.getWeightDecayAttr().getValueAsDouble(),
                         newParam.mutableData<T>(), newExpAvg.mutableData<T>(),
                         newExpAvgSq.mutableData<T>());
  });
  return std::nullopt;
}

void registerOptimizerKernels(KernelRegistry &registry) {
  registry.add<SgdUpdateOp>(runSgdUpdate);
  registry.add<AdamwUpdateOp>(runAdamwUpdate);
}

} // namespace mlir::loom::interp

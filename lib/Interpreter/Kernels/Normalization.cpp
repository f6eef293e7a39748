//===- Normalization.cpp - Interpreter kernels of layer_norm and rms_norm -===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Normalization.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

/// The elements of an optional float operand, or null when it is absent.
template <typename T>
static const T *optionalData(Value value, KernelContext &ctx) {
  return value ? ctx.get(value).data<T>() : nullptr;
}

static KernelStatus runLayerNorm(LayerNormOp op, KernelContext &ctx) {
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &y = ctx.allocate(op.getResult());
  double eps = op.getEpsAttr().getValueAsDouble();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::layerNorm<T>(x.data<T>(), x.getShape(),
                       optionalData<T>(op.getGamma(), ctx),
                       optionalData<T>(op.getBeta(), ctx), eps,
                       y.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runRmsNorm(RmsNormOp op, KernelContext &ctx) {
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &y = ctx.allocate(op.getResult());
  double eps = op.getEpsAttr().getValueAsDouble();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::rmsNorm<T>(x.data<T>(), x.getShape(),
                     optionalData<T>(op.getGamma(), ctx), eps,
                     y.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runLayerNormGrad(LayerNormGradOp op, KernelContext &ctx) {
  const HostTensor &grad = ctx.get(op.getGrad());
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &dx = ctx.allocate(op.getDx());
  HostTensor *dgamma = nullptr, *dbeta = nullptr;
  if (op.getGamma()) {
    dgamma = &ctx.allocate(op.getParamGrads()[0]);
    dbeta = &ctx.allocate(op.getParamGrads()[1]);
  }
  double eps = op.getEpsAttr().getValueAsDouble();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::layerNormGrad<T>(grad.data<T>(), x.data<T>(), x.getShape(),
                           optionalData<T>(op.getGamma(), ctx), eps,
                           dx.mutableData<T>(),
                           dgamma ? dgamma->mutableData<T>() : nullptr,
                           dbeta ? dbeta->mutableData<T>() : nullptr);
  });
  return std::nullopt;
}

static KernelStatus runRmsNormGrad(RmsNormGradOp op, KernelContext &ctx) {
  const HostTensor &grad = ctx.get(op.getGrad());
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &dx = ctx.allocate(op.getDx());
  HostTensor *dgamma = op.getDgamma() ? &ctx.allocate(op.getDgamma()) : nullptr;
  double eps = op.getEpsAttr().getValueAsDouble();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::rmsNormGrad<T>(grad.data<T>(), x.data<T>(), x.getShape(),
                         optionalData<T>(op.getGamma(), ctx), eps,
                         dx.mutableData<T>(),
                         dgamma ? dgamma->mutableData<T>() : nullptr);
  });
  return std::nullopt;
}

void registerNormalizationKernels(KernelRegistry &registry) {
  registry.add<LayerNormOp>(runLayerNorm);
  registry.add<RmsNormOp>(runRmsNorm);
  registry.add<LayerNormGradOp>(runLayerNormGrad);
  registry.add<RmsNormGradOp>(runRmsNormGrad);
}

} // namespace mlir::loom::interp

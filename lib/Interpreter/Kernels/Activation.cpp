//===- Activation.cpp - Interpreter kernels of the activations ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// relu, silu, gelu and their gradients.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Activation.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

static host::GeluApproximation toHost(GeluApproximation approximate) {
  return approximate == GeluApproximation::Tanh
             ? host::GeluApproximation::Tanh
             : host::GeluApproximation::None;
}

static KernelStatus runRelu(ReluOp op, KernelContext &ctx) {
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &y = ctx.allocate(op.getResult());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::relu<T>(x.data<T>(), x.getShape(), y.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runSilu(SiluOp op, KernelContext &ctx) {
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &y = ctx.allocate(op.getResult());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::silu<T>(x.data<T>(), x.getShape(), y.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runGelu(GeluOp op, KernelContext &ctx) {
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &y = ctx.allocate(op.getResult());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::gelu<T>(x.data<T>(), x.getShape(), toHost(op.getApproximate()),
                  y.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runReluGrad(ReluGradOp op, KernelContext &ctx) {
  const HostTensor &dy = ctx.get(op.getDy());
  const HostTensor &x = ctx.get(op.getX());
  HostTensor &dx = ctx.allocate(op.getDx());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::reluGrad<T>(dy.data<T>(), x.data<T>(), x.getShape(),
                      dx.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runSiluGrad(SiluGradOp op, KernelContext &ctx) {
  const HostTensor &dy = ctx.get(op.getDy());
  const HostTensor &x = ctx.get(op.getX());
  HostTensor &dx = ctx.allocate(op.getDx());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::siluGrad<T>(dy.data<T>(), x.data<T>(), x.getShape(),
                      dx.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runGeluGrad(GeluGradOp op, KernelContext &ctx) {
  const HostTensor &dy = ctx.get(op.getDy());
  const HostTensor &x = ctx.get(op.getX());
  HostTensor &dx = ctx.allocate(op.getDx());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::geluGrad<T>(dy.data<T>(), x.data<T>(), x.getShape(),
                      toHost(op.getApproximate()), dx.mutableData<T>());
  });
  return std::nullopt;
}

void registerActivationKernels(KernelRegistry &registry) {
  registry.add<ReluOp>(runRelu);
  registry.add<SiluOp>(runSilu);
  registry.add<GeluOp>(runGelu);
  registry.add<ReluGradOp>(runReluGrad);
  registry.add<SiluGradOp>(runSiluGrad);
  registry.add<GeluGradOp>(runGeluGrad);
}

} // namespace mlir::loom::interp

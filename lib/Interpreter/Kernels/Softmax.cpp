//===- Softmax.cpp - Interpreter kernels of softmax and log_softmax -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Softmax.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

template <typename T>
using ForwardFn = void (*)(const T *, const Shape &, int64_t, T *);
template <typename T>
using BackwardFn = void (*)(const T *, const T *, const Shape &, int64_t,
                            T *);

template <typename OpTy, bool Log>
static KernelStatus runForward(OpTy op, KernelContext &ctx) {
  const HostTensor &x = ctx.get(op.getInput());
  HostTensor &y = ctx.allocate(op.getResult());
  int64_t axis = op.getAxisAttr().getInt();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    ForwardFn<T> fn = Log ? host::logSoftmax<T> : host::softmax<T>;
    fn(x.data<T>(), x.getShape(), axis, y.mutableData<T>());
  });
  return std::nullopt;
}

template <typename OpTy, bool Log>
static KernelStatus runBackward(OpTy op, KernelContext &ctx) {
  const HostTensor &out = ctx.get(op.getOutput());
  const HostTensor &grad = ctx.get(op.getGrad());
  HostTensor &dx = ctx.allocate(op.getResult());
  int64_t axis = op.getAxisAttr().getInt();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    BackwardFn<T> fn = Log ? host::logSoftmaxGrad<T> : host::softmaxGrad<T>;
    fn(out.data<T>(), grad.data<T>(), out.getShape(), axis,
       dx.mutableData<T>());
  });
  return std::nullopt;
}

void registerSoftmaxKernels(KernelRegistry &registry) {
  registry.add<SoftmaxOp>(runForward<SoftmaxOp, false>);
  registry.add<LogSoftmaxOp>(runForward<LogSoftmaxOp, true>);
  registry.add<SoftmaxGradOp>(runBackward<SoftmaxGradOp, false>);
  registry.add<LogSoftmaxGradOp>(runBackward<LogSoftmaxGradOp, true>);
}

} // namespace mlir::loom::interp

//===- Elementwise.cpp - Interpreter kernels of elementwise ops -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// add/sub/mul/div (broadcasting; float or integer), the unary float
// functions, scale and cast. Activations, dropout and their gradients are
// registered here too once their host kernels exist.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Elementwise.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

template <typename OpTy, host::BinaryKind Kind>
static KernelStatus runBinary(OpTy op, KernelContext &ctx) {
  const HostTensor &lhs = ctx.get(op.getLhs());
  const HostTensor &rhs = ctx.get(op.getRhs());
  HostTensor &out = ctx.allocate(op.getResult());
  if (out.getKind() == StorageKind::Bool)
    return std::string("i1 operands are not supported");
  return dispatchStorage(out.getKind(), [&](auto zero) -> KernelStatus {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, uint8_t>)
      return std::nullopt;
    else
      return host::binary<T>(Kind, lhs.data<T>(), lhs.getShape(), rhs.data<T>(),
                             rhs.getShape(), out.mutableData<T>(),
                             out.getShape());
  });
}

template <typename OpTy, host::UnaryKind Kind>
static KernelStatus runUnary(OpTy op, KernelContext &ctx) {
  const HostTensor &in = ctx.get(op.getInput());
  HostTensor &out = ctx.allocate(op.getResult());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::unary<T>(Kind, in.data<T>(), in.getNumElements(),
                   out.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runScale(ScaleOp op, KernelContext &ctx) {
  const HostTensor &in = ctx.get(op.getInput());
  HostTensor &out = ctx.allocate(op.getResult());
  double factor = op.getFactorAttr().getValueAsDouble();
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::scale<T>(in.data<T>(), in.getNumElements(), factor,
                   out.mutableData<T>());
  });
  return std::nullopt;
}

/// The loom.cast target of a result element type.
static std::optional<host::CastTarget> castTargetOf(Type type) {
  if (type.isF64())
    return host::CastTarget::F64;
  if (type.isF32())
    return host::CastTarget::F32;
  if (type.isBF16())
    return host::CastTarget::BF16;
  if (type.isF16())
    return host::CastTarget::F16;
  if (type.isInteger(64))
    return host::CastTarget::I64;
  if (type.isInteger(32))
    return host::CastTarget::I32;
  if (type.isInteger(1))
    return host::CastTarget::I1;
  return std::nullopt;
}

static KernelStatus runCast(CastOp op, KernelContext &ctx) {
  const HostTensor &in = ctx.get(op.getInput());
  HostTensor &out = ctx.allocate(op.getResult());
  Type target = cast<ShapedType>(op.getResult().getType()).getElementType();
  std::optional<host::CastTarget> castTarget = castTargetOf(target);
  if (!castTarget) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << "unsupported result element type " << target;
    return message;
  }
  // Casts to f64, and to f32 in an f64 run, keep the run's precision: an
  // f64 run is the high-precision reference of an f32 model. bf16 and f16
  // casts round, since mixed precision is what they are written for.
  dispatchStorage(in.getKind(), [&](auto fromZero) {
    using From = decltype(fromZero);
    dispatchStorage(out.getKind(), [&](auto toZero) {
      using To = decltype(toZero);
      host::CastTarget t = *castTarget;
      if (std::is_floating_point_v<To> &&
          (t == host::CastTarget::F64 ||
           (t == host::CastTarget::F32 &&
            ctx.getFloatKind() == StorageKind::F64)))
        t = std::is_same_v<To, double> ? host::CastTarget::F64
                                       : host::CastTarget::F32;
      host::cast<From, To>(in.data<From>(), in.getNumElements(), t,
                           out.mutableData<To>());
    });
  });
  return std::nullopt;
}

void registerElementwiseKernels(KernelRegistry &registry) {
  registry.add<AddOp>(runBinary<AddOp, host::BinaryKind::Add>);
  registry.add<SubOp>(runBinary<SubOp, host::BinaryKind::Sub>);
  registry.add<MulOp>(runBinary<MulOp, host::BinaryKind::Mul>);
  registry.add<DivOp>(runBinary<DivOp, host::BinaryKind::Div>);
  registry.add<NegOp>(runUnary<NegOp, host::UnaryKind::Neg>);
  registry.add<ExpOp>(runUnary<ExpOp, host::UnaryKind::Exp>);
  registry.add<LogOp>(runUnary<LogOp, host::UnaryKind::Log>);
  registry.add<SqrtOp>(runUnary<SqrtOp, host::UnaryKind::Sqrt>);
  registry.add<RsqrtOp>(runUnary<RsqrtOp, host::UnaryKind::Rsqrt>);
  registry.add<TanhOp>(runUnary<TanhOp, host::UnaryKind::Tanh>);
  registry.add<SigmoidOp>(runUnary<SigmoidOp, host::UnaryKind::Sigmoid>);
  registry.add<ScaleOp>(runScale);
  registry.add<CastOp>(runCast);
}

} // namespace mlir::loom::interp

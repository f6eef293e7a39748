//===- Matmul.cpp - Interpreter kernels of the matmul family --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Matmul.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

static KernelStatus runMatmul(MatmulOp op, KernelContext &ctx) {
  const HostTensor &lhs = ctx.get(op.getLhs());
  const HostTensor &rhs = ctx.get(op.getRhs());
  HostTensor &out = ctx.allocate(op.getResult());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::matmul<T>(lhs.data<T>(), lhs.getShape(), rhs.data<T>(),
                    rhs.getShape(), op.getTransposeLhs(), op.getTransposeRhs(),
                    out.mutableData<T>());
  });
  return std::nullopt;
}

void registerMatmulKernels(KernelRegistry &registry) {
  registry.add<MatmulOp>(runMatmul);
}

} // namespace mlir::loom::interp

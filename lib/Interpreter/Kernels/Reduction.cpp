//===- Reduction.cpp - Interpreter kernels of the reductions --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Reduction.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

template <typename OpTy, host::ReduceKind Kind>
static KernelStatus runReduce(OpTy op, KernelContext &ctx) {
  const HostTensor &in = ctx.get(op.getInput());
  HostTensor &out = ctx.allocate(op.getResult());
  std::vector<int64_t> axes(op.getAxes().begin(), op.getAxes().end());
  if (in.getKind() == StorageKind::Bool)
    return std::string("i1 operands are not supported");
  dispatchStorage(in.getKind(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, uint8_t>)
      host::reduce<T>(Kind, in.data<T>(), in.getShape(), axes,
                      out.mutableData<T>());
  });
  return std::nullopt;
}

void registerReductionKernels(KernelRegistry &registry) {
  registry.add<ReduceSumOp>(runReduce<ReduceSumOp, host::ReduceKind::Sum>);
  registry.add<ReduceMeanOp>(runReduce<ReduceMeanOp, host::ReduceKind::Mean>);
  registry.add<ReduceMaxOp>(runReduce<ReduceMaxOp, host::ReduceKind::Max>);
}

} // namespace mlir::loom::interp

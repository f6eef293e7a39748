//===- Embedding.cpp - Interpreter kernels of the embedding ops -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// embedding and embedding_grad. In the global form the host kernels index
// the table they are given with the ids as they are (an id outside it is an
// error); the local form of a vocab-parallel shard carries the global row
// `offset` of its block and handles only the ids in it.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Embedding.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

static KernelStatus toKernelStatus(const host::Status &status) {
  if (status.ok())
    return std::nullopt;
  return status.message();
}

static KernelStatus runEmbedding(EmbeddingOp op, KernelContext &ctx) {
  const HostTensor &table = ctx.get(op.getTable());
  const HostTensor &ids = ctx.get(op.getIds());
  HostTensor &y = ctx.allocate(op.getResult());
  if (Value offset = op.getOffset()) {
    int64_t first = ctx.get(offset).data<int64_t>()[0];
    return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
      using T = decltype(zero);
      return toKernelStatus(host::embeddingBlock<T>(
          table.data<T>(), table.getShape(), ids.data<int64_t>(),
          ids.getShape(), first, y.mutableData<T>()));
    });
  }
  return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
    using T = decltype(zero);
    return toKernelStatus(host::embedding<T>(
        table.data<T>(), table.getShape(), ids.data<int64_t>(), ids.getShape(),
        y.mutableData<T>()));
  });
}

static KernelStatus runEmbeddingGrad(EmbeddingGradOp op, KernelContext &ctx) {
  const HostTensor &dy = ctx.get(op.getDy());
  const HostTensor &ids = ctx.get(op.getIds());
  HostTensor &dtable = ctx.allocate(op.getResult());
  // The result's rows: vocab_size, or this rank's block of them.
  int64_t rows = dtable.getShape()[0];
  if (Value offset = op.getOffset()) {
    int64_t first = ctx.get(offset).data<int64_t>()[0];
    return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
      using T = decltype(zero);
      return toKernelStatus(host::embeddingGradBlock<T>(
          dy.data<T>(), dy.getShape(), ids.data<int64_t>(), ids.getShape(),
          first, rows, dtable.mutableData<T>()));
    });
  }
  return dispatchFloat(ctx.getFloatKind(), [&](auto zero) -> KernelStatus {
    using T = decltype(zero);
    return toKernelStatus(host::embeddingGrad<T>(
        dy.data<T>(), dy.getShape(), ids.data<int64_t>(), ids.getShape(), rows,
        dtable.mutableData<T>()));
  });
}

void registerEmbeddingKernels(KernelRegistry &registry) {
  registry.add<EmbeddingOp>(runEmbedding);
  registry.add<EmbeddingGradOp>(runEmbeddingGrad);
}

} // namespace mlir::loom::interp

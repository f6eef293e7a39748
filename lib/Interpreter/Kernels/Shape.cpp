//===- Shape.cpp - Interpreter kernels of the shape ops -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Shape.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

static std::vector<int64_t> toVector(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

static KernelStatus runReshape(ReshapeOp op, KernelContext &ctx) {
  // Row-major order is kept, so the result shares the operand's storage.
  auto type = cast<RankedTensorType>(op.getResult().getType());
  ctx.bind(op.getResult(),
           ctx.get(op.getInput()).reshaped(toVector(type.getShape())));
  return std::nullopt;
}

static KernelStatus runTranspose(TransposeOp op, KernelContext &ctx) {
  const HostTensor &in = ctx.get(op.getInput());
  HostTensor &out = ctx.allocate(op.getResult());
  dispatchStorage(in.getKind(), [&](auto zero) {
    using T = decltype(zero);
    host::transpose<T>(in.data<T>(), in.getShape(),
                       toVector(op.getPermutation()), out.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runSlice(SliceOp op, KernelContext &ctx) {
  const HostTensor &in = ctx.get(op.getInput());
  HostTensor &out = ctx.allocate(op.getResult());
  dispatchStorage(in.getKind(), [&](auto zero) {
    using T = decltype(zero);
    host::slice<T>(in.data<T>(), in.getShape(), toVector(op.getStarts()),
                   toVector(op.getLimits()), toVector(op.getStrides()),
                   out.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runPad(PadOp op, KernelContext &ctx) {
  const HostTensor &in = ctx.get(op.getInput());
  HostTensor &out = ctx.allocate(op.getResult());
  dispatchStorage(in.getKind(), [&](auto zero) {
    using T = decltype(zero);
    host::pad<T>(in.data<T>(), in.getShape(), toVector(op.getLow()),
                 toVector(op.getHigh()), toVector(op.getInterior()),
                 out.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runConcat(ConcatOp op, KernelContext &ctx) {
  std::vector<HostTensor> inputs;
  for (Value v : op.getInputs())
    inputs.push_back(ctx.get(v));
  HostTensor &out = ctx.allocate(op.getResult());
  dispatchStorage(out.getKind(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<const T *> data;
    std::vector<Shape> shapes;
    for (const HostTensor &t : inputs) {
      data.push_back(t.data<T>());
      shapes.push_back(t.getShape());
    }
    host::concat<T>(data, shapes, static_cast<int64_t>(op.getAxis()),
                    out.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runSplit(SplitOp op, KernelContext &ctx) {
  const HostTensor &in = ctx.get(op.getInput());
  std::vector<HostTensor *> outs;
  for (Value result : op.getOutputs())
    outs.push_back(&ctx.allocate(result));
  dispatchStorage(in.getKind(), [&](auto zero) {
    using T = decltype(zero);
    std::vector<T *> data;
    for (HostTensor *t : outs)
      data.push_back(t->mutableData<T>());
    host::split<T>(in.data<T>(), in.getShape(),
                   static_cast<int64_t>(op.getAxis()), toVector(op.getSizes()),
                   data);
  });
  return std::nullopt;
}

void registerShapeKernels(KernelRegistry &registry) {
  registry.add<ReshapeOp>(runReshape);
  registry.add<TransposeOp>(runTranspose);
  registry.add<SliceOp>(runSlice);
  registry.add<PadOp>(runPad);
  registry.add<ConcatOp>(runConcat);
  registry.add<SplitOp>(runSplit);
}

} // namespace mlir::loom::interp

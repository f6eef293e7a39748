//===- LossScaling.cpp - Interpreter kernels of dynamic loss scaling ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// nonfinite_count, select and update_loss_scale, on the host kernels the
// emitted programs call (loom/Runtime/Host/LossScaling.h).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/LossScaling.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Interpreter/KernelRegistry.h"

#include <cstring>

namespace mlir::loom::interp {

namespace host = ::loom::runtime::host;

static KernelStatus runNonfiniteCount(NonfiniteCountOp op, KernelContext &ctx) {
  const HostTensor &input = ctx.get(op.getInput());
  HostTensor &count = ctx.allocate(op.getResult());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::nonfiniteCount<T>(input.data<T>(), input.getNumElements(),
                            count.mutableData<T>());
  });
  return std::nullopt;
}

static KernelStatus runSelect(SelectOp op, KernelContext &ctx) {
  const HostTensor &condition = ctx.get(op.getCondition());
  const HostTensor &onTrue = ctx.get(op.getOnTrue());
  const HostTensor &onFalse = ctx.get(op.getOnFalse());
  HostTensor &result = ctx.allocate(op.getResult());
  bool takeTrue = false;
  dispatchFloat(condition.getKind(), [&](auto zero) {
    using T = decltype(zero);
    T value = condition.data<T>()[0];
    takeTrue = !(value == T(0)); // NaN counts as not zero
  });
  // A whole-tensor copy of either kind (floats, i64, i1).
  const HostTensor &chosen = takeTrue ? onTrue : onFalse;
  std::memcpy(result.mutableRawData(), chosen.rawData(), chosen.getByteSize());
  return std::nullopt;
}

static KernelStatus runUpdateLossScale(UpdateLossScaleOp op,
                                       KernelContext &ctx) {
  const HostTensor &scale = ctx.get(op.getScale());
  int64_t tracker = ctx.get(op.getGrowthTracker()).data<int64_t>()[0];
  const HostTensor &nonfinite = ctx.get(op.getNonfinite());
  HostTensor &newScale = ctx.allocate(op.getNewScale());
  HostTensor &newTracker = ctx.allocate(op.getNewGrowthTracker());
  dispatchFloat(ctx.getFloatKind(), [&](auto zero) {
    using T = decltype(zero);
    host::updateLossScale<T>(
        scale.data<T>()[0], tracker, nonfinite.data<T>()[0],
        op.getGrowthFactor().convertToDouble(),
        op.getBackoffFactor().convertToDouble(), op.getGrowthInterval(),
        newScale.mutableData<T>(), newTracker.mutableData<int64_t>());
  });
  return std::nullopt;
}

void registerLossScalingKernels(KernelRegistry &registry) {
  registry.add<NonfiniteCountOp>(runNonfiniteCount);
  registry.add<SelectOp>(runSelect);
  registry.add<UpdateLossScaleOp>(runUpdateLossScale);
}

} // namespace mlir::loom::interp

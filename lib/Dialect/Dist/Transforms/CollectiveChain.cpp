//===- CollectiveChain.cpp - Redistribution plans as dist ops -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Builds one `dist` collective per plan step, each on the previous result.
// The local shape changes as the layout algebra says: a gather multiplies
// its dim by the group size, a slice or a reduce_scatter divides it, an
// all_to_all divides its split dim and multiplies its concat dim.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/CollectiveChain.h"

#include "loom/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::loom::dist;

/// The axes as a `StrArrayAttr`.
static ArrayAttr getAxesAttr(OpBuilder &builder, const Layout::AxisList &axes) {
  SmallVector<StringRef> names(axes.begin(), axes.end());
  return builder.getStrArrayAttr(names);
}

Value mlir::loom::dist::buildCollectiveChain(OpBuilder &builder, Location loc,
                                             Value local, const Mesh &mesh,
                                             FlatSymbolRefAttr meshName,
                                             const RedistributionPlan &plan) {
  Value current = local;
  for (const RedistributionStep &step : plan.steps) {
    auto type = cast<RankedTensorType>(current.getType());
    SmallVector<int64_t> shape(type.getShape());
    int64_t groupSize = mesh.getGroupSize(step.axes);
    ArrayAttr axes = getAxesAttr(builder, step.axes);
    auto resultType = [&]() {
      return RankedTensorType::get(shape, type.getElementType(),
                                   type.getEncoding());
    };
    switch (step.kind) {
    case CollectiveKind::AllGather:
      shape[step.dim] *= groupSize;
      current =
          AllGatherOp::create(builder, loc, resultType(), current, meshName,
                              axes, builder.getI64IntegerAttr(step.dim));
      break;
    case CollectiveKind::AllSlice:
      shape[step.dim] /= groupSize;
      current =
          AllSliceOp::create(builder, loc, resultType(), current, meshName,
                             axes, builder.getI64IntegerAttr(step.dim));
      break;
    case CollectiveKind::AllReduce:
      current = AllReduceOp::create(
          builder, loc, type,
          ReductionKindAttr::get(builder.getContext(), ReductionKind::Sum),
          current, meshName, axes);
      break;
    case CollectiveKind::ReduceScatter:
      shape[step.dim] /= groupSize;
      current =
          ReduceScatterOp::create(builder, loc, resultType(), current, meshName,
                                  axes, builder.getI64IntegerAttr(step.dim));
      break;
    case CollectiveKind::AllToAll:
      shape[step.dim] /= groupSize;
      shape[step.concatDim] *= groupSize;
      current =
          AllToAllOp::create(builder, loc, resultType(), current, meshName,
                             axes, builder.getI64IntegerAttr(step.dim),
                             builder.getI64IntegerAttr(step.concatDim));
      break;
    }
  }
  return current;
}

//===- Reduction.cpp - loom reduction ops ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the reductions, in the house order: verify, infer. All
// reductions share one axes rule, inferReduction.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

/// Infers the result of reducing `input` over `axes`, checking C1 (non-empty),
/// C2 (in range) and C3 (strictly increasing).
static LogicalResult inferReduction(std::optional<Location> location,
                                    Value input, ArrayRef<int64_t> axes,
                                    bool keepDims,
                                    SmallVectorImpl<Type> &inferred) {
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  if (!inputType)
    return emitOptionalError(location, "expects a ranked tensor operand");
  int64_t rank = inputType.getRank();
  if (axes.empty())
    return emitOptionalError(location, "expects at least one axis");
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank)
      return emitOptionalError(location, "axis ", axis,
                               " is out of range for an input of rank ", rank);
    if (i > 0 && axis <= axes[i - 1])
      return emitOptionalError(location,
                               "expects strictly increasing axes, got ",
                               axes[i - 1], " before ", axis);
  }

  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(inputType.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(dim)))
      shape.push_back(size);
    else if (keepDims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceSumOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferReduction(location, adaptor.getInput(), adaptor.getAxes(),
                        adaptor.getKeepdims(), inferred);
}

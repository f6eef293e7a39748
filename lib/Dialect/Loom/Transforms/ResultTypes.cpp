//===- ResultTypes.cpp - Re-derive an op's result types -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/ResultTypes.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

FailureOr<bool> mlir::loom::reinferResultTypes(Operation *op) {
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (!infer)
    return false;
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(
          op->getContext(), op->getLoc(), op->getOperands(),
          op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
          op->getRegions(), types)))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), types))
    result.setType(type);
  return true;
}

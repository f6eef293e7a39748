//===- InitAllDialects.cpp - Register every dialect Loom uses -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"

#include "loom/Dialect/Dist/ExternalModels/PartitionModels.h"
#include "loom/Dialect/Dist/IR/DistDialect.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void mlir::loom::registerAllDialects(DialectRegistry &registry) {
  registry.insert<LoomDialect, dist::DistDialect, arith::ArithDialect,
                  func::FuncDialect, tensor::TensorDialect>();
  // How dist-partition-spmd rewrites the loom ops that need more than local
  // types: external models, so the loom dialect does not depend on dist.
  dist::registerPartitionModels(registry);
}

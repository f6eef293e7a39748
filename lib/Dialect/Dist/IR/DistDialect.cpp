//===- DistDialect.cpp - The dist dialect ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Registers the attributes and ops of the `dist` dialect and emits the
// TableGen'd op definitions. Per-op behaviour lives in Ops/<Family>.cpp; the
// layout attribute in DistAttrs.cpp.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::loom::dist;

#include "loom/Dialect/Dist/IR/DistOpsDialect.cpp.inc"

void DistDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "loom/Dialect/Dist/IR/DistOps.cpp.inc"

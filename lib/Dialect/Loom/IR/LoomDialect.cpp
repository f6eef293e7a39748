//===- LoomDialect.cpp - The loom dialect ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Registers the ops of the `loom` dialect and emits the TableGen'd op
// definitions. The per-op behaviour (verifier, type inference, and later the
// sharding rule, cost and VJP) lives in Ops/<Family>.cpp, one file per family.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;

#include "loom/Dialect/Loom/IR/LoomOpsDialect.cpp.inc"

void LoomDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "loom/Dialect/Loom/IR/LoomOps.cpp.inc"
      >();
}

// The plain binary and unary ops define their methods in ODS with these
// helpers (extraClassDefinition).
#include "Ops/Pointwise.h"

#define GET_OP_CLASSES
#include "loom/Dialect/Loom/IR/LoomOps.cpp.inc"

//===- LoomDialect.h - The loom dialect -------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Declares the `loom` dialect class. Include LoomOps.h for the ops.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H
#define LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H

#include "mlir/IR/Dialect.h"

#include "loom/Dialect/Loom/IR/LoomOpsDialect.h.inc"

#endif // LOOM_DIALECT_LOOM_IR_LOOMDIALECT_H

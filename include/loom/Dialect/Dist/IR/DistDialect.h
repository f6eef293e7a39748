//===- DistDialect.h - The dist dialect -------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Declares the `dist` dialect class. Include DistAttrs.h for the layout
// attribute and DistOps.h for the ops.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_DISTDIALECT_H
#define LOOM_DIALECT_DIST_IR_DISTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "loom/Dialect/Dist/IR/DistOpsDialect.h.inc"

#endif // LOOM_DIALECT_DIST_IR_DISTDIALECT_H

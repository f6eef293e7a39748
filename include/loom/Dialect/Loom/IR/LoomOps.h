//===- LoomOps.h - loom dialect operations ----------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Declares the ops of the `loom` dialect, generated from LoomOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMOPS_H
#define LOOM_DIALECT_LOOM_IR_LOOMOPS_H

#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomTraits.h"
#include "loom/Interfaces/CostOpInterface.h"
#include "loom/Interfaces/DifferentiableOpInterface.h"
#include "loom/Interfaces/ShardingRuleOpInterface.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "loom/Dialect/Loom/IR/LoomOps.h.inc"

#endif // LOOM_DIALECT_LOOM_IR_LOOMOPS_H

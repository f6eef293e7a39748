//===- LoomAttrs.h - loom dialect attributes --------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Declares the attributes and enums of the `loom` dialect, generated from
// LoomAttrs.td: the GELU approximation, parameter initializers, and the
// `#loom.param` / `#loom.input` function-argument attributes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMATTRS_H
#define LOOM_DIALECT_LOOM_IR_LOOMATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

#include "loom/Dialect/Loom/IR/LoomEnums.h.inc"


#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Loom/IR/LoomAttrs.h.inc"

namespace mlir {
namespace loom {

/// The `custom<GeluApproximation>` directive of gelu and gelu_grad: the bare
/// keyword `none` or `tanh` after `approximate =`. Printed by hand because an
/// EnumAttr printed by ODS brings its own leading space (`approximate =
/// tanh` with two spaces).
ParseResult parseGeluApproximation(OpAsmParser &parser,
                                   GeluApproximationAttr &attr);
void printGeluApproximation(OpAsmPrinter &printer, Operation *op,
                            GeluApproximationAttr attr);

} // namespace loom
} // namespace mlir

#endif // LOOM_DIALECT_LOOM_IR_LOOMATTRS_H

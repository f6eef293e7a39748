//===- DistAttrs.h - dist dialect attributes --------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Declares `#dist.layout`, `#dist.strategy`, `#dist.plan` and the reduction
// kinds, generated from
// DistAttrs.td. A layout attribute converts to and from the layout library's
// `Layout`, which holds the semantics.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_DISTATTRS_H
#define LOOM_DIALECT_DIST_IR_DISTATTRS_H

#include "loom/Analysis/Layout/Layout.h"
#include "loom/Dialect/Dist/IR/DistDialect.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"

namespace mlir {
class AsmParser;
} // namespace mlir

namespace mlir::loom::dist {
/// Parses a float literal into the double it denotes (the parser of the
/// exactly printed doubles of `#dist.plan`).
FailureOr<llvm::APFloat> parseExactF64(AsmParser &parser);
} // namespace mlir::loom::dist

#include "loom/Dialect/Dist/IR/DistEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Dist/IR/DistAttrs.h.inc"

#endif // LOOM_DIALECT_DIST_IR_DISTATTRS_H

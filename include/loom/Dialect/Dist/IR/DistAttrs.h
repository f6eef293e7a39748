//===- DistAttrs.h - dist dialect attributes --------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Declares `#dist.layout`, `#dist.strategy`, `#dist.plan`, `#dist.pipeline`
// and the reduction kinds, generated from DistAttrs.td. A layout attribute converts to and from the layout library's
// `Layout`, which holds the semantics.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_DISTATTRS_H
#define LOOM_DIALECT_DIST_IR_DISTATTRS_H

#include "loom/Analysis/Layout/Layout.h"
#include "loom/Analysis/Pipeline/Schedule.h"
#include "loom/Dialect/Dist/IR/DistDialect.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/Hashing.h"

namespace mlir {
class AsmParser;
class AsmPrinter;
} // namespace mlir

namespace mlir::loom::dist {
/// The transformer layers of one pipeline stage: ordinals [first, end).
struct LayerRange {
  int64_t first = 0;
  int64_t end = 0;
  bool operator==(const LayerRange &other) const {
    return first == other.first && end == other.end;
  }
};
inline llvm::hash_code hash_value(const LayerRange &range) {
  return llvm::hash_combine(range.first, range.end);
}

/// Parses a float literal into the double it denotes (the parser of the
/// exactly printed doubles of `#dist.plan`).
FailureOr<llvm::APFloat> parseExactF64(AsmParser &parser);

// The custom parameters of `#dist.pipeline` and its prediction: lists of
// exact doubles (`[1.5, 2.0E-3]`), [first, end) layer ranges
// (`[[0, 2], [2, 4]]`) and the schedule as a string.
FailureOr<DenseF64ArrayAttr> parseExactF64List(AsmParser &parser);
void printExactF64List(AsmPrinter &printer, DenseF64ArrayAttr values);
FailureOr<SmallVector<LayerRange>> parseStageLayers(AsmParser &parser);
void printStageLayers(AsmPrinter &printer, ArrayRef<LayerRange> ranges);
FailureOr<::loom::pipeline::ScheduleKind> parseSchedule(AsmParser &parser);
void printSchedule(AsmPrinter &printer, ::loom::pipeline::ScheduleKind kind);
} // namespace mlir::loom::dist

#include "loom/Dialect/Dist/IR/DistEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/Dist/IR/DistAttrs.h.inc"

#endif // LOOM_DIALECT_DIST_IR_DISTATTRS_H

//===- BoolParameter.h - Parser of `true`/`false` parameters -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The parser behind BoolParameter.td's attribute parameters. Included by
// the attribute .cpp files whose generated parsers call it, not by headers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_BOOLPARAMETER_H
#define LOOM_DIALECT_BOOLPARAMETER_H

#include "mlir/IR/OpImplementation.h"

namespace mlir::loom {

/// Parses `true` or `false`.
inline FailureOr<bool> parseBoolKeyword(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected `true` or `false`");
}

} // namespace mlir::loom

#endif // LOOM_DIALECT_BOOLPARAMETER_H

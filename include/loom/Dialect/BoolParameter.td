//===- BoolParameter.td - `true`/`false` attribute parameters -*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// An attribute parameter holding a flag, spelled `true` or `false` (MLIR has
// no FieldParser for bool). Shared by the loom and dist dialects; the parser
// is in loom/Dialect/BoolParameter.h, which their attribute .cpp files
// include.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_BOOLPARAMETER_TD
#define LOOM_DIALECT_BOOLPARAMETER_TD

include "mlir/IR/AttrTypeBase.td"

class Loom_BoolParameterOf<string desc> : AttrOrTypeParameter<"bool", desc> {
  let parser = "::mlir::loom::parseBoolKeyword($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}

#endif // LOOM_DIALECT_BOOLPARAMETER_TD

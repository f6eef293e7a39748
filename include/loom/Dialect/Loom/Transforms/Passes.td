//===- Passes.td - loom dialect passes ---------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyImportPass : Pass<"loom-verify-import", "::mlir::ModuleOp"> {
  let summary = "Check the contract every later phase relies on after import";
  let description = [{
    The import phase hands the rest of Loom one function, `@forward`, that
    computes the training loss of a model on one device. This pass checks
    that contract and fails with a diagnostic naming the offending function,
    argument or op:

    1. the module has a `func.func @forward` with a body;
    2. `@forward` returns exactly one value, a rank-0 floating-point tensor
       (the loss);
    3. every argument and every value in `@forward` is a statically shaped
       ranked tensor of a Loom element type (f64, f32, bf16, f16, i64, i32,
       i1);
    4. every op in `@forward` belongs to the `loom`, `arith`, `tensor` or
       `func` dialects.

    It changes nothing; it ends the `loom-import-pipeline`.
  }];
  let dependentDialects = ["::mlir::loom::LoomDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"forward\"",
           "Name of the function that computes the loss">,
  ];
}

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

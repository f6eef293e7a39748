//===- GraphJSON.h - Import and export of graph JSON ------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Graph JSON (format `loom-graph`, version 1) is Loom's framework-neutral
// model format: declared tensors, parameters, data inputs, `loom` ops in
// program order and the loss. docs/GraphFormat.md specifies it. The importer
// builds the import-phase IR (`func.func @forward` in the `loom` dialect,
// arguments marked with `loom.param` / `loom.input`); the exporter writes that
// IR back, so import and export are inverse to each other.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_GRAPHJSON_GRAPHJSON_H
#define LOOM_TARGET_GRAPHJSON_GRAPHJSON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class MLIRContext;
namespace loom {

/// Parses graph JSON `text` into a module holding `func.func @forward`.
/// `fileName` prefixes every diagnostic, followed by the JSON path of the
/// offending value: `graph.json: ops[3].attributes.axis: expected an integer,
/// found "x"`. Every problem is reported through `context`'s diagnostic
/// engine and yields a null module; the input is never trusted (malformed
/// text, wrong types, unknown ops, shapes that disagree with inference,
/// dangling or duplicate names, cycles). Loads the dialects it builds.
/// Op locations carry the tensor names (`NameLoc`, a `FusedLoc` of them for
/// several results) so that `exportGraphJson` can restore them.
OwningOpRef<ModuleOp> importGraphJson(StringRef text, StringRef fileName,
                                      MLIRContext *context);

/// Writes `@forward` of `module` as graph JSON to `os`. Fails with an error
/// naming the construct (an op outside `loom` other than `arith.constant`, a
/// non-tensor value, an argument without `loom.param` or `loom.input`, ...)
/// when the IR has no graph-JSON form; nothing is written then. Tensor names
/// come from the locations `importGraphJson` sets, otherwise `arg<N>` and
/// `t<N>`.
LogicalResult exportGraphJson(ModuleOp module, raw_ostream &os);

} // namespace loom
} // namespace mlir

#endif // LOOM_TARGET_GRAPHJSON_GRAPHJSON_H

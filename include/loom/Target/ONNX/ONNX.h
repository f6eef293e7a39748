//===- ONNX.h - Import of ONNX models ---------------------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Reads an `.onnx` model (as `torch.onnx.export` writes it, opsets 14-17)
// into the import-phase IR: the same `func.func @forward` a graph-JSON
// document gives, with the initializers the model trains as parameters
// (their names kept), the graph inputs as data inputs and the scalar output
// as the loss. docs/Frontends.md ("ONNX") says what is covered.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_ONNX_ONNX_H
#define LOOM_TARGET_ONNX_ONNX_H

#include "loom/Target/ONNX/ImportOptions.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class MLIRContext;
namespace loom {

/// Imports the bytes of an ONNX model. Every problem is reported through
/// `context`'s diagnostic engine, prefixed with `fileName`, and yields a
/// null module: an unparsable (truncated, non-ONNX) file, every node whose
/// operator or form Loom does not support (all of them, each named by node
/// name and op type), dynamic shapes, an initializer whose shape disagrees
/// with its use. In a build without libonnx it says so.
OwningOpRef<ModuleOp> importOnnx(StringRef bytes, StringRef fileName,
                                 MLIRContext *context,
                                 const OnnxImportOptions &options = {});

/// Translates the model to graph JSON text instead (what `importOnnx` then
/// imports); for tests and for users who want to read or edit the graph.
LogicalResult translateOnnxToGraphJson(StringRef bytes, StringRef fileName,
                                       MLIRContext *context, raw_ostream &os,
                                       const OnnxImportOptions &options = {});

/// Whether this build can read ONNX (libonnx-dev was found).
bool isOnnxImportAvailable();

} // namespace loom
} // namespace mlir

#endif // LOOM_TARGET_ONNX_ONNX_H

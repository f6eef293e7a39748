//===- Import.cpp - ONNX model to the loom dialect ------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The entry points of ONNX import: read the protobuf (ModelReader.cpp),
// translate it to graph JSON (Translator.cpp) and import that with the
// graph-JSON importer, which checks every op against its verifier and shape
// inference, so an ONNX model yields exactly the IR its graph-JSON form
// would.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/ONNX/ONNX.h"

#include "OnnxModel.h"
#include "Translator.h"

#include "loom/Target/GraphJSON/GraphJSON.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::loom;

bool mlir::loom::isOnnxImportAvailable() {
  return onnx_import::haveOnnxSupport();
}

/// Names in a damaged file may hold any bytes: messages show the
/// non-printable ones as \xNN.
static std::string printable(const std::string &text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02X", c);
      out += escaped;
    }
  }
  return out;
}

/// Reads and translates; reports every error and returns false on any.
static bool translate(StringRef bytes, StringRef fileName, MLIRContext *context,
                      const OnnxImportOptions &options, nlohmann::json &doc) {
  Location loc = UnknownLoc::get(context);
  onnx_import::Model model;
  std::string error;
  if (!onnx_import::readModel(bytes.data(), bytes.size(), model, error)) {
    emitError(loc) << fileName << ": " << printable(error);
    return false;
  }
  if (model.opset < 13 || model.opset > 18) {
    emitError(loc) << fileName << ": opset " << model.opset
                   << " of the default ONNX domain; Loom imports opsets 13 "
                      "to 18 (torch.onnx.export's opset_version 14-17)";
    return false;
  }
  onnx_import::Translator translator(model, options);
  std::vector<std::string> errors;
  if (translator.run(doc, errors))
    return true;
  // All problems at once, unsupported nodes first (in graph order).
  InFlightDiagnostic diag = emitError(loc);
  diag << fileName << ": " << errors.size()
       << " problem(s) prevent importing this ONNX model "
          "(docs/Frontends.md, \"ONNX\"):";
  for (const std::string &e : errors)
    diag << "\n  " << printable(e);
  return false;
}

OwningOpRef<ModuleOp> mlir::loom::importOnnx(StringRef bytes,
                                             StringRef fileName,
                                             MLIRContext *context,
                                             const OnnxImportOptions &options) {
  nlohmann::json doc;
  if (!translate(bytes, fileName, context, options, doc))
    return {};
  return importGraphJson(doc.dump(), fileName, context);
}

LogicalResult
mlir::loom::translateOnnxToGraphJson(StringRef bytes, StringRef fileName,
                                     MLIRContext *context, raw_ostream &os,
                                     const OnnxImportOptions &options) {
  nlohmann::json doc;
  if (!translate(bytes, fileName, context, options, doc))
    return failure();
  os << doc.dump(2) << "\n";
  return success();
}

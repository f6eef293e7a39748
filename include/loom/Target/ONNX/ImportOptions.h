//===- ImportOptions.h - What the user says about an ONNX model -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The options of ONNX import, apart from ONNX.h so that the importer's
// internals (lib/Target/ONNX/Translator.h) take them without MLIR's headers.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_ONNX_IMPORTOPTIONS_H
#define LOOM_TARGET_ONNX_IMPORTOPTIONS_H

#include <string>
#include <vector>

namespace mlir::loom {

/// The user's word on which initializers train, where the importer's rule
/// (docs/Frontends.md, "Parameters and buffers") cannot tell: initializer
/// names to hold as constants (a buffer used whole on activations) or to
/// train (a parameter that is sliced, as minGPT's `pos_emb[:, :t]`). A name
/// that is not an initializer of the model is an error.
struct OnnxImportOptions {
  std::vector<std::string> constants;
  std::vector<std::string> parameters;
};

} // namespace mlir::loom

#endif // LOOM_TARGET_ONNX_IMPORTOPTIONS_H

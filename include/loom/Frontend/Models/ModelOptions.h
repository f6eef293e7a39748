//===- ModelOptions.h - Model configurations from key=value -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Builds a `ModelConfig` from `key=value` settings named like the flags of
// `loom-model` (`layers`, `hidden`, `kv-heads`, ...), with the tool's rules:
// start from the family's smallest preset (or `preset=NAME`), apply the
// settings, derive the feed-forward width from `hidden` when `ffn` is not
// given, mirror the encoder in the decoder of `transformer`, reject settings
// that do not apply to the family, and validate. The C API's
// loomSessionLoadModel and the Python package describe models this way.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_FRONTEND_MODELS_MODELOPTIONS_H
#define LOOM_FRONTEND_MODELS_MODELOPTIONS_H

#include "loom/Frontend/Models/ModelConfig.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace loom {
namespace models {

/// The configuration of `family` described by `settings`, a comma-separated
/// list of `key=value` (empty: the family's default). Errors name the key,
/// what was expected and what was found.
llvm::Expected<ModelConfig> parseModelOptions(ModelFamily family,
                                              llvm::StringRef settings);

} // namespace models
} // namespace loom
} // namespace mlir

#endif // LOOM_FRONTEND_MODELS_MODELOPTIONS_H

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
// that do not apply to the family, and validate. `loom-model` passes its
// flags here, and the C API's loomSessionLoadModel and the Python package
// their key=value text: one implementation of the model options.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_FRONTEND_MODELS_MODELOPTIONS_H
#define LOOM_FRONTEND_MODELS_MODELOPTIONS_H

#include "loom/Frontend/Models/ModelConfig.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>

namespace mlir {
namespace loom {
namespace models {

/// How errors name a setting: as a flag (`--hidden`, loom-model) or as a
/// key of key=value text (`model option 'hidden'`, the C API and Python).
enum class OptionSpelling { Flag, Key };

/// One setting: a key (`layers`, `kv-heads`, ...) and its text.
using ModelSetting = std::pair<std::string, std::string>;

/// The configuration of `family` described by `settings` (each key at most
/// once; none: the family's default). Errors name the setting as `spelling`
/// says, what was expected and what was found.
llvm::Expected<ModelConfig>
applyModelOptions(ModelFamily family, llvm::ArrayRef<ModelSetting> settings,
                  OptionSpelling spelling);

/// applyModelOptions over `settings`, a comma-separated list of `key=value`
/// (empty: the family's default).
llvm::Expected<ModelConfig> parseModelOptions(ModelFamily family,
                                              llvm::StringRef settings);

} // namespace models
} // namespace loom
} // namespace mlir

#endif // LOOM_FRONTEND_MODELS_MODELOPTIONS_H

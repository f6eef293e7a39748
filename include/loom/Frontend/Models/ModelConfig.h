//===- ModelConfig.h - Sizes and presets of the model builders --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The configuration every model builder takes: one plain struct for the four
// families (GPT-2, Llama, the encoder-decoder Transformer of the MindSpore
// seed, the TransformerEncoder LM of the PyTorch seed), the named presets of
// each family, and the validation that turns a bad combination of sizes into
// a message instead of an invalid graph. Plain C++ without IR, so the tool
// and the tests can check a configuration before anything is built.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_FRONTEND_MODELS_MODELCONFIG_H
#define LOOM_FRONTEND_MODELS_MODELCONFIG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
namespace loom {
namespace models {

/// The model families `loom-model` builds.
enum class ModelFamily {
  /// nanoGPT's GPT (GPT-2 and the GPT-3 paper sizes).
  GPT2,
  /// Hugging Face LlamaForCausalLM (Llama 3).
  Llama,
  /// The encoder-decoder Transformer of the MindSpore seed.
  Transformer,
  /// The nn.TransformerEncoder language model of the PyTorch seed.
  TransformerLM,
};

/// The command-line name of `family` (`gpt2`, `llama`, `transformer`,
/// `tfm-lm`).
llvm::StringRef getFamilyName(ModelFamily family);

/// Parses a command-line family name; std::nullopt if unknown.
std::optional<ModelFamily> parseFamilyName(llvm::StringRef name);

/// Parses a boolean flag value, `true` or `false` (any case); std::nullopt
/// otherwise.
std::optional<bool> parseBoolean(llvm::StringRef text);

/// Element type of the parameters and activations.
enum class ElementType { F32, BF16, F16, F64 };

/// Parses `f32`, `bf16`, `f16` or `f64`; std::nullopt if unknown.
std::optional<ElementType> parseElementType(llvm::StringRef name);

/// The sizes of one model. Every family reads the common fields; the ones a
/// family does not use keep their defaults and are ignored by it.
struct ModelConfig {
  ModelFamily family = ModelFamily::GPT2;

  /// Transformer layers (the encoder layers of `transformer`).
  int64_t layers = 12;
  /// Decoder layers (`transformer` only).
  int64_t decoderLayers = 12;
  /// Model width (embedding size).
  int64_t hidden = 768;
  /// Attention heads; must divide `hidden`.
  int64_t heads = 12;
  /// Key/value heads of grouped-query attention (`llama` only); must divide
  /// `heads`.
  int64_t kvHeads = 12;
  /// Width of the feed-forward layer.
  int64_t ffn = 3072;
  /// Vocabulary size.
  int64_t vocab = 50257;
  /// Sequence length: the block size of `gpt2` (the rows of
  /// `transformer.wpe.weight`), the source length of `transformer`.
  int64_t seq = 1024;
  /// Target (decoder) sequence length (`transformer` only).
  int64_t tgtSeq = 1024;
  /// Global batch size of the traced step.
  int64_t batch = 8;

  /// RoPE base (`llama` only).
  double ropeTheta = 500000.0;
  /// Epsilon of every LayerNorm / RMSNorm.
  double normEps = 1e-5;
  /// Dropout probability at the family's dropout sites (see docs/Models.md);
  /// 0 inserts no `loom.dropout`.
  double dropout = 0.0;
  /// GELU in tanh form (`gpt2`, `transformer`); false is the erf form.
  bool geluTanh = true;
  /// nanoGPT's `bias` (`gpt2` only): biases in every Linear and LayerNorm.
  /// False drops them all; the LayerNorms keep their weight.
  bool bias = true;
  /// The lm_head shares `transformer.wte.weight` (`gpt2` only; GPT-2's and
  /// nanoGPT's weight tying). False adds an untied `lm_head.weight` [V, H].
  bool tieEmbeddings = true;

  ElementType elementType = ElementType::F32;
};

/// The configuration a family starts from when no preset is given (its
/// smallest preset).
ModelConfig getDefaultConfig(ModelFamily family);

/// A preset's canonical name and the other names it answers to.
struct PresetNames {
  llvm::StringRef name;
  /// Comma-separated, lower case (`gpt2,gpt2-small`); may be empty.
  llvm::StringRef aliases;

  /// The aliases one by one.
  llvm::SmallVector<llvm::StringRef, 4> getAliases() const;
};

/// The presets of `family` with their aliases, in size order.
llvm::ArrayRef<PresetNames> getPresets(ModelFamily family);

/// The canonical names of the presets of `family`, in size order.
llvm::ArrayRef<llvm::StringRef> getPresetNames(ModelFamily family);

/// The canonical name of the preset of `family` called `name` (a canonical
/// name or an alias, in any case: `124M`, `gpt2-XL`); std::nullopt if none.
/// The one lookup of `loom-model --preset`, the C API's and Python's
/// `preset` model option.
std::optional<llvm::StringRef> lookupPresetName(ModelFamily family,
                                                llvm::StringRef name);

/// `124m (gpt2, gpt2-small), 350m (gpt2-medium, 355m), ...`: the presets of
/// `family` with their aliases, for messages.
std::string describePresetNames(ModelFamily family);

/// The error for an unknown preset `name`, listing the valid names.
llvm::Error makeUnknownPresetError(ModelFamily family, llvm::StringRef name);

/// The preset `name` of `family` (looked up by lookupPresetName);
/// std::nullopt if there is none.
std::optional<ModelConfig> getPreset(ModelFamily family, llvm::StringRef name);

/// Checks that `config` describes a model the builders can build: positive
/// sizes, heads dividing the width, key/value heads dividing the heads, an
/// even head size for RoPE, a dropout in [0, 1), sizes small enough that no
/// tensor or parameter count overflows 64 bits. The error says what was
/// expected and what was found.
llvm::Error validateConfig(const ModelConfig &config);

} // namespace models
} // namespace loom
} // namespace mlir

#endif // LOOM_FRONTEND_MODELS_MODELCONFIG_H

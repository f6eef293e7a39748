//===- ModelConfig.cpp - Sizes and presets of the model builders ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The preset tables of the four families, with the source of every number,
// and the checks that keep a configuration buildable. docs/Models.md lists
// the same presets for users.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/ModelConfig.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>
#include <sstream>
#include <vector>

using namespace mlir::loom::models;
using llvm::StringRef;

StringRef mlir::loom::models::getFamilyName(ModelFamily family) {
  switch (family) {
  case ModelFamily::GPT2:
    return "gpt2";
  case ModelFamily::Llama:
    return "llama";
  case ModelFamily::Transformer:
    return "transformer";
  case ModelFamily::TransformerLM:
    return "tfm-lm";
  }
  llvm_unreachable("unknown model family");
}

std::optional<ModelFamily> mlir::loom::models::parseFamilyName(StringRef name) {
  return llvm::StringSwitch<std::optional<ModelFamily>>(name)
      .Case("gpt2", ModelFamily::GPT2)
      .Case("llama", ModelFamily::Llama)
      .Case("transformer", ModelFamily::Transformer)
      .Case("tfm-lm", ModelFamily::TransformerLM)
      .Default(std::nullopt);
}

std::optional<bool> mlir::loom::models::parseBoolean(StringRef text) {
  if (text.equals_insensitive("true"))
    return true;
  if (text.equals_insensitive("false"))
    return false;
  return std::nullopt;
}

std::optional<ElementType>
mlir::loom::models::parseElementType(StringRef name) {
  return llvm::StringSwitch<std::optional<ElementType>>(name)
      .Case("f32", ElementType::F32)
      .Case("bf16", ElementType::BF16)
      .Case("f16", ElementType::F16)
      .Case("f64", ElementType::F64)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

namespace {
/// One row of a preset table: the sizes that differ between presets.
struct PresetRow {
  StringRef name;
  int64_t layers, hidden, heads, seq, batch;
};
} // namespace

/// nanoGPT's `from_pretrained` sizes (vocab 50257, block size 1024) with the
/// batch of its `train_gpt2.py` config (12), then the GPT-3 paper's Table 2.1
/// (context 2048; batch = the paper's batch in tokens / 2048). Two rows of
/// the table are inconsistent, and the preset keeps its d_head of 128:
/// GPT-3 XL lists 24 heads for d_model 2048 (16 are used) and GPT-3 13B
/// d_model 5140 for 40 heads (5120 is used).
static const PresetRow kGPT2Presets[] = {
    {"124m", 12, 768, 12, 1024, 12},
    {"350m", 24, 1024, 16, 1024, 12},
    {"774m", 36, 1280, 20, 1024, 12},
    {"1.5b", 48, 1600, 25, 1024, 12},
    {"gpt3-small", 12, 768, 12, 2048, 256},
    {"gpt3-medium", 24, 1024, 16, 2048, 256},
    {"gpt3-large", 24, 1536, 16, 2048, 256},
    {"gpt3-xl", 24, 2048, 16, 2048, 512},
    {"gpt3-2.7b", 32, 2560, 32, 2048, 512},
    {"gpt3-6.7b", 32, 4096, 32, 2048, 1024},
    {"gpt3-13b", 40, 5120, 40, 2048, 1024},
    {"gpt3-175b", 96, 12288, 96, 2048, 1536},
};

namespace {
/// A Llama 3 size (Meta's model cards / Hugging Face config.json).
struct LlamaRow {
  StringRef name;
  int64_t layers, hidden, heads, kvHeads, ffn;
};
} // namespace

static const LlamaRow kLlamaPresets[] = {
    {"llama3-8b", 32, 4096, 32, 8, 14336},
    {"llama3-70b", 80, 8192, 64, 8, 28672},
    {"llama3-405b", 126, 16384, 128, 8, 53248},
};

/// Every preset's names, in size order: the canonical name first (the one
/// `getPresetNames` lists), then the aliases the ecosystem uses for the
/// same model: Hugging Face's GPT-2 model ids (`gpt2`, `gpt2-medium`, ...)
/// and OpenAI's parameter counts (`1558m`), the GPT-3 paper's sizes, the
/// bare Llama sizes. Lookup ignores case (`124M` is `124m`).
static const PresetNames kGPT2Names[] = {
    {"124m", "gpt2,gpt2-small"},
    {"350m", "gpt2-medium,355m"},
    {"774m", "gpt2-large"},
    {"1.5b", "1558m,gpt2-xl"},
    {"gpt3-small", "gpt3-125m"},
    {"gpt3-medium", "gpt3-350m"},
    {"gpt3-large", "gpt3-760m"},
    {"gpt3-xl", "gpt3-1.3b"},
    {"gpt3-2.7b", ""},
    {"gpt3-6.7b", ""},
    {"gpt3-13b", ""},
    {"gpt3-175b", "gpt3"},
};
static const PresetNames kLlamaNames[] = {
    {"llama3-8b", "8b,llama-3-8b"},
    {"llama3-70b", "70b,llama-3-70b"},
    {"llama3-405b", "405b,llama-3-405b"},
};
static const PresetNames kTransformerNames[] = {{"seed", ""}};
static const PresetNames kTransformerLMNames[] = {{"1b", ""}};

llvm::SmallVector<StringRef, 4> PresetNames::getAliases() const {
  llvm::SmallVector<StringRef, 4> result;
  aliases.split(result, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  return result;
}

llvm::ArrayRef<PresetNames>
mlir::loom::models::getPresets(ModelFamily family) {
  switch (family) {
  case ModelFamily::GPT2:
    return kGPT2Names;
  case ModelFamily::Llama:
    return kLlamaNames;
  case ModelFamily::Transformer:
    return kTransformerNames;
  case ModelFamily::TransformerLM:
    return kTransformerLMNames;
  }
  llvm_unreachable("unknown model family");
}

/// The canonical names of `family`'s presets, in table order.
static std::vector<StringRef> collectNames(ModelFamily family) {
  std::vector<StringRef> names;
  for (const PresetNames &preset : getPresets(family))
    names.push_back(preset.name);
  return names;
}

llvm::ArrayRef<StringRef>
mlir::loom::models::getPresetNames(ModelFamily family) {
  // The canonical names in table order, collected once per family.
  static const std::vector<StringRef> names[] = {
      collectNames(ModelFamily::GPT2), collectNames(ModelFamily::Llama),
      collectNames(ModelFamily::Transformer),
      collectNames(ModelFamily::TransformerLM)};
  return names[static_cast<int>(family)];
}

std::optional<StringRef>
mlir::loom::models::lookupPresetName(ModelFamily family, StringRef name) {
  for (const PresetNames &preset : getPresets(family)) {
    if (preset.name.equals_insensitive(name))
      return preset.name;
    for (StringRef alias : preset.getAliases())
      if (alias.equals_insensitive(name))
        return preset.name;
  }
  return std::nullopt;
}

std::string mlir::loom::models::describePresetNames(ModelFamily family) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::ListSeparator comma;
  for (const PresetNames &preset : getPresets(family)) {
    os << comma << preset.name;
    if (!preset.aliases.empty())
      os << " (" << llvm::join(preset.getAliases(), ", ") << ")";
  }
  return text;
}

llvm::Error mlir::loom::models::makeUnknownPresetError(ModelFamily family,
                                                       StringRef name) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "unknown " + getFamilyName(family) + " preset '" + name +
          "'; expected one of " + describePresetNames(family) +
          " (case-insensitive)");
}

std::optional<ModelConfig> mlir::loom::models::getPreset(ModelFamily family,
                                                         StringRef given) {
  std::optional<StringRef> canonical = lookupPresetName(family, given);
  if (!canonical)
    return std::nullopt;
  StringRef name = *canonical;
  ModelConfig config;
  config.family = family;
  switch (family) {
  case ModelFamily::GPT2:
    for (const PresetRow &row : kGPT2Presets) {
      if (row.name != name)
        continue;
      config.layers = row.layers;
      config.hidden = row.hidden;
      config.heads = config.kvHeads = row.heads;
      config.ffn = 4 * row.hidden;
      config.vocab = 50257;
      config.seq = row.seq;
      config.batch = row.batch;
      config.geluTanh = true;
      return config;
    }
    return std::nullopt;

  case ModelFamily::Llama:
    for (const LlamaRow &row : kLlamaPresets) {
      if (row.name != name)
        continue;
      config.layers = row.layers;
      config.hidden = row.hidden;
      config.heads = row.heads;
      config.kvHeads = row.kvHeads;
      config.ffn = row.ffn;
      config.vocab = 128256;
      config.ropeTheta = 500000.0;
      config.normEps = 1e-5;
      // Llama 3's pre-training context; the batch is not part of the
      // architecture.
      config.seq = 8192;
      config.batch = 8;
      return config;
    }
    return std::nullopt;

  case ModelFamily::Transformer:
    if (name != "seed")
      return std::nullopt;
    // The seed's train.py defaults: batch 32, src/tgt length 10, vocab
    // 20000, d_model 128, one encoder and one decoder layer; its Net fixes
    // 8 heads and ffn_hidden_size = hidden_size, and its EmbeddingLayer
    // keeps the default dropout_rate 0.1.
    config.layers = config.decoderLayers = 1;
    config.hidden = config.ffn = 128;
    config.heads = config.kvHeads = 8;
    config.vocab = 20000;
    config.seq = config.tgtSeq = 10;
    config.batch = 32;
    config.dropout = 0.1;
    config.geluTanh = true;
    return config;

  case ModelFamily::TransformerLM:
    if (name != "1b")
      return std::nullopt;
    // The seed's ~1B model: emsize = nhid = 4096, 16 heads, 8 layers,
    // bptt 35, batch 20; the vocabulary of its WikiText-2 run is 28783
    // tokens, the size that makes its printed count (1,041,453,167) exact.
    config.layers = 8;
    config.hidden = config.ffn = 4096;
    config.heads = config.kvHeads = 16;
    config.vocab = 28783;
    config.seq = 35;
    config.batch = 20;
    return config;
  }
  llvm_unreachable("unknown model family");
}

ModelConfig mlir::loom::models::getDefaultConfig(ModelFamily family) {
  return *getPreset(family, getPresetNames(family).front());
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// `value` in the shortest of fixed and scientific notation (`1.5`, `1e-05`).
static std::string formatDouble(double value) {
  std::ostringstream stream;
  stream << value;
  return stream.str();
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The largest element count any single tensor or the parameter total may
/// reach; 2^62 leaves room for byte counts of 4-byte elements in int64.
static constexpr int64_t kMaxElements = int64_t(1) << 62;

/// Returns the product of `factors`, or std::nullopt if it exceeds
/// kMaxElements.
static std::optional<int64_t> boundedProduct(llvm::ArrayRef<int64_t> factors) {
  int64_t product = 1;
  for (int64_t factor : factors) {
    std::optional<int64_t> next = llvm::checkedMul(product, factor);
    if (!next || *next > kMaxElements)
      return std::nullopt;
    product = *next;
  }
  return product;
}

llvm::Error mlir::loom::models::validateConfig(const ModelConfig &config) {
  bool isLlama = config.family == ModelFamily::Llama;
  bool isTransformer = config.family == ModelFamily::Transformer;

  struct Size {
    StringRef flag;
    int64_t value;
    bool used;
  };
  const Size sizes[] = {
      {"--layers", config.layers, true},
      {"--decoder-layers", config.decoderLayers, isTransformer},
      {"--hidden", config.hidden, true},
      {"--heads", config.heads, true},
      {"--kv-heads", config.kvHeads, isLlama},
      {"--ffn", config.ffn, true},
      {"--vocab", config.vocab, true},
      {"--seq", config.seq, true},
      {"--tgt-seq", config.tgtSeq, isTransformer},
      {"--batch", config.batch, true},
  };
  for (const Size &size : sizes)
    if (size.used && size.value <= 0)
      return makeError(size.flag + " must be positive, got " +
                       llvm::Twine(size.value));

  // A graph is built layer by layer; a layer count beyond any real model
  // would only make the tool run out of memory.
  constexpr int64_t kMaxLayers = 10000;
  if (config.layers > kMaxLayers ||
      (isTransformer && config.decoderLayers > kMaxLayers))
    return makeError(
        "expected at most " + llvm::Twine(kMaxLayers) + " layers, got " +
        llvm::Twine(
            std::max(config.layers, isTransformer ? config.decoderLayers : 0)));

  if (config.hidden % config.heads != 0)
    return makeError("--heads (" + llvm::Twine(config.heads) +
                     ") must divide --hidden (" + llvm::Twine(config.hidden) +
                     ")");
  if (isLlama) {
    if (config.heads % config.kvHeads != 0)
      return makeError("--kv-heads (" + llvm::Twine(config.kvHeads) +
                       ") must divide --heads (" + llvm::Twine(config.heads) +
                       ")");
    int64_t headSize = config.hidden / config.heads;
    if (headSize % 2 != 0)
      return makeError("rotary embeddings need an even head size, got "
                       "--hidden / --heads = " +
                       llvm::Twine(headSize));
    if (!(config.ropeTheta > 0.0) || !std::isfinite(config.ropeTheta))
      return makeError("--rope-theta must be positive, got " +
                       formatDouble(config.ropeTheta));
  }
  if (!(config.normEps > 0.0) || !std::isfinite(config.normEps))
    return makeError("--norm-eps must be positive, got " +
                     formatDouble(config.normEps));
  if (!(config.dropout >= 0.0 && config.dropout < 1.0))
    return makeError("--dropout must be in [0, 1), got " +
                     formatDouble(config.dropout));
  if (isLlama && config.dropout != 0.0)
    return makeError("llama has no dropout site (Hugging Face's Llama "
                     "drops only attention weights, which loom.attention "
                     "fuses), got --dropout " +
                     formatDouble(config.dropout));

  // Every tensor the graph holds, and the parameter total, must have an
  // element count that fits comfortably in int64.
  int64_t widest = std::max({config.hidden, config.ffn, config.vocab});
  int64_t longest = std::max(config.seq, isTransformer ? config.tgtSeq : 0);
  int64_t qkvWidth = 3;
  std::optional<int64_t> activations =
      boundedProduct({config.batch, longest, widest, qkvWidth});
  std::optional<int64_t> scores =
      boundedProduct({config.batch, config.heads, longest, longest});
  std::optional<int64_t> matrices = boundedProduct(
      {std::max(config.layers, isTransformer ? config.decoderLayers : 0) + 2,
       widest, std::max(config.hidden, config.ffn), 4});
  if (!activations || !scores || !matrices)
    return makeError("the model is too large: a tensor or the parameter "
                     "count would exceed 2^62 elements");
  return llvm::Error::success();
}

//===- ModelOptions.cpp - Model configurations from key=value text --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// parseModelOptions, the rules of `loom-model`'s flags over text:
//
//   1. split the settings at commas into `key=value` pairs; reject a pair
//      without `=`, an unknown key, a key given twice, a key the family
//      does not read (`kv-heads` and `rope-theta` are Llama's, `gelu` is
//      GPT-2's and the Transformer's, `decoder-layers` and `tgt-seq` the
//      Transformer's);
//   2. start from `preset` or the family's default and apply the sizes;
//   3. derive what `loom-model` derives (ffn from hidden, the decoder from
//      the encoder, kv-heads = heads outside Llama) and validate.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/ModelOptions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <vector>

using namespace mlir::loom::models;

namespace {

/// Whether `key` is read by `family` (every other key is read by all).
bool keyApplies(ModelFamily family, llvm::StringRef key) {
  if (key == "kv-heads" || key == "rope-theta")
    return family == ModelFamily::Llama;
  if (key == "decoder-layers" || key == "tgt-seq")
    return family == ModelFamily::Transformer;
  if (key == "gelu")
    return family == ModelFamily::GPT2 || family == ModelFamily::Transformer;
  if (key == "bias" || key == "tie-embeddings")
    return family == ModelFamily::GPT2;
  return true;
}

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

llvm::Expected<ModelConfig>
mlir::loom::models::parseModelOptions(ModelFamily family,
                                      llvm::StringRef settings) {
  std::vector<ModelSetting> parsed;
  llvm::SmallVector<llvm::StringRef> pairs;
  settings.split(pairs, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef pair : pairs) {
    if (!pair.contains('='))
      return makeError("model option '" + pair.trim() +
                       "': expected key=value");
    auto [key, value] = pair.split('=');
    parsed.push_back({key.trim().str(), value.trim().str()});
  }
  return applyModelOptions(family, parsed, OptionSpelling::Key);
}

llvm::Expected<ModelConfig>
mlir::loom::models::applyModelOptions(ModelFamily family,
                                      llvm::ArrayRef<ModelSetting> settings,
                                      OptionSpelling spelling) {
  static const char *const kIntegerKeys[] = {
      "layers", "decoder-layers", "hidden", "heads",   "kv-heads",
      "ffn",    "vocab",          "seq",    "tgt-seq", "batch"};
  static const char *const kRealKeys[] = {"rope-theta", "norm-eps", "dropout"};
  static const char *const kTextKeys[] = {"preset", "gelu", "dtype", "bias",
                                          "tie-embeddings"};
  auto isOneOf = [](llvm::StringRef key, llvm::ArrayRef<const char *> keys) {
    return llvm::is_contained(keys, key);
  };
  // `--hidden` or `model option 'hidden'`.
  auto name = [&](llvm::StringRef key) -> std::string {
    if (spelling == OptionSpelling::Flag)
      return ("--" + key).str();
    return ("model option '" + key + "'").str();
  };

  llvm::StringMap<std::string> given;
  for (const auto &[key, value] : settings) {
    if (!isOneOf(key, kIntegerKeys) && !isOneOf(key, kRealKeys) &&
        !isOneOf(key, kTextKeys))
      return makeError("unknown " + name(key) +
                       "; expected one of preset, layers, decoder-layers, "
                       "hidden, heads, kv-heads, ffn, vocab, seq, tgt-seq, "
                       "batch, rope-theta, norm-eps, dropout, gelu, bias, "
                       "tie-embeddings, dtype");
    if (!keyApplies(family, key))
      return makeError(name(key) + " does not apply to " +
                       getFamilyName(family));
    if (!given.try_emplace(key, value).second)
      return makeError(name(key) + " is given twice");
  }

  ModelConfig config = getDefaultConfig(family);
  if (auto preset = given.find("preset"); preset != given.end()) {
    std::optional<ModelConfig> named = getPreset(family, preset->second);
    if (!named)
      return makeUnknownPresetError(family, preset->second);
    config = *named;
  }

  auto integer = [&](llvm::StringRef key, int64_t &field) -> llvm::Error {
    auto it = given.find(key);
    if (it == given.end())
      return llvm::Error::success();
    if (llvm::StringRef(it->second).getAsInteger(10, field))
      return makeError(name(key) + ": expected an integer, found '" +
                       it->second + "'");
    return llvm::Error::success();
  };
  auto real = [&](llvm::StringRef key, double &field) -> llvm::Error {
    auto it = given.find(key);
    if (it == given.end())
      return llvm::Error::success();
    if (!llvm::to_float(it->second, field))
      return makeError(name(key) + ": expected a number, found '" +
                       it->second + "'");
    return llvm::Error::success();
  };
  for (auto [key, field] : {std::pair{"layers", &config.layers},
                            {"hidden", &config.hidden},
                            {"heads", &config.heads},
                            {"ffn", &config.ffn},
                            {"vocab", &config.vocab},
                            {"seq", &config.seq},
                            {"batch", &config.batch},
                            {"kv-heads", &config.kvHeads}})
    if (llvm::Error error = integer(key, *field))
      return std::move(error);
  if (family == ModelFamily::Transformer) {
    // The decoder mirrors the encoder unless told otherwise.
    if (given.count("layers"))
      config.decoderLayers = config.layers;
    if (given.count("seq"))
      config.tgtSeq = config.seq;
    if (llvm::Error error = integer("decoder-layers", config.decoderLayers))
      return std::move(error);
    if (llvm::Error error = integer("tgt-seq", config.tgtSeq))
      return std::move(error);
  }
  // loom-model's derived widths: nanoGPT's 4x, the seeds' 1x; Llama's is
  // not a multiple and keeps the preset's.
  if (given.count("hidden") && !given.count("ffn")) {
    if (family == ModelFamily::GPT2)
      config.ffn = 4 * config.hidden;
    else if (family != ModelFamily::Llama)
      config.ffn = config.hidden;
  }
  if (family != ModelFamily::Llama)
    config.kvHeads = config.heads;
  for (auto [key, field] : {std::pair{"rope-theta", &config.ropeTheta},
                            {"norm-eps", &config.normEps},
                            {"dropout", &config.dropout}})
    if (llvm::Error error = real(key, *field))
      return std::move(error);
  if (auto gelu = given.find("gelu"); gelu != given.end()) {
    if (gelu->second != "tanh" && gelu->second != "none")
      return makeError(name("gelu") + ": expected tanh or none, found '" +
                       gelu->second + "'");
    config.geluTanh = gelu->second == "tanh";
  }
  for (auto [key, field] : {std::pair{"bias", &config.bias},
                            {"tie-embeddings", &config.tieEmbeddings}}) {
    auto it = given.find(key);
    if (it == given.end())
      continue;
    std::optional<bool> value = parseBoolean(it->second);
    if (!value)
      return makeError(name(key) + ": expected true or false, found '" +
                       it->second + "'");
    *field = *value;
  }
  if (auto dtype = given.find("dtype"); dtype != given.end()) {
    std::optional<ElementType> type = parseElementType(dtype->second);
    if (!type)
      return makeError(name("dtype") +
                       ": expected f32, bf16, f16 or f64, found '" +
                       dtype->second + "'");
    config.elementType = *type;
  }
  if (llvm::Error error = validateConfig(config))
    return std::move(error);
  return config;
}

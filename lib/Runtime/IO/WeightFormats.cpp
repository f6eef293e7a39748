//===- WeightFormats.cpp - Model weights as Loom, nanoGPT and HF name them ===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Tell the family from the names (Llama: `model.embed_tokens.weight` /
//    `model.layers.*`; GPT-2: `wte.weight` with or without the prefix).
// 2. Name each tensor the Loom way (HF GPT-2: add the `transformer.`
//    prefix where the file has none), leaving out what is not a weight.
// 3. Mark HF's Conv1D weights as transposed ([in, out] in the file).
// 4. Check the set, shapes and dtypes against the model the names describe;
//    report the first fault by the tensor's name in the file.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/WeightFormats.h"

#include "loom/Runtime/MPI/DeviceMesh.h"

#include <algorithm>
#include <set>

namespace loom::runtime::io {

static constexpr const char *kPrefix = "transformer.";
static constexpr const char *kLlamaEmbedding = "model.embed_tokens.weight";

std::optional<WeightFormat> parseWeightFormat(const std::string &text) {
  if (text == "loom")
    return WeightFormat::Loom;
  if (text == "nanogpt")
    return WeightFormat::NanoGPT;
  if (text == "hf")
    return WeightFormat::HF;
  return std::nullopt;
}

HeaderMap headersOf(const TensorMap &tensors) {
  HeaderMap headers;
  for (const auto &[name, tensor] : tensors)
    headers[name] = TensorHeader{tensor.dtype, tensor.shape};
  return headers;
}

std::vector<int64_t> WeightBinding::loomShape() const {
  std::vector<int64_t> shape = file.shape;
  if (transposed && shape.size() == 2)
    std::swap(shape[0], shape[1]);
  return shape;
}

static bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string WeightBindings::fileName(const std::string &loomName) const {
  for (const auto &[name, binding] : params)
    if (name == loomName)
      return binding.fileName;
  if (format == WeightFormat::HF && family == WeightFamily::GPT2 && !prefixed &&
      startsWith(loomName, kPrefix))
    return loomName.substr(std::string(kPrefix).size());
  return loomName;
}

/// The layer index of `<head>{i}.<rest>`, and `rest`.
static std::optional<std::pair<int64_t, std::string>>
splitLayerName(const std::string &name, const std::string &head) {
  if (!startsWith(name, head))
    return std::nullopt;
  size_t dot = name.find('.', head.size());
  if (dot == std::string::npos)
    return std::nullopt;
  std::string index = name.substr(head.size(), dot - head.size());
  if (index.empty() || index.size() > 9 ||
      !std::all_of(index.begin(), index.end(), ::isdigit) ||
      (index.size() > 1 && index[0] == '0'))
    return std::nullopt;
  return std::make_pair(std::stoll(index), name.substr(dot + 1));
}

static std::optional<std::pair<int64_t, std::string>>
splitGPT2Layer(const std::string &loomName) {
  return splitLayerName(loomName, std::string(kPrefix) + "h.");
}

/// Whether a GPT-2 layer tensor `rest` is one of HF's Conv1D weights.
static bool isConv1DWeight(const std::string &rest) {
  return rest == "attn.c_attn.weight" || rest == "attn.c_proj.weight" ||
         rest == "mlp.c_fc.weight" || rest == "mlp.c_proj.weight";
}

/// Training state, not weights: the optimizer's, the step counter and the
/// fp16 loss scale with its growth tracker (docs/MixedPrecision.md).
static bool isOptimizerState(const std::string &name) {
  return name == "step" || name == "loss_scale" ||
         name == "loss_scale.growth_tracker" || endsWith(name, ".exp_avg") ||
         endsWith(name, ".exp_avg_sq") || endsWith(name, ".momentum_buffer");
}

static WeightFamily familyOf(const HeaderMap &headers) {
  for (const auto &[name, header] : headers)
    if (name == kLlamaEmbedding || startsWith(name, "model.layers."))
      return WeightFamily::Llama;
  if (headers.count("wte.weight") ||
      headers.count(std::string(kPrefix) + "wte.weight"))
    return WeightFamily::GPT2;
  return WeightFamily::Other;
}

std::optional<std::string> bindWeights(const HeaderMap &headers,
                                       WeightFormat format,
                                       WeightBindings &bindings) {
  bindings = WeightBindings();
  bindings.format = format;
  bindings.family = familyOf(headers);
  if (format != WeightFormat::Loom && bindings.family == WeightFamily::Other)
    return std::string("names neither GPT-2's weights (`wte.weight`, "
                       "`h.0.attn.c_attn.weight`, ...) nor Llama's "
                       "(`model.embed_tokens.weight`, ...): read it as "
                       "--format loom (the builder's names)");
  if (format == WeightFormat::NanoGPT && bindings.family == WeightFamily::Llama)
    return std::string("holds Llama's weights, which nanoGPT does not name: "
                       "read them as hf (or loom, the same names)");
  bool gpt2 = bindings.family == WeightFamily::GPT2;
  bindings.prefixed =
      !gpt2 || headers.count(std::string(kPrefix) + "wte.weight");

  for (const auto &[name, header] : headers) {
    std::string loomName = name;
    if (gpt2 && format == WeightFormat::HF && !startsWith(name, kPrefix) &&
        name != "lm_head.weight")
      loomName = kPrefix + name;
    auto layer = gpt2 ? splitGPT2Layer(loomName) : std::nullopt;
    bool buffer = format != WeightFormat::Loom &&
                  ((layer && (layer->second == "attn.bias" ||
                              layer->second == "attn.masked_bias")) ||
                   (!gpt2 && endsWith(name, ".rotary_emb.inv_freq")));
    bool state = format == WeightFormat::Loom && isOptimizerState(name);
    if (buffer || state) {
      bindings.skipped.push_back(name);
      continue;
    }
    if (auto it = bindings.params.find(loomName); it != bindings.params.end())
      return "tensor `" + name + "` is given twice (as `" +
             it->second.fileName + "` too)";
    if (!isFloat(header.dtype))
      return "tensor `" + name + "` is " +
             std::string(dtypeName(header.dtype)) +
             ", expected a floating-point dtype (F64, F32, BF16 or F16)";
    WeightBinding binding;
    binding.fileName = name;
    binding.file = header;
    binding.transposed = gpt2 && format == WeightFormat::HF && layer &&
                         isConv1DWeight(layer->second) &&
                         header.shape.size() == 2;
    bindings.params.emplace(loomName, std::move(binding));
  }
  return std::nullopt;
}

/// What a file must hold for the model its names describe: Loom name ->
/// Loom shape, and a description for messages.
using Expected = std::map<std::string, std::vector<int64_t>>;

static std::vector<int64_t> shapeOf(const WeightBindings &bindings,
                                    const std::string &name) {
  auto it = bindings.params.find(name);
  return it == bindings.params.end() ? std::vector<int64_t>()
                                     : it->second.loomShape();
}

static std::optional<std::string> expectGPT2(const WeightBindings &bindings,
                                             Expected &expected,
                                             std::string &model) {
  std::string wteName = std::string(kPrefix) + "wte.weight";
  std::vector<int64_t> wte = shapeOf(bindings, wteName);
  if (!bindings.params.count(wteName))
    return "missing tensor `" + bindings.fileName(wteName) +
           "` (the token embedding, which gives the vocabulary and width)";
  if (wte.size() != 2)
    return "tensor `" + bindings.fileName(wteName) + "` has shape " +
           mpi::formatShape(wte) + ", expected [vocab, hidden]";
  int64_t vocab = wte[0], hidden = wte[1];
  int64_t layers = 0;
  for (const auto &[name, binding] : bindings.params)
    if (auto layer = splitGPT2Layer(name))
      layers = std::max(layers, layer->first + 1);
  int64_t ffn = 4 * hidden;
  if (auto fc = shapeOf(bindings, std::string(kPrefix) + "h.0.mlp.c_fc.weight");
      fc.size() == 2)
    ffn = fc[0];
  std::vector<int64_t> wpe =
      shapeOf(bindings, std::string(kPrefix) + "wpe.weight");
  int64_t positions = wpe.empty() ? 0 : wpe[0];
  bool bias = bindings.params.count(std::string(kPrefix) + "ln_f.bias");

  auto addNorm = [&](const std::string &prefix) {
    expected[prefix + ".weight"] = {hidden};
    if (bias)
      expected[prefix + ".bias"] = {hidden};
  };
  auto addLinear = [&](const std::string &prefix, int64_t out, int64_t in) {
    expected[prefix + ".weight"] = {out, in};
    if (bias)
      expected[prefix + ".bias"] = {out};
  };
  expected[wteName] = {vocab, hidden};
  expected[std::string(kPrefix) + "wpe.weight"] = {positions, hidden};
  for (int64_t i = 0; i < layers; ++i) {
    std::string p = std::string(kPrefix) + "h." + std::to_string(i) + ".";
    addNorm(p + "ln_1");
    addLinear(p + "attn.c_attn", 3 * hidden, hidden);
    addLinear(p + "attn.c_proj", hidden, hidden);
    addNorm(p + "ln_2");
    addLinear(p + "mlp.c_fc", ffn, hidden);
    addLinear(p + "mlp.c_proj", hidden, ffn);
  }
  addNorm(std::string(kPrefix) + "ln_f");
  if (bindings.params.count("lm_head.weight"))
    expected["lm_head.weight"] = {vocab, hidden};
  model = "GPT-2 with " + std::to_string(layers) + " layers, hidden " +
          std::to_string(hidden) +
          (bias ? ", with biases" : ", without biases");
  return std::nullopt;
}

static std::optional<std::string> expectLlama(const WeightBindings &bindings,
                                              Expected &expected,
                                              std::string &model) {
  std::vector<int64_t> embed = shapeOf(bindings, kLlamaEmbedding);
  if (!bindings.params.count(kLlamaEmbedding))
    return std::string("missing tensor `") + kLlamaEmbedding +
           "` (the token embedding, which gives the vocabulary and width)";
  if (embed.size() != 2)
    return std::string("tensor `") + kLlamaEmbedding + "` has shape " +
           mpi::formatShape(embed) + ", expected [vocab, hidden]";
  int64_t vocab = embed[0], hidden = embed[1];
  int64_t layers = 0;
  for (const auto &[name, binding] : bindings.params)
    if (auto layer = splitLayerName(name, "model.layers."))
      layers = std::max(layers, layer->first + 1);
  // Widths from the first layer: query and key/value features (heads x
  // head size), the feed-forward width.
  auto rows = [&](const std::string &rest, int64_t fallback) {
    std::vector<int64_t> shape = shapeOf(bindings, "model.layers.0." + rest);
    return shape.size() == 2 ? shape[0] : fallback;
  };
  int64_t q = rows("self_attn.q_proj.weight", hidden);
  int64_t kv = rows("self_attn.k_proj.weight", hidden);
  int64_t ffn = rows("mlp.gate_proj.weight", 4 * hidden);
  for (int64_t i = 0; i < layers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    expected[p + "input_layernorm.weight"] = {hidden};
    expected[p + "self_attn.q_proj.weight"] = {q, hidden};
    expected[p + "self_attn.k_proj.weight"] = {kv, hidden};
    expected[p + "self_attn.v_proj.weight"] = {kv, hidden};
    expected[p + "self_attn.o_proj.weight"] = {hidden, q};
    expected[p + "post_attention_layernorm.weight"] = {hidden};
    expected[p + "mlp.gate_proj.weight"] = {ffn, hidden};
    expected[p + "mlp.up_proj.weight"] = {ffn, hidden};
    expected[p + "mlp.down_proj.weight"] = {hidden, ffn};
  }
  expected[kLlamaEmbedding] = {vocab, hidden};
  expected["model.norm.weight"] = {hidden};
  // Loom's Llama has its own head; a file whose head is tied (no
  // `lm_head.weight`) is reported missing below.
  expected["lm_head.weight"] = {vocab, hidden};
  model = "Llama with " + std::to_string(layers) + " layers, hidden " +
          std::to_string(hidden) + ", q/kv features " + std::to_string(q) +
          "/" + std::to_string(kv) + ", ffn " + std::to_string(ffn);
  return std::nullopt;
}

std::optional<std::string> checkDescribedModel(const WeightBindings &bindings) {
  Expected expected;
  std::string model;
  if (bindings.family == WeightFamily::GPT2) {
    if (auto error = expectGPT2(bindings, expected, model))
      return error;
  } else if (bindings.family == WeightFamily::Llama) {
    if (auto error = expectLlama(bindings, expected, model))
      return error;
  } else {
    // Another family: its builder's names, whatever they are; one dtype.
    for (const auto &[name, binding] : bindings.params)
      expected[name] = binding.loomShape();
  }
  for (const auto &[name, binding] : bindings.params)
    if (!expected.count(name))
      return "unexpected tensor `" + binding.fileName +
             "`: not a parameter of " + model;
  // One dtype for every weight, named against the embedding's.
  const WeightBinding *first = nullptr;
  for (const char *embedding : {"transformer.wte.weight", kLlamaEmbedding})
    if (auto it = bindings.params.find(embedding); it != bindings.params.end())
      first = &it->second;
  for (const auto &[name, shape] : expected) {
    auto it = bindings.params.find(name);
    if (it == bindings.params.end())
      return "missing tensor `" + bindings.fileName(name) + "` (" + model +
             (name == "lm_head.weight" && bindings.family == WeightFamily::Llama
                  ? "; Loom's Llama has an untied head"
                  : "") +
             ")";
    const WeightBinding &binding = it->second;
    if (binding.loomShape() != shape) {
      // Shapes as the file holds them: HF's Conv1D weights are [in, out].
      std::vector<int64_t> want = shape;
      if (binding.transposed)
        std::swap(want[0], want[1]);
      return "tensor `" + binding.fileName + "` has shape " +
             mpi::formatShape(binding.file.shape) + ", expected " +
             mpi::formatShape(want) +
             (binding.transposed ? " (Conv1D: [in, out])" : "");
    }
    if (!first)
      first = &binding;
    else if (binding.file.dtype != first->file.dtype)
      return "tensor `" + binding.fileName + "` is " +
             std::string(dtypeName(binding.file.dtype)) + ", but `" +
             first->fileName + "` is " +
             std::string(dtypeName(first->file.dtype)) +
             " (one dtype for every weight)";
  }
  return std::nullopt;
}

/// A 2-D tensor transposed (any element size).
static TensorData transposed(const TensorData &t) {
  TensorData out;
  out.dtype = t.dtype;
  int64_t rows = t.shape[0], cols = t.shape[1];
  out.shape = {cols, rows};
  size_t size = dtypeSize(t.dtype);
  out.bytes.resize(t.bytes.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::copy_n(&t.bytes[(r * cols + c) * size], size,
                  &out.bytes[(c * rows + r) * size]);
  return out;
}

std::optional<std::string> toLoomParameters(const TensorMap &tensors,
                                            WeightFormat format,
                                            TensorMap &parameters,
                                            int &skipped) {
  parameters.clear();
  WeightBindings bindings;
  if (auto error = bindWeights(headersOf(tensors), format, bindings))
    return error;
  // The tied head is wte under a second name (nanoGPT's state dict).
  std::string wte = std::string(kPrefix) + "wte.weight";
  if (bindings.family == WeightFamily::GPT2 &&
      bindings.params.count("lm_head.weight") && bindings.params.count(wte)) {
    const TensorData &head =
        tensors.at(bindings.params.at("lm_head.weight").fileName);
    const TensorData &table = tensors.at(bindings.params.at(wte).fileName);
    if (head.dtype == table.dtype && head.shape == table.shape &&
        head.bytes == table.bytes) {
      bindings.skipped.push_back("lm_head.weight");
      bindings.params.erase("lm_head.weight");
    }
  }
  skipped = static_cast<int>(bindings.skipped.size());
  if (auto error = checkDescribedModel(bindings))
    return error;
  for (const auto &[name, binding] : bindings.params) {
    const TensorData &value = tensors.at(binding.fileName);
    parameters[name] = binding.transposed ? transposed(value) : value;
  }
  return std::nullopt;
}

std::optional<std::string> fromLoomParameters(const TensorMap &params,
                                              WeightFormat format,
                                              TensorMap &out) {
  out.clear();
  WeightBindings bindings;
  if (auto error = bindWeights(headersOf(params), WeightFormat::Loom, bindings))
    return error;
  if (format == WeightFormat::Loom) {
    out = params;
    return std::nullopt;
  }
  if (bindings.family == WeightFamily::Llama) {
    if (format == WeightFormat::NanoGPT)
      return std::string("nanoGPT does not name Llama's weights: write them "
                         "as hf (or loom, the same names)");
    out = params;
    return std::nullopt;
  }
  if (bindings.family != WeightFamily::GPT2)
    return std::string("only GPT-2's and Llama's weights have a nanoGPT or "
                       "Hugging Face layout: write them as loom");
  for (const auto &[name, value] : params) {
    if (format != WeightFormat::HF) {
      out[name] = value;
      continue;
    }
    std::string hfName = startsWith(name, kPrefix)
                             ? name.substr(std::string(kPrefix).size())
                             : name;
    auto layer = splitGPT2Layer(name);
    bool conv =
        layer && isConv1DWeight(layer->second) && value.shape.size() == 2;
    out[hfName] = conv ? transposed(value) : value;
  }
  // nanoGPT's state dict lists the tied head under its own name too.
  std::string wte = std::string(kPrefix) + "wte.weight";
  if (format == WeightFormat::NanoGPT && !params.count("lm_head.weight") &&
      params.count(wte))
    out["lm_head.weight"] = params.at(wte);
  return std::nullopt;
}

} // namespace loom::runtime::io

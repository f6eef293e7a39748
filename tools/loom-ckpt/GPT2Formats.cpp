//===- GPT2Formats.cpp - GPT-2 weights between Loom, nanoGPT and HF -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Name each input tensor the Loom way (HF: add the `transformer.`
//    prefix where the file has none), leaving out what is not a weight.
// 2. Transpose HF's Conv1D weights to Linear's [out, in].
// 3. Drop `lm_head.weight` when it is wte's copy (the tied head).
// 4. Check the set, shapes and dtypes against the model the names and wte
//    describe; report the first fault by the tensor's name in the file.
//
//===----------------------------------------------------------------------===//

#include "GPT2Formats.h"

#include "loom/Runtime/MPI/DeviceMesh.h"

#include <algorithm>
#include <map>
#include <set>

using namespace loom::runtime;
using io::DType;
using io::TensorData;
using io::TensorMap;

namespace loom::ckpt {

static constexpr const char *kPrefix = "transformer.";

std::optional<GPT2Format> parseGPT2Format(const std::string &text) {
  if (text == "loom")
    return GPT2Format::Loom;
  if (text == "nanogpt")
    return GPT2Format::NanoGPT;
  if (text == "hf")
    return GPT2Format::HF;
  return std::nullopt;
}

static bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The layer index of `transformer.h.{i}.<rest>`, and `rest`.
static std::optional<std::pair<int64_t, std::string>>
splitLayerName(const std::string &name) {
  std::string head = std::string(kPrefix) + "h.";
  if (!startsWith(name, head))
    return std::nullopt;
  size_t dot = name.find('.', head.size());
  std::string index = name.substr(head.size(), dot - head.size());
  if (dot == std::string::npos || index.empty() || index.size() > 9 ||
      !std::all_of(index.begin(), index.end(), ::isdigit) ||
      (index.size() > 1 && index[0] == '0'))
    return std::nullopt;
  return std::make_pair(std::stoll(index), name.substr(dot + 1));
}

/// Whether a layer tensor `rest` is one of HF's Conv1D weights ([in, out]).
static bool isConv1DWeight(const std::string &rest) {
  return rest == "attn.c_attn.weight" || rest == "attn.c_proj.weight" ||
         rest == "mlp.c_fc.weight" || rest == "mlp.c_proj.weight";
}

static bool isConv1DName(const std::string &loomName) {
  auto layer = splitLayerName(loomName);
  return layer && isConv1DWeight(layer->second);
}

/// A 2-D tensor transposed (any element size).
static TensorData transposed(const TensorData &t) {
  TensorData out;
  out.dtype = t.dtype;
  int64_t rows = t.shape[0], cols = t.shape[1];
  out.shape = {cols, rows};
  size_t size = io::dtypeSize(t.dtype);
  out.bytes.resize(t.bytes.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::copy_n(&t.bytes[(r * cols + c) * size], size,
                  &out.bytes[(c * rows + r) * size]);
  return out;
}

std::optional<std::string> toLoomParameters(const TensorMap &tensors,
                                            GPT2Format format,
                                            TensorMap &parameters,
                                            int &skipped) {
  parameters.clear();
  skipped = 0;
  // Loom name -> the name in the file, for messages.
  std::map<std::string, std::string> fileName;
  auto nameInFile = [&](const std::string &loomName) {
    auto it = fileName.find(loomName);
    if (it != fileName.end())
      return it->second;
    // A missing tensor, named as this format would name it.
    if (format == GPT2Format::HF && startsWith(loomName, kPrefix))
      return loomName.substr(std::string(kPrefix).size());
    return loomName;
  };

  // 1-2: Loom names, non-weights left out, Conv1D transposed.
  for (const auto &[name, value] : tensors) {
    std::string loomName = name;
    if (format == GPT2Format::HF && !startsWith(name, kPrefix) &&
        name != "lm_head.weight")
      loomName = kPrefix + name;
    auto layer = splitLayerName(loomName);
    bool buffer = layer && (layer->second == "attn.bias" ||
                            layer->second == "attn.masked_bias");
    bool optimizerState =
        format == GPT2Format::Loom &&
        (name == "step" || endsWith(name, ".exp_avg") ||
         endsWith(name, ".exp_avg_sq") || endsWith(name, ".momentum_buffer"));
    if ((buffer && format != GPT2Format::Loom) || optimizerState) {
      ++skipped;
      continue;
    }
    if (!fileName.emplace(loomName, name).second)
      return "tensor `" + name + "` is given twice (as `" +
             fileName[loomName] + "` too)";
    if (!io::isFloat(value.dtype))
      return "tensor `" + name + "` is " +
             std::string(io::dtypeName(value.dtype)) +
             ", expected a floating-point dtype (F64, F32, BF16 or F16)";
    if (format == GPT2Format::HF && layer && isConv1DWeight(layer->second) &&
        value.shape.size() == 2)
      parameters[loomName] = transposed(value);
    else
      parameters[loomName] = value;
  }

  // 3: the tied head is wte under a second name.
  auto head = parameters.find("lm_head.weight");
  auto wte = parameters.find(std::string(kPrefix) + "wte.weight");
  if (head != parameters.end() && wte != parameters.end() &&
      head->second.dtype == wte->second.dtype &&
      head->second.shape == wte->second.shape &&
      head->second.bytes == wte->second.bytes) {
    parameters.erase(head);
    ++skipped;
  }

  // 4: the model the names describe.
  if (wte == parameters.end())
    return "missing tensor `" + nameInFile(std::string(kPrefix) + "wte.weight") +
           "` (the token embedding, which gives the vocabulary and width)";
  if (wte->second.shape.size() != 2)
    return "tensor `" + nameInFile(wte->first) + "` has shape " +
           mpi::formatShape(wte->second.shape) + ", expected [vocab, hidden]";
  int64_t vocab = wte->second.shape[0], hidden = wte->second.shape[1];
  int64_t layers = 0;
  for (const auto &[name, value] : parameters)
    if (auto layer = splitLayerName(name))
      layers = std::max(layers, layer->first + 1);
  std::string fc = std::string(kPrefix) + "h.0.mlp.c_fc.weight";
  int64_t ffn = 4 * hidden;
  if (auto it = parameters.find(fc);
      it != parameters.end() && it->second.shape.size() == 2)
    ffn = it->second.shape[0];
  auto wpe = parameters.find(std::string(kPrefix) + "wpe.weight");
  int64_t positions =
      wpe != parameters.end() && !wpe->second.shape.empty()
          ? wpe->second.shape[0]
          : 0;
  bool bias = parameters.count(std::string(kPrefix) + "ln_f.bias");

  std::map<std::string, std::vector<int64_t>> expected;
  expected[std::string(kPrefix) + "wte.weight"] = {vocab, hidden};
  expected[std::string(kPrefix) + "wpe.weight"] = {positions, hidden};
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
  if (parameters.count("lm_head.weight"))
    expected["lm_head.weight"] = {vocab, hidden};

  for (const auto &[name, value] : parameters)
    if (!expected.count(name))
      return "unexpected tensor `" + nameInFile(name) +
             "`: not a parameter of GPT-2 (" + std::to_string(layers) +
             " layers, hidden " + std::to_string(hidden) +
             (bias ? ", with biases" : ", without biases") + ")";
  for (const auto &[name, shape] : expected) {
    auto it = parameters.find(name);
    if (it == parameters.end())
      return "missing tensor `" + nameInFile(name) + "` (GPT-2 with " +
             std::to_string(layers) + " layers, hidden " +
             std::to_string(hidden) +
             (bias ? ", with biases" : ", without biases") + ")";
    if (it->second.shape != shape) {
      // Shapes as the file holds them: HF's Conv1D weights are [in, out].
      bool conv = format == GPT2Format::HF && isConv1DName(name);
      std::vector<int64_t> found = it->second.shape, want = shape;
      if (conv && found.size() == 2)
        std::swap(found[0], found[1]);
      if (conv)
        std::swap(want[0], want[1]);
      return "tensor `" + nameInFile(name) + "` has shape " +
             mpi::formatShape(found) + ", expected " + mpi::formatShape(want) +
             (conv ? " (Conv1D: [in, out])" : "");
    }
    if (it->second.dtype != wte->second.dtype)
      return "tensor `" + nameInFile(name) + "` is " +
             std::string(io::dtypeName(it->second.dtype)) + ", but `" +
             nameInFile(wte->first) + "` is " +
             std::string(io::dtypeName(wte->second.dtype)) +
             " (one dtype for every weight)";
  }
  return std::nullopt;
}

TensorMap fromLoomParameters(const TensorMap &params, GPT2Format format) {
  TensorMap out;
  for (const auto &[name, value] : params) {
    if (format != GPT2Format::HF) {
      out[name] = value;
      continue;
    }
    std::string hfName = startsWith(name, kPrefix)
                             ? name.substr(std::string(kPrefix).size())
                             : name;
    out[hfName] = isConv1DName(name) ? transposed(value) : value;
  }
  // nanoGPT's state dict lists the tied head under its own name too.
  std::string wte = std::string(kPrefix) + "wte.weight";
  if (format == GPT2Format::NanoGPT && !params.count("lm_head.weight") &&
      params.count(wte))
    out["lm_head.weight"] = params.at(wte);
  return out;
}

} // namespace loom::ckpt

//===- WeightFormats.h - Weights as Loom, nanoGPT, HF name them -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The ways a model's weights are named and laid out in a safetensors file,
// and how each maps to Loom's parameters (`loom-ckpt convert`, `loom-ckpt
// merge --format`, the trainer's `--init-from`):
//
//   loom     Loom's parameter names and layouts: GPT-2 as nanoGPT names it
//            (`transformer.wte.weight`, `transformer.h.0.attn.c_attn.weight`,
//            ...; Linear weights [out, in]; no `lm_head.weight` when the
//            head is tied), Llama as Hugging Face names it, any other family
//            as its builder names it; a merged checkpoint also holds
//            optimizer states and `step`, which are not weights and are
//            left out.
//   nanogpt  nanoGPT's GPT-2 state dict: Loom's names plus `lm_head.weight`
//            (the tied head listed under both names) and possibly the
//            `attn.bias` causal-mask buffers (left out).
//   hf       Hugging Face's files. GPT-2: `Conv1D` weights stored [in, out]
//            (c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj), names with or
//            without the `transformer.` prefix (the hub's files have none),
//            the `attn.bias` / `attn.masked_bias` buffers (left out),
//            `lm_head.weight` tied to wte; written without the prefix and
//            buffers, as `from_pretrained` reads the hub's files. Llama:
//            Loom's names and layouts, the `rotary_emb.inv_freq` buffers of
//            older files left out; possibly sharded (WeightFile.h).
//
// Binding works on headers alone (names, dtypes, shapes), so a training rank
// can map the file before it reads its blocks. The model a file describes is
// read off its names (layers from `h.{i}` / `model.layers.{i}`, widths from
// the embedding and the first layer): every tensor present, none unknown,
// each of the expected shape and a floating-point dtype; an error names the
// tensor as the file names it. The row order of GPT-2's `c_attn` is the same
// in all three (q, then k, then v).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_IO_WEIGHTFORMATS_H
#define LOOM_RUNTIME_IO_WEIGHTFORMATS_H

#include "loom/Runtime/IO/TensorFile.h"

namespace loom::runtime::io {

enum class WeightFormat { Loom, NanoGPT, HF };

/// Parses `loom`, `nanogpt` or `hf`.
std::optional<WeightFormat> parseWeightFormat(const std::string &text);

/// The family a file's names describe.
enum class WeightFamily { GPT2, Llama, Other };

/// What a header says of one tensor.
struct TensorHeader {
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
};
using HeaderMap = std::map<std::string, TensorHeader>;

/// The headers of the tensors of `tensors`.
HeaderMap headersOf(const TensorMap &tensors);

/// Where a Loom parameter is in a file.
struct WeightBinding {
  /// The tensor's name in the file.
  std::string fileName;
  /// The file holds the [in, out] transpose of Loom's [out, in] weight.
  bool transposed = false;
  TensorHeader file;

  /// Loom's shape of it: the file's, or its transpose.
  std::vector<int64_t> loomShape() const;
};

/// A file's tensors bound to Loom's parameter names.
struct WeightBindings {
  WeightFormat format = WeightFormat::Loom;
  WeightFamily family = WeightFamily::Other;
  /// By Loom name. For GPT-2 in nanoGPT's and HF's formats this may hold
  /// `lm_head.weight` next to `transformer.wte.weight`: whether it is the
  /// tied head or an untied one, only its values tell (dropTiedHead).
  std::map<std::string, WeightBinding> params;
  /// File names of what is not a weight (buffers, optimizer states).
  std::vector<std::string> skipped;
  /// Whether the GPT-2 file names carry the `transformer.` prefix (how a
  /// missing tensor is named in messages).
  bool prefixed = true;

  /// `loomName` as this file names it (or would, when it lacks it).
  std::string fileName(const std::string &loomName) const;
};

/// Binds `headers` (read in `format`) to Loom's names: renames, marks
/// Conv1D weights transposed, leaves out buffers and optimizer states, and
/// refuses tensors given twice and non-float dtypes. Returns the error
/// naming the tensor, or nullopt.
std::optional<std::string> bindWeights(const HeaderMap &headers,
                                       WeightFormat format,
                                       WeightBindings &bindings);

/// Checks the bound parameters (Loom's shapes) against the model their names
/// describe, and that they share one dtype. Returns the error naming the
/// tensor as the file names it, or nullopt.
std::optional<std::string> checkDescribedModel(const WeightBindings &bindings);

/// Reads `tensors` (in `format`) into Loom's parameters (transposed to
/// Loom's layout), dropping a GPT-2 `lm_head.weight` equal to wte (the tied
/// head), and checks them (checkDescribedModel). `skipped` counts what was
/// left out. Returns the error, or nullopt.
std::optional<std::string> toLoomParameters(const TensorMap &tensors,
                                            WeightFormat format,
                                            TensorMap &parameters,
                                            int &skipped);

/// Writes Loom's parameters (as toLoomParameters gives them) in `format`;
/// an error when the format does not name that family (nanoGPT: GPT-2
/// only).
std::optional<std::string> fromLoomParameters(const TensorMap &params,
                                              WeightFormat format,
                                              TensorMap &out);

} // namespace loom::runtime::io

#endif // LOOM_RUNTIME_IO_WEIGHTFORMATS_H

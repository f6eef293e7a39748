//===- GPT2Formats.h - GPT-2 weights between Loom, nanoGPT and HF -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The three ways GPT-2's weights are stored in one safetensors file, and the
// conversion between them (`loom-ckpt convert`, `loom-ckpt merge --format`):
//
//   loom     Loom's parameter names (nanoGPT's: `transformer.wte.weight`,
//            `transformer.h.0.attn.c_attn.weight`, ...), Linear weights
//            [out, in], no `lm_head.weight` when the head is tied; a merged
//            checkpoint also holds optimizer states and `step`, which are
//            not model weights and are left out of other formats.
//   nanogpt  nanoGPT's state dict: the same names and layouts, plus
//            `lm_head.weight` (the tied head is listed under both names) and
//            possibly the `attn.bias` causal-mask buffers.
//   hf       Hugging Face's GPT2: `Conv1D` weights stored [in, out] (c_attn,
//            attn.c_proj, mlp.c_fc, mlp.c_proj), names with or without the
//            `transformer.` prefix (the hub's files have none), the
//            `attn.bias` / `attn.masked_bias` buffers, `lm_head.weight` tied
//            to wte. Written without the prefix and without buffers, as the
//            hub's files are read by `from_pretrained`.
//
// Reading checks the file against the model it describes (layers from the
// `h.{i}` names, widths from `wte`): every tensor present, none unknown,
// each of the expected shape and a floating-point dtype; an error names the
// tensor. The row order of `c_attn` is the same in all three (q, then k,
// then v).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_CKPT_GPT2FORMATS_H
#define LOOM_TOOLS_LOOM_CKPT_GPT2FORMATS_H

#include "loom/Runtime/IO/TensorFile.h"

#include <optional>
#include <string>

namespace loom::ckpt {

enum class GPT2Format { Loom, NanoGPT, HF };

/// Parses `loom`, `nanogpt` or `hf`.
std::optional<GPT2Format> parseGPT2Format(const std::string &text);

/// Reads `tensors` (in `format`) into Loom's parameters, checking them (see
/// the file comment). Returns an error message naming the tensor at fault,
/// or nullopt. `skipped` counts the tensors that are not weights and were
/// left out (mask buffers, optimizer states, the tied head's second name).
std::optional<std::string>
toLoomParameters(const runtime::io::TensorMap &tensors, GPT2Format format,
                 runtime::io::TensorMap &parameters, int &skipped);

/// Writes Loom's parameters (as toLoomParameters gives them) in `format`.
runtime::io::TensorMap fromLoomParameters(const runtime::io::TensorMap &params,
                                          GPT2Format format);

} // namespace loom::ckpt

#endif // LOOM_TOOLS_LOOM_CKPT_GPT2FORMATS_H

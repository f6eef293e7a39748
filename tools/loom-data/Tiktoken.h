//===- Tiktoken.h - GPT-2 BPE ids through Python's tiktoken -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loom-data encode --tokenizer gpt2`: the GPT-2 byte-pair encoding as
// OpenAI's `tiktoken` package defines it (the ids nanoGPT's
// `data/openwebtext/prepare.py` and llm.c's data scripts write). The
// merges are tiktoken's, so Loom runs it rather than restating 50,000
// merges: a Python interpreter (`$LOOM_PYTHON`, else `python3` on PATH)
// imports it, encodes the file with `encode_ordinary` and writes the ids as
// little-endian uint32 to a temporary file, which this reads back.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_DATA_TIKTOKEN_H
#define LOOM_TOOLS_LOOM_DATA_TIKTOKEN_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::data {

/// The GPT-2 vocabulary: 50,256 merges and bytes, and `<|endoftext|>`.
constexpr int64_t kGpt2VocabSize = 50257;

/// Encodes the text file `path` with tiktoken's `gpt2` encoding into `ids`;
/// returns the error, if any: no interpreter, tiktoken not importable (with
/// how to get it), or tiktoken's own failure (its message).
std::optional<std::string> encodeGpt2(const std::string &path,
                                      std::vector<int32_t> &ids);

} // namespace loom::data

#endif // LOOM_TOOLS_LOOM_DATA_TIKTOKEN_H

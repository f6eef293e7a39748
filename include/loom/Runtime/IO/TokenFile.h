//===- TokenFile.h - Token files and per-rank training batches --*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Training data is a flat stream of token ids in a `.bin` file, in one of the
// layouts the common GPT training codes write (all little-endian):
//
//   - llm.c (`dev/data/data_common.py: write_datafile`): a header of 256
//     int32: [0] = magic 20240520, [1] = version (1: uint16 tokens, GPT-2;
//     2: uint32 tokens, Llama 3), [2] = number of tokens; the rest zero. The
//     tokens follow at byte 1024, and the file holds exactly that many;
//   - nanoGPT (`data/*/prepare.py`): no header, uint16 tokens (`np.uint16`
//     `tofile`); the same headerless layout with int32 tokens is accepted;
//     their element type cannot be read from the file, so it is given.
//
// Batches are drawn deterministically from (seed, step), so every rank can
// read its own slice without talking to the others and a resumed run reads
// exactly what the interrupted one would have (the "data position" of a
// checkpoint is just the next step). Row `r` of the batch of step `s` is the
// window of seqLen + 1 tokens starting at
//
//   random:      mix(mix(mix(seed) ^ s) ^ r) mod (numTokens - seqLen)
//   sequential:  ((s * batchSize + r) * seqLen) mod (numTokens - seqLen)
//
// where mix is SplitMix64's finalizer; inputs = window[:-1] and labels =
// window[1:]. A rank whose tokens tensor [batch, seq] has layout L holds the
// block of rows and columns L gives it (BlockLayout) and reads only those
// tokens (plus one for the last label).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_IO_TOKENFILE_H
#define LOOM_RUNTIME_IO_TOKENFILE_H

#include "loom/Runtime/Layout/BlockLayout.h"

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace loom::runtime::io {

using Status = host::Status;

/// The llm.c data file magic number (header[0]).
constexpr int32_t kLlmcMagic = 20240520;
/// The llm.c header: 256 int32.
constexpr int64_t kLlmcHeaderBytes = 256 * 4;

/// How a token file is laid out.
enum class TokenFormat {
  /// llm.c when the file starts with the llm.c magic, else headerless uint16.
  Auto,
  /// llm.c header + uint16 (version 1) or uint32 (version 2) tokens.
  Llmc,
  /// Headerless uint16 tokens (nanoGPT).
  UInt16,
  /// Headerless int32 tokens.
  Int32,
};

/// Parses "auto", "llmc", "uint16" or "int32".
Status parseTokenFormat(std::string_view text, TokenFormat &out);
/// The spelling parseTokenFormat accepts.
std::string_view tokenFormatName(TokenFormat format);

/// An open token file: its layout, read lazily (files can be many GB).
class TokenFile {
public:
  /// Opens `path` and checks its layout: magic and version for llm.c
  /// (`format` Llmc, or Auto on a file starting with the magic), a size that
  /// matches the header's token count (llm.c) or is a whole number of tokens
  /// (headerless). Token ids are checked against `vocabSize` as they are read
  /// (0 = unchecked).
  static Status open(const std::string &path, TokenFormat format,
                     int64_t vocabSize, TokenFile &out);

  /// The detected format (never Auto).
  TokenFormat getFormat() const { return format; }
  /// 1 or 2 for llm.c files, 0 otherwise.
  int32_t getLlmcVersion() const { return llmcVersion; }
  int64_t getNumTokens() const { return numTokens; }
  /// Bytes per token: 2 or 4.
  int64_t getTokenBytes() const { return tokenBytes; }
  const std::string &getPath() const { return path; }

  /// Reads tokens [position, position + count) into `out`, failing on a
  /// range outside the file or an id outside [0, vocabSize).
  Status read(int64_t position, int64_t count, int32_t *out) const;

private:
  std::string path;
  TokenFormat format = TokenFormat::Auto;
  int32_t llmcVersion = 0;
  int64_t headerBytes = 0;
  int64_t tokenBytes = 2;
  int64_t numTokens = 0;
  int64_t vocabSize = 0;
  std::shared_ptr<std::ifstream> stream;
};

/// Writes `tokens` to `path` atomically as an llm.c version-1 file
/// (`format` Llmc), headerless uint16 or headerless int32; ids must fit.
Status writeTokenFile(const std::string &path, TokenFormat format,
                      const std::vector<int32_t> &tokens);

/// The byte-level tokenizer: each byte of `text` is one token (vocab 256).
std::vector<int32_t> encodeBytes(std::string_view text);

/// How batches are drawn (see the file comment).
struct BatchSpec {
  enum class Order { Random, Sequential };
  /// Global batch size (rows).
  int64_t batchSize = 1;
  /// Tokens per row of inputs (a window holds seqLen + 1).
  int64_t seqLen = 1;
  uint64_t seed = 0;
  Order order = Order::Random;
};

/// The first token of row `row` of the batch of step `step` in a file of
/// `numTokens` tokens (requires numTokens > seqLen).
int64_t batchWindowStart(const BatchSpec &spec, int64_t numTokens, int64_t step,
                         int64_t row);

/// Reads the whole [batchSize, seqLen] batch of `step`: `inputs` and
/// `labels` row-major.
Status readGlobalBatch(const TokenFile &file, const BatchSpec &spec,
                       int64_t step, std::vector<int32_t> &inputs,
                       std::vector<int32_t> &labels);

/// Reads the block of the batch of `step` that `rank` holds when the
/// [batchSize, seqLen] tokens tensor has `layout` on `mesh` (rank 2, not
/// partial, dims divisible): equal to that block of readGlobalBatch.
/// `localShape` receives the block's shape.
Status readLocalBatch(const TokenFile &file, const BatchSpec &spec,
                      int64_t step, const layout::DeviceMesh &mesh,
                      const layout::BlockLayout &layout, int64_t rank,
                      std::vector<int32_t> &inputs,
                      std::vector<int32_t> &labels,
                      std::vector<int64_t> &localShape);

} // namespace loom::runtime::io

#endif // LOOM_RUNTIME_IO_TOKENFILE_H

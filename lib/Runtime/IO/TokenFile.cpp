//===- TokenFile.cpp - Token files and per-rank training batches ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/TokenFile.h"

#include "loom/Runtime/IO/TensorFile.h"
#include "loom/Support/InputFile.h"

#include <cerrno>
#include <cstring>
#include <limits>

namespace loom::runtime::io {

Status parseTokenFormat(std::string_view text, TokenFormat &out) {
  for (TokenFormat format : {TokenFormat::Auto, TokenFormat::Llmc,
                             TokenFormat::UInt16, TokenFormat::Int32})
    if (tokenFormatName(format) == text) {
      out = format;
      return Status::success();
    }
  return Status::failure("unknown token format `" + std::string(text) +
                         "`, expected auto, llmc, uint16 or int32");
}

std::string_view tokenFormatName(TokenFormat format) {
  switch (format) {
  case TokenFormat::Auto:
    return "auto";
  case TokenFormat::Llmc:
    return "llmc";
  case TokenFormat::UInt16:
    return "uint16";
  case TokenFormat::Int32:
    return "int32";
  }
  return "?";
}

Status TokenFile::open(const std::string &path, TokenFormat format,
                       int64_t vocabSize, TokenFile &out) {
  auto fail = [&](const std::string &why) {
    return Status::failure("token file `" + path + "`: " + why);
  };
  if (auto error = ::loom::support::checkRegularFile(path))
    return Status::failure("token file: " + *error);
  auto stream = std::make_shared<std::ifstream>(path, std::ios::binary);
  if (!*stream)
    return fail(std::string("cannot open: ") + std::strerror(errno));
  stream->seekg(0, std::ios::end);
  int64_t size = static_cast<int64_t>(stream->tellg());
  stream->seekg(0);

  int32_t header[3] = {0, 0, 0};
  if (size >= 12)
    stream->read(reinterpret_cast<char *>(header), sizeof(header));
  if (format == TokenFormat::Auto)
    format = header[0] == kLlmcMagic ? TokenFormat::Llmc : TokenFormat::UInt16;

  TokenFile file;
  file.path = path;
  file.format = format;
  file.vocabSize = vocabSize;
  if (format == TokenFormat::Llmc) {
    if (size < kLlmcHeaderBytes)
      return fail("truncated llm.c header: the file has " +
                  std::to_string(size) + " bytes, the header needs " +
                  std::to_string(kLlmcHeaderBytes));
    if (header[0] != kLlmcMagic)
      return fail("wrong magic " + std::to_string(header[0]) +
                  " (an llm.c token file starts with " +
                  std::to_string(kLlmcMagic) + ")");
    if (header[1] != 1 && header[1] != 2)
      return fail("unsupported llm.c version " + std::to_string(header[1]) +
                  " (1: uint16 tokens, 2: uint32 tokens)");
    if (header[2] < 0)
      return fail("negative token count " + std::to_string(header[2]));
    file.llmcVersion = header[1];
    file.headerBytes = kLlmcHeaderBytes;
    file.tokenBytes = header[1] == 1 ? 2 : 4;
    file.numTokens = header[2];
    int64_t expected = kLlmcHeaderBytes + file.numTokens * file.tokenBytes;
    if (size < expected)
      return fail("truncated: the header announces " +
                  std::to_string(file.numTokens) + " tokens (" +
                  std::to_string(expected) + " bytes), the file has " +
                  std::to_string(size) + " bytes");
    if (size > expected)
      return fail("the file has " + std::to_string(size) +
                  " bytes, but the header announces " +
                  std::to_string(file.numTokens) + " tokens (" +
                  std::to_string(expected) + " bytes)");
  } else {
    file.tokenBytes = format == TokenFormat::UInt16 ? 2 : 4;
    if (size % file.tokenBytes != 0)
      return fail("truncated: " + std::to_string(size) +
                  " bytes is not a whole number of " +
                  std::string(tokenFormatName(format)) + " tokens");
    file.numTokens = size / file.tokenBytes;
  }
  file.stream = std::move(stream);
  out = std::move(file);
  return Status::success();
}

Status TokenFile::read(int64_t position, int64_t count, int32_t *out) const {
  if (position < 0 || count < 0 || position > numTokens - count)
    return Status::failure(
        "token file `" + path + "`: tokens [" + std::to_string(position) +
        ", " + std::to_string(position + count) + ") are outside the file's " +
        std::to_string(numTokens) + " tokens");
  std::vector<uint8_t> raw(static_cast<size_t>(count * tokenBytes));
  stream->clear();
  stream->seekg(headerBytes + position * tokenBytes);
  stream->read(reinterpret_cast<char *>(raw.data()),
               static_cast<std::streamsize>(raw.size()));
  if (!*stream)
    return Status::failure("token file `" + path + "`: read failed at token " +
                           std::to_string(position));
  for (int64_t i = 0; i < count; ++i) {
    int64_t id;
    if (tokenBytes == 2) {
      uint16_t v;
      std::memcpy(&v, raw.data() + 2 * i, 2);
      id = v;
    } else if (format == TokenFormat::Llmc) {
      uint32_t v;
      std::memcpy(&v, raw.data() + 4 * i, 4);
      id = v;
    } else {
      int32_t v;
      std::memcpy(&v, raw.data() + 4 * i, 4);
      id = v;
    }
    if (id < 0 || (vocabSize > 0 && id >= vocabSize) ||
        id > std::numeric_limits<int32_t>::max())
      return Status::failure(
          "token file `" + path + "`: token id " + std::to_string(id) +
          " at position " + std::to_string(position + i) +
          " is outside the vocabulary [0, " + std::to_string(vocabSize) + ")");
    out[i] = static_cast<int32_t>(id);
  }
  return Status::success();
}

Status writeTokenFile(const std::string &path, TokenFormat format,
                      const std::vector<int32_t> &tokens) {
  if (format == TokenFormat::Auto)
    format = TokenFormat::Llmc;
  bool narrow = format != TokenFormat::Int32;
  std::string bytes;
  if (format == TokenFormat::Llmc) {
    if (tokens.size() >
        static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      return Status::failure("cannot write `" + path +
                             "`: " + std::to_string(tokens.size()) +
                             " tokens do not fit an llm.c header");
    int32_t header[256] = {kLlmcMagic, 1, static_cast<int32_t>(tokens.size())};
    bytes.assign(reinterpret_cast<const char *>(header), sizeof(header));
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    int32_t id = tokens[i];
    if (id < 0 || (narrow && id > 0xffff))
      return Status::failure("cannot write `" + path + "`: token id " +
                             std::to_string(id) + " at position " +
                             std::to_string(i) + " does not fit " +
                             (narrow ? "uint16" : "int32"));
    if (narrow) {
      uint16_t v = static_cast<uint16_t>(id);
      bytes.append(reinterpret_cast<const char *>(&v), 2);
    } else {
      bytes.append(reinterpret_cast<const char *>(&id), 4);
    }
  }
  if (auto error = writeFileAtomically(path, bytes))
    return Status::failure(*error);
  return Status::success();
}

std::vector<int32_t> encodeBytes(std::string_view text) {
  std::vector<int32_t> tokens;
  tokens.reserve(text.size());
  for (char c : text)
    tokens.push_back(static_cast<unsigned char>(c));
  return tokens;
}

/// SplitMix64's finalizer: a bijection of uint64 that mixes every bit.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int64_t batchWindowStart(const BatchSpec &spec, int64_t numTokens, int64_t step,
                         int64_t row) {
  uint64_t starts = static_cast<uint64_t>(numTokens - spec.seqLen);
  if (spec.order == BatchSpec::Order::Sequential)
    return static_cast<int64_t>(
        (static_cast<uint64_t>(step * spec.batchSize + row) *
         static_cast<uint64_t>(spec.seqLen)) %
        starts);
  uint64_t h = mix(mix(mix(spec.seed) ^ static_cast<uint64_t>(step)) ^
                   static_cast<uint64_t>(row));
  return static_cast<int64_t>(h % starts);
}

/// Checks what every batch read needs.
static Status checkSpec(const TokenFile &file, const BatchSpec &spec,
                        int64_t step) {
  if (spec.batchSize <= 0 || spec.seqLen <= 0)
    return Status::failure("batch size " + std::to_string(spec.batchSize) +
                           " and sequence length " +
                           std::to_string(spec.seqLen) + " must be positive");
  if (step < 0)
    return Status::failure("step " + std::to_string(step) +
                           " must be non-negative");
  if (file.getNumTokens() <= spec.seqLen)
    return Status::failure("token file `" + file.getPath() + "` has " +
                           std::to_string(file.getNumTokens()) +
                           " tokens, a window of sequence length " +
                           std::to_string(spec.seqLen) + " needs " +
                           std::to_string(spec.seqLen + 1));
  return Status::success();
}

/// Reads columns [col, col + cols) of rows [row, row + rows) of a batch.
static Status readRows(const TokenFile &file, const BatchSpec &spec,
                       int64_t step, int64_t row, int64_t rows, int64_t col,
                       int64_t cols, std::vector<int32_t> &inputs,
                       std::vector<int32_t> &labels) {
  inputs.assign(static_cast<size_t>(rows * cols), 0);
  labels.assign(static_cast<size_t>(rows * cols), 0);
  std::vector<int32_t> window(static_cast<size_t>(cols + 1));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t start =
        batchWindowStart(spec, file.getNumTokens(), step, row + r) + col;
    if (Status status = file.read(start, cols + 1, window.data()); !status)
      return status;
    std::copy(window.begin(), window.end() - 1, inputs.begin() + r * cols);
    std::copy(window.begin() + 1, window.end(), labels.begin() + r * cols);
  }
  return Status::success();
}

Status readGlobalBatch(const TokenFile &file, const BatchSpec &spec,
                       int64_t step, std::vector<int32_t> &inputs,
                       std::vector<int32_t> &labels) {
  if (Status status = checkSpec(file, spec, step); !status)
    return status;
  return readRows(file, spec, step, 0, spec.batchSize, 0, spec.seqLen, inputs,
                  labels);
}

Status readLocalBatch(const TokenFile &file, const BatchSpec &spec,
                      int64_t step, const layout::DeviceMesh &mesh,
                      const layout::BlockLayout &layout, int64_t rank,
                      std::vector<int32_t> &inputs,
                      std::vector<int32_t> &labels,
                      std::vector<int64_t> &localShape) {
  if (Status status = checkSpec(file, spec, step); !status)
    return status;
  if (layout.isPartial())
    return Status::failure("the tokens tensor cannot have a partial layout (" +
                           layout.toString() + ")");
  std::vector<int64_t> global = {spec.batchSize, spec.seqLen};
  if (Status status = layout.verifyShape(mesh, global); !status)
    return Status::failure("tokens tensor: " + status.message());
  if (rank < 0 || rank >= mesh.getNumDevices())
    return Status::failure("rank " + std::to_string(rank) + " is not on mesh " +
                           mesh.toString());
  localShape = layout.getLocalShape(mesh, global);
  std::vector<int64_t> offset = layout.getBlockOffset(mesh, global, rank);
  return readRows(file, spec, step, offset[0], localShape[0], offset[1],
                  localShape[1], inputs, labels);
}

} // namespace loom::runtime::io

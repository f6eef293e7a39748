//===- SafeTensors.cpp - Read and write safetensors files -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/SafeTensors.h"

#include "loom/Support/JSON.h"

#include <nlohmann/json.hpp>

#include "loom/Support/InputFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace loom::runtime::io {

using json = nlohmann::json;

namespace {
/// A header larger than this is corrupt rather than large: the reference
/// implementation refuses headers over 100 MB too.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

std::string where(const std::string &path) { return "`" + path + "`: "; }
} // namespace

namespace {
/// Checks the header of a safetensors file of `fileSize` bytes whose first
/// bytes are `prefix` (at least the length and the header) and lists its
/// tensors, each with the file offset of its data.
std::optional<std::string>
parseHeader(const std::string &path, std::string_view prefix, uint64_t fileSize,
            std::map<std::string, StoredTensor> &tensors,
            std::map<std::string, std::string> *metadata) {
  tensors.clear();
  if (fileSize < 8 || prefix.size() < 8)
    return where(path) +
           "truncated safetensors file: expected an 8-byte "
           "header length, found " +
           std::to_string(fileSize) + " bytes";
  uint64_t headerLength;
  std::memcpy(&headerLength, prefix.data(), 8);
  if (headerLength > kMaxHeaderBytes || headerLength > fileSize - 8 ||
      headerLength > prefix.size() - 8)
    return where(path) + "header length " + std::to_string(headerLength) +
           " exceeds the file (" + std::to_string(fileSize) +
           " bytes): not a safetensors file, or truncated";
  json header;
  if (auto parseError = ::loom::support::parseJSON(
          std::string_view(prefix.data() + 8, headerLength), header))
    return where(path) + "header: " + parseError->format();
  if (!header.is_object())
    return where(path) + "header is not a JSON object";

  uint64_t dataSize = fileSize - 8 - headerLength;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        return where(path) + "`__metadata__` is not a JSON object";
      for (auto &[key, value] : entry.items()) {
        if (!value.is_string())
          return where(path) + "`__metadata__` entry `" + key +
                 "` is not a string";
        if (metadata)
          (*metadata)[key] = value.get<std::string>();
      }
      continue;
    }
    std::string at = where(path) + "tensor `" + name + "`: ";
    if (!entry.is_object())
      return at + "header entry is not a JSON object";
    auto dtypeIt = entry.find("dtype");
    auto shapeIt = entry.find("shape");
    auto offsetsIt = entry.find("data_offsets");
    if (dtypeIt == entry.end() || !dtypeIt->is_string())
      return at + "missing string `dtype`";
    std::optional<DType> dtype = parseDType(dtypeIt->get<std::string>());
    if (!dtype)
      return at + "unsupported dtype `" + dtypeIt->get<std::string>() +
             "`, expected one of F64 F32 BF16 F16 I64 I32 BOOL";
    if (shapeIt == entry.end() || !shapeIt->is_array())
      return at + "missing array `shape`";
    StoredTensor tensor;
    tensor.dtype = *dtype;
    uint64_t count = 1;
    for (const json &dim : *shapeIt) {
      if (!dim.is_number_unsigned())
        return at + "shape entries must be non-negative integers";
      uint64_t size = dim.get<uint64_t>();
      // Guard the product against overflow before it is compared.
      if (size != 0 && count > (uint64_t(1) << 56) / size)
        return at + "shape is too large";
      count *= size;
      tensor.shape.push_back(static_cast<int64_t>(size));
    }
    if (offsetsIt == entry.end() || !offsetsIt->is_array() ||
        offsetsIt->size() != 2 || !(*offsetsIt)[0].is_number_unsigned() ||
        !(*offsetsIt)[1].is_number_unsigned())
      return at + "`data_offsets` must be two non-negative integers";
    uint64_t begin = (*offsetsIt)[0].get<uint64_t>();
    uint64_t end = (*offsetsIt)[1].get<uint64_t>();
    uint64_t expected = count * dtypeSize(*dtype);
    if (end < begin || end - begin != expected)
      return at + "data_offsets [" + std::to_string(begin) + ", " +
             std::to_string(end) + ") hold " +
             std::to_string(end >= begin ? end - begin : 0) +
             " bytes, expected " + std::to_string(expected) + " for dtype " +
             std::string(dtypeName(*dtype)) + " and its shape";
    if (end > dataSize)
      return at + "data_offsets end " + std::to_string(end) +
             " is past the end of the data (" + std::to_string(dataSize) +
             " bytes): truncated file";
    tensor.offset = 8 + headerLength + begin;
    ranges.emplace_back(begin, end);
    tensors.emplace(name, std::move(tensor));
  }
  // Tensors must not share bytes (the format requires a dense, disjoint
  // layout; overlaps mean a corrupt header).
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      return where(path) + "tensor data ranges overlap";
  return std::nullopt;
}
} // namespace

int64_t StoredTensor::byteSize() const {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count * dtypeSize(dtype);
}

std::optional<std::string>
parseSafeTensors(const std::string &path, const std::string &contents,
                 TensorMap &tensors,
                 std::map<std::string, std::string> *metadata) {
  tensors.clear();
  std::map<std::string, StoredTensor> stored;
  if (auto error =
          parseHeader(path, contents, contents.size(), stored, metadata))
    return error;
  for (auto &[name, entry] : stored) {
    TensorData tensor;
    tensor.dtype = entry.dtype;
    tensor.shape = std::move(entry.shape);
    const char *data = contents.data() + entry.offset;
    tensor.bytes.assign(data,
                        data + tensor.numElements() * dtypeSize(tensor.dtype));
    tensors.emplace(name, std::move(tensor));
  }
  return std::nullopt;
}

std::optional<std::string>
readSafeTensorsHeader(const std::string &path,
                      std::map<std::string, StoredTensor> &tensors,
                      std::map<std::string, std::string> *metadata) {
  if (auto error = ::loom::support::checkRegularFile(path))
    return error;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return where(path) + "cannot open: " + std::strerror(errno);
  in.seekg(0, std::ios::end);
  uint64_t fileSize = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  std::string prefix(std::min<uint64_t>(fileSize, 8), '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  if (prefix.size() == 8) {
    uint64_t headerLength;
    std::memcpy(&headerLength, prefix.data(), 8);
    if (headerLength <= kMaxHeaderBytes && headerLength <= fileSize - 8) {
      prefix.resize(8 + headerLength);
      in.read(prefix.data() + 8, static_cast<std::streamsize>(headerLength));
    }
  }
  if (!in)
    return where(path) + "cannot read its header";
  return parseHeader(path, prefix, fileSize, tensors, metadata);
}

std::optional<std::string>
readSafeTensors(const std::string &path, TensorMap &tensors,
                std::map<std::string, std::string> *metadata) {
  std::string contents;
  if (auto error = readWholeFile(path, contents))
    return error;
  return parseSafeTensors(path, contents, tensors, metadata);
}

std::string
serializeSafeTensors(const TensorMap &tensors,
                     const std::map<std::string, std::string> &metadata) {
  json header = json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    header[name] = {{"dtype", std::string(dtypeName(tensor.dtype))},
                    {"shape", tensor.shape},
                    {"data_offsets", {offset, offset + tensor.bytes.size()}}};
    offset += tensor.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  uint64_t length = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  out += text;
  out.reserve(out.size() + offset);
  for (const auto &[name, tensor] : tensors)
    out.append(reinterpret_cast<const char *>(tensor.bytes.data()),
               tensor.bytes.size());
  return out;
}

std::optional<std::string>
writeSafeTensors(const std::string &path, const TensorMap &tensors,
                 const std::map<std::string, std::string> &metadata) {
  return writeFileAtomically(path, serializeSafeTensors(tensors, metadata));
}

} // namespace loom::runtime::io

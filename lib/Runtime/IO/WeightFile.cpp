//===- WeightFile.cpp - Pretrained weights read a slice at a time ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. Resolve the path: a directory to its index or its single file.
// 2. An index: read `weight_map` strictly, read each shard's header once,
//    and check that the map and the shards agree tensor by tensor.
// 3. Data: map a shard read-only on first use (mmap), so the pages of a
//    tensor are read when a block of it is copied, not before.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/WeightFile.h"

#include "loom/Support/InputFile.h"
#include "loom/Support/JSON.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::runtime::io {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// A shard mapped read-only for the life of the WeightFile.
struct WeightFile::Mapping {
  const uint8_t *data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data && size)
      munmap(const_cast<uint8_t *>(data), size);
  }
};

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<std::string> WeightFile::open(const std::string &path,
                                            WeightFile &out) {
  out = WeightFile();
  out.path = path;
  std::string file = path;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    fs::path index = fs::path(path) / "model.safetensors.index.json";
    fs::path single = fs::path(path) / "model.safetensors";
    if (fs::exists(index, ec))
      file = index.string();
    else if (fs::exists(single, ec))
      file = single.string();
    else
      return "`" + path +
             "` is a directory without `model.safetensors.index.json` or "
             "`model.safetensors`";
  }

  if (!endsWith(file, ".json")) {
    std::map<std::string, StoredTensor> stored;
    if (auto error = readSafeTensorsHeader(file, stored))
      return error;
    out.shards = {file};
    for (auto &[name, tensor] : stored)
      out.tensors[name] = Entry{std::move(tensor), 0};
    out.mappings.resize(1);
    return std::nullopt;
  }

  // The sharded form: the index names each tensor's shard.
  std::string text;
  if (auto error = ::loom::support::readRegularFile(file, text))
    return error;
  json index;
  if (auto parseError = ::loom::support::parseJSON(text, index))
    return "`" + file + "`: " + parseError->format();
  auto map = index.is_object() ? index.find("weight_map") : index.end();
  if (!index.is_object() || map == index.end() || !map->is_object())
    return "`" + file +
           "`: no `weight_map` object (a sharded safetensors index maps "
           "each tensor to its shard file)";
  fs::path dir = fs::path(file).parent_path();
  std::map<std::string, size_t> shardOf;
  std::map<std::string, std::string> wanted;
  for (const auto &[name, shard] : map->items()) {
    if (!shard.is_string() || shard.get<std::string>().empty())
      return "`" + file + "`: the shard of tensor `" + name +
             "` must be a file name";
    std::string shardName = shard.get<std::string>();
    if (fs::path(shardName).is_absolute() ||
        shardName.find("..") != std::string::npos)
      return "`" + file + "`: shard `" + shardName + "` of tensor `" + name +
             "` must be a file next to the index";
    if (!shardOf.count(shardName)) {
      shardOf[shardName] = out.shards.size();
      out.shards.push_back((dir / shardName).string());
    }
    wanted[name] = shardName;
  }
  if (wanted.empty())
    return "`" + file + "`: the `weight_map` names no tensor";
  out.mappings.resize(out.shards.size());
  std::map<std::string, std::string> seenIn;
  for (const auto &[shardName, number] : shardOf) {
    std::map<std::string, StoredTensor> stored;
    if (auto error = readSafeTensorsHeader(out.shards[number], stored))
      return error;
    for (auto &[name, tensor] : stored) {
      auto it = wanted.find(name);
      if (it == wanted.end())
        return "shard `" + shardName + "` holds tensor `" + name +
               "`, which the index `" + file + "` does not name";
      if (it->second != shardName)
        return "shard `" + shardName + "` holds tensor `" + name +
               "`, which the index `" + file + "` puts in `" + it->second + "`";
      out.tensors[name] = Entry{std::move(tensor), number};
    }
  }
  for (const auto &[name, shardName] : wanted)
    if (!out.tensors.count(name))
      return "the index `" + file + "` puts tensor `" + name + "` in `" +
             shardName + "`, which does not hold it";
  return std::nullopt;
}

std::optional<std::string> WeightFile::bytes(const std::string &name,
                                             const uint8_t *&data) const {
  auto it = tensors.find(name);
  if (it == tensors.end())
    return "`" + path + "` has no tensor `" + name + "`";
  size_t shard = it->second.shard;
  std::shared_ptr<Mapping> &mapping = mappings[shard];
  if (!mapping) {
    const std::string &file = shards[shard];
    int fd = ::open(file.c_str(), O_RDONLY);
    if (fd < 0)
      return "cannot open `" + file + "`: " + std::strerror(errno);
    struct stat info;
    if (fstat(fd, &info) != 0) {
      std::string error = std::strerror(errno);
      ::close(fd);
      return "cannot read `" + file + "`: " + error;
    }
    auto fresh = std::make_shared<Mapping>();
    fresh->size = static_cast<size_t>(info.st_size);
    void *address =
        fresh->size ? mmap(nullptr, fresh->size, PROT_READ, MAP_PRIVATE, fd, 0)
                    : nullptr;
    ::close(fd);
    if (address == MAP_FAILED)
      return "cannot map `" + file + "`: " + std::strerror(errno);
    fresh->data = static_cast<const uint8_t *>(address);
    mapping = fresh;
  }
  const StoredTensor &stored = it->second.stored;
  // The header was checked against the size at open; a file that shrank
  // since would fault on access.
  if (stored.offset + static_cast<uint64_t>(stored.byteSize()) > mapping->size)
    return "`" + shards[shard] + "` changed since it was opened: tensor `" +
           name + "` is past its end";
  data = mapping->data + stored.offset;
  return std::nullopt;
}

std::optional<std::string> WeightFile::read(const std::string &name,
                                            TensorData &out) const {
  const uint8_t *data = nullptr;
  if (auto error = bytes(name, data))
    return error;
  const StoredTensor &stored = tensors.at(name).stored;
  out.dtype = stored.dtype;
  out.shape = stored.shape;
  out.bytes.assign(data, data + stored.byteSize());
  return std::nullopt;
}

std::optional<std::string> WeightFile::readAll(TensorMap &out) const {
  out.clear();
  for (const auto &[name, entry] : tensors)
    if (auto error = read(name, out[name]))
      return error;
  return std::nullopt;
}

double loadElement(const uint8_t *data, DType dtype, int64_t index) {
  switch (dtype) {
  case DType::F64: {
    double v;
    std::memcpy(&v, data + index * 8, 8);
    return v;
  }
  case DType::F32: {
    float v;
    std::memcpy(&v, data + index * 4, 4);
    return v;
  }
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, data + index * 2, 2);
    return bf16ToFloat(bits);
  }
  case DType::F16: {
    uint16_t bits;
    std::memcpy(&bits, data + index * 2, 2);
    return f16ToFloat(bits);
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, data + index * 8, 8);
    return static_cast<double>(v);
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, data + index * 4, 4);
    return v;
  }
  case DType::Bool:
    return data[index] ? 1.0 : 0.0;
  }
  return 0;
}

} // namespace loom::runtime::io

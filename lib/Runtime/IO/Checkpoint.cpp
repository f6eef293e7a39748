//===- Checkpoint.cpp - Per-rank checkpoints with a manifest --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/Checkpoint.h"

#include "loom/Runtime/IO/SafeTensors.h"
#include "loom/Support/InputFile.h"
#include "loom/Support/JSON.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace loom::runtime::io {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
namespace fs = std::filesystem;

//===----------------------------------------------------------------------===//
// CRC-32C
//===----------------------------------------------------------------------===//

/// The byte-at-a-time table of the reflected Castagnoli polynomial.
static const std::array<uint32_t, 256> &crcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

uint32_t crc32c(const void *data, size_t size, uint32_t crc) {
  const std::array<uint32_t, 256> &table = crcTable();
  const auto *bytes = static_cast<const uint8_t *>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static std::string hex32(uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", value);
  return text;
}

//===----------------------------------------------------------------------===//
// Names and directories
//===----------------------------------------------------------------------===//

std::string checkpointFileName(int64_t rank) {
  char text[40];
  std::snprintf(text, sizeof(text), "rank-%05lld.safetensors",
                static_cast<long long>(rank));
  return text;
}

std::string checkpointStepDir(const std::string &root, int64_t step) {
  char text[40];
  std::snprintf(text, sizeof(text), "step-%08lld",
                static_cast<long long>(step));
  return (fs::path(root) / text).string();
}

Status findLatestCheckpoint(const std::string &root, std::string &dir) {
  std::error_code ec;
  int64_t best = -1;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("step-", 0) != 0 || name.size() == 5 ||
        name.find_first_not_of("0123456789", 5) != std::string::npos)
      continue;
    // pathExists, not fs::exists: a symlink loop must not throw (the
    // manifest's reader reports it).
    if (!::loom::support::pathExists(
            (it->path() / kCheckpointManifestName).string()))
      continue;
    // Digits only, but possibly more than int64_t holds.
    errno = 0;
    long long parsed = std::strtoll(name.c_str() + 5, nullptr, 10);
    if (errno == ERANGE)
      continue;
    int64_t step = parsed;
    if (step > best) {
      best = step;
      dir = it->path().string();
    }
  }
  if (ec)
    return Status::failure("cannot list checkpoint directory `" + root +
                           "`: " + ec.message());
  if (best < 0)
    return Status::failure("no checkpoint (step-N directory with a " +
                           std::string(kCheckpointManifestName) + ") in `" +
                           root + "`");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Manifest
//===----------------------------------------------------------------------===//

/// Checks what splitting and assembling need: every layout parses, is not
/// partial and divides its tensor's shape.
bool holdsTensor(const CheckpointManifest &manifest,
                 const CheckpointTensor &tensor, int64_t rank) {
  if (tensor.stage < 0 || manifest.pipelineAxis.empty())
    return true;
  const auto &axes = manifest.mesh.getAxes();
  std::vector<int64_t> coordinates = manifest.mesh.getCoordinates(rank);
  for (size_t a = 0; a < axes.size(); ++a)
    if (axes[a].name == manifest.pipelineAxis)
      return coordinates[a] == tensor.stage;
  return true;
}

/// The axes over which `tensor`'s holders keep replicas: those its layout
/// does not use, but not the pipeline axis of a stage-owned tensor.
static layout::AxisList replicaAxes(const CheckpointManifest &manifest,
                                    const CheckpointTensor &tensor,
                                    const layout::BlockLayout &layout) {
  layout::AxisList replicated = layout.getReplicatedAxes(manifest.mesh);
  if (tensor.stage >= 0 && !manifest.pipelineAxis.empty())
    replicated.erase(std::remove(replicated.begin(), replicated.end(),
                                 manifest.pipelineAxis),
                     replicated.end());
  return replicated;
}

static Status verifyTensors(const CheckpointManifest &manifest) {
  const layout::DeviceMesh &mesh = manifest.mesh;
  int64_t stages = 0;
  for (const layout::DeviceMesh::Axis &axis : mesh.getAxes())
    if (axis.name == manifest.pipelineAxis)
      stages = axis.size;
  if (!manifest.pipelineAxis.empty() && !stages)
    return Status::failure("pipeline axis `" + manifest.pipelineAxis +
                           "` is not an axis of mesh " + mesh.toString());
  for (const auto &[name, tensor] : manifest.tensors) {
    if (tensor.stage >= 0 && tensor.stage >= stages)
      return Status::failure("tensor `" + name + "`: stage " +
                             std::to_string(tensor.stage) +
                             " is not a stage of the pipeline axis" +
                             (stages ? " (size " + std::to_string(stages) + ")"
                                     : " (the manifest names none)"));
    layout::BlockLayout layout;
    Status status = layout::BlockLayout::parse(tensor.layout, mesh, layout);
    if (status)
      status = layout.verifyShape(mesh, tensor.shape);
    if (status && layout.isPartial())
      status = Status::failure(
          "partial layout " + layout.toString() +
          ": a checkpoint holds values, not pending sums (reduce first)");
    if (!status)
      return Status::failure("tensor `" + name + "`: " + status.message());
  }
  return Status::success();
}

Status verifyManifest(const CheckpointManifest &manifest) {
  const layout::DeviceMesh &mesh = manifest.mesh;
  int64_t devices = mesh.getNumDevices();
  if (static_cast<int64_t>(manifest.files.size()) != devices)
    return Status::failure("the manifest lists " +
                           std::to_string(manifest.files.size()) +
                           " rank files, but mesh " + mesh.toString() +
                           " has " + std::to_string(devices) + " devices");
  if (manifest.step < 0 || manifest.dataPosition < 0)
    return Status::failure(
        "step " + std::to_string(manifest.step) + " and data position " +
        std::to_string(manifest.dataPosition) + " must be non-negative");
  return verifyTensors(manifest);
}

Status verifyResumable(const std::string &dir,
                       const CheckpointManifest &manifest) {
  std::string where = "checkpoint `" + dir + "`";
  if (manifest.dataPosition != manifest.step)
    return Status::failure(where + ": data position " +
                           std::to_string(manifest.dataPosition) +
                           " is not its step " + std::to_string(manifest.step) +
                           " (batches are drawn by step)");
  if (manifest.rngState.size() > 1)
    return Status::failure(where + ": `rng.state` holds " +
                           std::to_string(manifest.rngState.size()) +
                           " words; this trainer keeps one (the RNG step)");
  return Status::success();
}

/// Field order as documented (ordered_json keeps insertion order).
static ordered_json manifestToJson(const CheckpointManifest &manifest) {
  ordered_json mesh = {{"axes", ordered_json::array()},
                       {"shape", ordered_json::array()}};
  for (const layout::DeviceMesh::Axis &axis : manifest.mesh.getAxes()) {
    mesh["axes"].push_back(axis.name);
    mesh["shape"].push_back(axis.size);
  }
  ordered_json tensors = ordered_json::object();
  for (const auto &[name, tensor] : manifest.tensors) {
    tensors[name] = {{"shape", tensor.shape},
                     {"dtype", std::string(dtypeName(tensor.dtype))},
                     {"layout", tensor.layout}};
    if (tensor.stage >= 0)
      tensors[name]["stage"] = tensor.stage;
    if (!tensor.fileShape.empty())
      tensors[name]["file_shape"] = tensor.fileShape;
  }
  ordered_json files = ordered_json::array();
  for (size_t rank = 0; rank < manifest.files.size(); ++rank)
    files.push_back({{"rank", rank},
                     {"name", manifest.files[rank].name},
                     {"bytes", manifest.files[rank].bytes},
                     {"crc32c", hex32(manifest.files[rank].crc32c)}});
  if (!manifest.pipelineAxis.empty())
    mesh["pipeline_axis"] = manifest.pipelineAxis;
  return {{"format", "loom-checkpoint"},
          {"version", kCheckpointVersion},
          {"step", manifest.step},
          {"mesh", mesh},
          {"plan", manifest.plan},
          {"data",
           {{"file", manifest.dataFile},
            {"seed", manifest.dataSeed},
            {"position", manifest.dataPosition}}},
          {"rng", {{"seed", manifest.rngSeed}, {"state", manifest.rngState}}},
          {"checksum", "crc32c"},
          {"tensors", tensors},
          {"files", files},
          {"metadata", manifest.metadata}};
}

namespace {
/// Typed access to the manifest's JSON that reports the path of a missing or
/// mistyped field (LLVM builds without exceptions: nlohmann's throwing
/// getters must never see a wrong type).
/// Whether two shapes hold the same number of elements (false when either
/// count overflows int64).
static bool sameElementCount(const std::vector<int64_t> &a,
                             const std::vector<int64_t> &b) {
  auto count = [](const std::vector<int64_t> &shape) {
    std::optional<int64_t> n = 1;
    for (int64_t size : shape) {
      int64_t product;
      if (!n || __builtin_mul_overflow(*n, size, &product))
        return std::optional<int64_t>();
      n = product;
    }
    return n;
  };
  std::optional<int64_t> na = count(a), nb = count(b);
  return na && nb && *na == *nb;
}

class ManifestReader {
public:
  explicit ManifestReader(std::string path) : path(std::move(path)) {}

  const json *field(const json &object, const char *key, const char *where) {
    if (!error.empty())
      return nullptr;
    auto it = object.find(key);
    if (it == object.end()) {
      fail(std::string("missing field `") + where + key + "`");
      return nullptr;
    }
    return &*it;
  }
  bool getInt(const json &object, const char *key, const char *where,
              int64_t &out) {
    const json *value = field(object, key, where);
    if (!value)
      return false;
    if (!value->is_number_integer())
      return fail(std::string("field `") + where + key +
                  "` must be an integer");
    // nlohmann reads 2^63 and above as unsigned; get<int64_t> would wrap
    // 2^64 - 1 to -1.
    if (value->is_number_unsigned() &&
        value->get<uint64_t>() > uint64_t(INT64_MAX))
      return fail(std::string("field `") + where + key +
                  "` must be an integer below 2^63, found " + value->dump());
    out = value->get<int64_t>();
    return true;
  }
  bool getUnsigned(const json &object, const char *key, const char *where,
                   uint64_t &out) {
    const json *value = field(object, key, where);
    if (!value)
      return false;
    if (!value->is_number_unsigned())
      return fail(std::string("field `") + where + key +
                  "` must be a non-negative integer");
    out = value->get<uint64_t>();
    return true;
  }
  bool getString(const json &object, const char *key, const char *where,
                 std::string &out) {
    const json *value = field(object, key, where);
    if (!value)
      return false;
    if (!value->is_string())
      return fail(std::string("field `") + where + key + "` must be a string");
    out = value->get<std::string>();
    return true;
  }
  bool getObject(const json &object, const char *key, const char *where,
                 const json *&out) {
    out = field(object, key, where);
    if (out && !out->is_object())
      return fail(std::string("field `") + where + key + "` must be an object");
    return out != nullptr;
  }
  bool getArray(const json &object, const char *key, const char *where,
                const json *&out) {
    out = field(object, key, where);
    if (out && !out->is_array())
      return fail(std::string("field `") + where + key + "` must be an array");
    return out != nullptr;
  }
  /// True while no field has failed.
  bool ok() const { return error.empty(); }
  bool fail(const std::string &why) {
    if (error.empty())
      error = why;
    return false;
  }
  Status status() const {
    if (error.empty())
      return Status::success();
    return Status::failure("checkpoint manifest `" + path + "`: " + error);
  }

private:
  std::string path;
  std::string error;
};
} // namespace

static Status manifestFromJson(const std::string &path, const json &root,
                               CheckpointManifest &manifest) {
  ManifestReader r(path);
  if (!root.is_object())
    r.fail("not a JSON object");
  std::string format;
  int64_t version = 0;
  if (r.getString(root, "format", "", format) && format != "loom-checkpoint")
    r.fail("field `format` is `" + format + "`, expected `loom-checkpoint`");
  if (r.getInt(root, "version", "", version) && version != kCheckpointVersion)
    r.fail("version " + std::to_string(version) + " is not supported (this " +
           "build reads version " + std::to_string(kCheckpointVersion) + ")");
  std::string checksum;
  if (r.getString(root, "checksum", "", checksum) && checksum != "crc32c")
    r.fail("checksum `" + checksum + "` is not supported, expected `crc32c`");
  r.getInt(root, "step", "", manifest.step);
  r.getString(root, "plan", "", manifest.plan);

  const json *mesh = nullptr, *axes = nullptr, *shape = nullptr;
  if (r.getObject(root, "mesh", "", mesh) &&
      r.getArray(*mesh, "axes", "mesh.", axes) &&
      r.getArray(*mesh, "shape", "mesh.", shape)) {
    if (mesh->contains("pipeline_axis"))
      r.getString(*mesh, "pipeline_axis", "mesh.", manifest.pipelineAxis);
    std::vector<layout::DeviceMesh::Axis> meshAxes;
    if (axes->size() != shape->size())
      r.fail("`mesh.axes` and `mesh.shape` differ in length");
    for (size_t i = 0; i < axes->size() && i < shape->size(); ++i) {
      std::optional<int64_t> size = loom::support::getInt64((*shape)[i]);
      if (!(*axes)[i].is_string() || !size) {
        r.fail("`mesh.axes` must hold strings and `mesh.shape` integers "
               "below 2^63");
        break;
      }
      meshAxes.push_back({(*axes)[i].get<std::string>(), *size});
    }
    if (r.status()) {
      Status status =
          layout::DeviceMesh::create(std::move(meshAxes), manifest.mesh);
      if (!status)
        r.fail("mesh: " + status.message());
    }
  }

  const json *data = nullptr;
  if (r.getObject(root, "data", "", data)) {
    r.getString(*data, "file", "data.", manifest.dataFile);
    r.getUnsigned(*data, "seed", "data.", manifest.dataSeed);
    r.getInt(*data, "position", "data.", manifest.dataPosition);
  }
  const json *rng = nullptr, *state = nullptr;
  if (r.getObject(root, "rng", "", rng) &&
      r.getUnsigned(*rng, "seed", "rng.", manifest.rngSeed) &&
      r.getArray(*rng, "state", "rng.", state)) {
    manifest.rngState.clear();
    for (const json &word : *state) {
      if (!word.is_number_unsigned()) {
        r.fail("`rng.state` must hold non-negative integers");
        break;
      }
      manifest.rngState.push_back(word.get<uint64_t>());
    }
  }

  const json *tensors = nullptr;
  if (r.getObject(root, "tensors", "", tensors)) {
    manifest.tensors.clear();
    for (const auto &[name, entry] : tensors->items()) {
      std::string where = "tensors." + name + ".";
      if (!entry.is_object()) {
        r.fail("field `" + where.substr(0, where.size() - 1) +
               "` must be an object");
        break;
      }
      CheckpointTensor tensor;
      const json *dims = nullptr;
      std::string dtype;
      if (!r.getArray(entry, "shape", where.c_str(), dims) ||
          !r.getString(entry, "dtype", where.c_str(), dtype) ||
          !r.getString(entry, "layout", where.c_str(), tensor.layout))
        break;
      if (entry.contains("stage") &&
          !r.getInt(entry, "stage", where.c_str(), tensor.stage))
        break;
      for (const json &dim : *dims) {
        std::optional<int64_t> size = loom::support::getInt64(dim);
        if (!size || *size < 0) {
          r.fail("field `" + where +
                 "shape` must hold non-negative integers below 2^63");
          break;
        }
        tensor.shape.push_back(*size);
      }
      if (entry.contains("file_shape")) {
        const json *fileDims = nullptr;
        if (!r.getArray(entry, "file_shape", where.c_str(), fileDims))
          break;
        for (const json &dim : *fileDims) {
          std::optional<int64_t> size = loom::support::getInt64(dim);
          if (!size || *size < 0) {
            r.fail("field `" + where +
                   "file_shape` must hold non-negative integers below 2^63");
            break;
          }
          tensor.fileShape.push_back(*size);
        }
        // A view holds the same elements: the counts must agree.
        if (r.ok() && !sameElementCount(tensor.fileShape, tensor.shape))
          r.fail("tensor `" + name + "`: `file_shape` " +
                 mpi::formatShape(tensor.fileShape) +
                 " does not hold as many elements as `shape` " +
                 mpi::formatShape(tensor.shape));
      }
      std::optional<DType> parsed = parseDType(dtype);
      if (!parsed) {
        r.fail("tensor `" + name + "` has unknown dtype `" + dtype + "`");
        break;
      }
      tensor.dtype = *parsed;
      manifest.tensors.emplace(name, std::move(tensor));
    }
  }

  const json *files = nullptr;
  if (r.getArray(root, "files", "", files)) {
    manifest.files.clear();
    for (const json &entry : *files) {
      CheckpointFile file;
      int64_t rank = -1;
      std::string crc;
      if (!entry.is_object() || !r.getInt(entry, "rank", "files[].", rank) ||
          !r.getString(entry, "name", "files[].", file.name) ||
          !r.getUnsigned(entry, "bytes", "files[].", file.bytes) ||
          !r.getString(entry, "crc32c", "files[].", crc)) {
        r.fail("`files` entries must be objects with rank, name, bytes and "
               "crc32c");
        break;
      }
      if (rank != static_cast<int64_t>(manifest.files.size())) {
        r.fail("`files` entry " + std::to_string(manifest.files.size()) +
               " is for rank " + std::to_string(rank) +
               " (entries must be in rank order)");
        break;
      }
      if (crc.size() != 8 ||
          crc.find_first_not_of("0123456789abcdef") != std::string::npos) {
        r.fail("crc32c `" + crc + "` of rank " + std::to_string(rank) +
               " is not 8 lowercase hex digits");
        break;
      }
      file.crc32c = static_cast<uint32_t>(std::stoul(crc, nullptr, 16));
      if (file.name.empty() || file.name.find('/') != std::string::npos ||
          file.name == "." || file.name == "..") {
        r.fail("file name `" + file.name + "` of rank " + std::to_string(rank) +
               " must be a plain file name");
        break;
      }
      manifest.files.push_back(std::move(file));
    }
  }

  const json *metadata = nullptr;
  if (r.getObject(root, "metadata", "", metadata)) {
    manifest.metadata.clear();
    for (const auto &[key, value] : metadata->items()) {
      if (!value.is_string()) {
        r.fail("`metadata." + key + "` must be a string");
        break;
      }
      manifest.metadata[key] = value.get<std::string>();
    }
  }
  if (Status status = r.status(); !status)
    return status;
  if (Status status = verifyManifest(manifest); !status)
    return Status::failure("checkpoint manifest `" + path +
                           "`: " + status.message());
  return Status::success();
}

Status writeCheckpointManifest(const std::string &dir,
                               const CheckpointManifest &manifest) {
  if (Status status = verifyManifest(manifest); !status)
    return Status::failure("cannot write the checkpoint manifest in `" + dir +
                           "`: " + status.message());
  std::string path = (fs::path(dir) / kCheckpointManifestName).string();
  if (auto error =
          writeFileAtomically(path, manifestToJson(manifest).dump(2) + "\n"))
    return Status::failure(*error);
  return Status::success();
}

Status readCheckpointManifest(const std::string &dir,
                              CheckpointManifest &manifest) {
  std::string path = (fs::path(dir) / kCheckpointManifestName).string();
  std::string text;
  if (auto error = readWholeFile(path, text))
    return Status::failure("checkpoint `" + dir + "` has no readable " +
                           kCheckpointManifestName + ": " + *error);
  json root;
  if (auto parseError = ::loom::support::parseJSON(text, root))
    return Status::failure("checkpoint manifest `" + path +
                           "`: " + parseError->format());
  manifest = CheckpointManifest();
  return manifestFromJson(path, root, manifest);
}

//===----------------------------------------------------------------------===//
// Rank files
//===----------------------------------------------------------------------===//

Status writeCheckpointShard(const std::string &dir, int64_t rank, int64_t step,
                            const TensorMap &blocks, CheckpointFile &file) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status::failure("cannot create checkpoint directory `" + dir +
                           "`: " + ec.message());
  std::string bytes =
      serializeSafeTensors(blocks, {{"loom.rank", std::to_string(rank)},
                                    {"loom.step", std::to_string(step)}});
  file.name = checkpointFileName(rank);
  file.bytes = bytes.size();
  file.crc32c = crc32c(bytes.data(), bytes.size());
  if (auto error =
          writeFileAtomically((fs::path(dir) / file.name).string(), bytes))
    return Status::failure(*error);
  return Status::success();
}

Status readCheckpointShard(const std::string &dir,
                           const CheckpointManifest &manifest, int64_t rank,
                           TensorMap &blocks) {
  if (rank < 0 || rank >= static_cast<int64_t>(manifest.files.size()))
    return Status::failure("rank " + std::to_string(rank) +
                           " is not on the checkpoint's mesh " +
                           manifest.mesh.toString());
  const CheckpointFile &file = manifest.files[rank];
  std::string path = (fs::path(dir) / file.name).string();
  auto fail = [&](const std::string &why) {
    return Status::failure("checkpoint file `" + path + "` (rank " +
                           std::to_string(rank) + "): " + why);
  };
  if (!::loom::support::pathExists(path))
    return fail("missing");
  std::string bytes;
  if (auto error = readWholeFile(path, bytes))
    return Status::failure(*error);
  if (bytes.size() != file.bytes)
    return fail(std::string(bytes.size() < file.bytes ? "truncated: " : "") +
                std::to_string(bytes.size()) + " bytes, the manifest says " +
                std::to_string(file.bytes));
  uint32_t crc = crc32c(bytes.data(), bytes.size());
  if (crc != file.crc32c)
    return fail("checksum mismatch: crc32c " + hex32(crc) +
                ", the manifest says " + hex32(file.crc32c) +
                " (the file is corrupted)");
  std::map<std::string, std::string> metadata;
  if (auto error = parseSafeTensors(path, bytes, blocks, &metadata))
    return Status::failure(*error);
  if (metadata["loom.rank"] != std::to_string(rank) ||
      metadata["loom.step"] != std::to_string(manifest.step))
    return fail("written by rank `" + metadata["loom.rank"] + "` at step `" +
                metadata["loom.step"] + "`, expected rank " +
                std::to_string(rank) + " at step " +
                std::to_string(manifest.step));
  size_t held = 0;
  for (const auto &[name, tensor] : manifest.tensors) {
    if (!holdsTensor(manifest, tensor, rank))
      continue;
    ++held;
    auto it = blocks.find(name);
    if (it == blocks.end())
      return fail("tensor `" + name + "` is missing");
    layout::BlockLayout layout;
    (void)layout::BlockLayout::parse(tensor.layout, manifest.mesh, layout);
    std::vector<int64_t> local =
        layout.getLocalShape(manifest.mesh, tensor.shape);
    if (it->second.shape != local || it->second.dtype != tensor.dtype)
      return fail("tensor `" + name + "` is " +
                  std::string(dtypeName(it->second.dtype)) + " " +
                  mpi::formatShape(it->second.shape) + ", expected " +
                  std::string(dtypeName(tensor.dtype)) + " " +
                  mpi::formatShape(local) + " (global " +
                  mpi::formatShape(tensor.shape) + ", layout " + tensor.layout +
                  ")");
  }
  if (blocks.size() != held)
    for (const auto &[name, tensor] : blocks) {
      auto it = manifest.tensors.find(name);
      if (it == manifest.tensors.end())
        return fail("tensor `" + name + "` is not in the manifest");
      if (!holdsTensor(manifest, it->second, rank))
        return fail("tensor `" + name + "` belongs to stage " +
                    std::to_string(it->second.stage) +
                    ", which this rank does not run");
    }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Global tensors
//===----------------------------------------------------------------------===//

Status splitGlobalTensors(const CheckpointManifest &manifest,
                          const TensorMap &global,
                          std::vector<TensorMap> &perRank) {
  if (Status status = verifyTensors(manifest); !status)
    return status;
  const layout::DeviceMesh &mesh = manifest.mesh;
  perRank.assign(static_cast<size_t>(mesh.getNumDevices()), TensorMap());
  for (const auto &[name, tensor] : manifest.tensors) {
    auto it = global.find(name);
    if (it == global.end())
      return Status::failure("tensor `" + name + "` is missing");
    const TensorData &value = it->second;
    if (value.shape != tensor.shape || value.dtype != tensor.dtype)
      return Status::failure(
          "tensor `" + name + "` is " + std::string(dtypeName(value.dtype)) +
          " " + mpi::formatShape(value.shape) + ", the manifest says " +
          std::string(dtypeName(tensor.dtype)) + " " +
          mpi::formatShape(tensor.shape));
    layout::BlockLayout layout;
    (void)layout::BlockLayout::parse(tensor.layout, mesh, layout);
    std::vector<int64_t> local = layout.getLocalShape(mesh, tensor.shape);
    for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank) {
      if (!holdsTensor(manifest, tensor, rank))
        continue;
      TensorData block;
      block.dtype = value.dtype;
      block.shape = local;
      block.bytes.resize(
          static_cast<size_t>(block.numElements() * dtypeSize(value.dtype)));
      layout::extractBlock(value.bytes.data(), value.shape,
                           layout.getBlockOffset(mesh, tensor.shape, rank),
                           local, dtypeSize(value.dtype), block.bytes.data());
      perRank[rank].emplace(name, std::move(block));
    }
  }
  if (global.size() != manifest.tensors.size())
    for (const auto &[name, tensor] : global)
      if (!manifest.tensors.count(name))
        return Status::failure("tensor `" + name + "` is not in the manifest");
  return Status::success();
}

Status assembleGlobalTensors(const CheckpointManifest &manifest,
                             const std::vector<TensorMap> &perRank,
                             TensorMap &global) {
  if (Status status = verifyTensors(manifest); !status)
    return status;
  const layout::DeviceMesh &mesh = manifest.mesh;
  if (static_cast<int64_t>(perRank.size()) != mesh.getNumDevices())
    return Status::failure("expected the blocks of " +
                           std::to_string(mesh.getNumDevices()) +
                           " ranks, got " + std::to_string(perRank.size()));
  global.clear();
  for (const auto &[name, tensor] : manifest.tensors) {
    layout::BlockLayout layout;
    (void)layout::BlockLayout::parse(tensor.layout, mesh, layout);
    std::vector<int64_t> local = layout.getLocalShape(mesh, tensor.shape);
    layout::AxisList replicated = replicaAxes(manifest, tensor, layout);
    TensorData value;
    value.dtype = tensor.dtype;
    value.shape = tensor.shape;
    value.bytes.resize(
        static_cast<size_t>(value.numElements() * dtypeSize(tensor.dtype)));
    // A stage-owned tensor (a tied embedding too) comes from its owner's
    // ranks only.
    for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank) {
      if (!holdsTensor(manifest, tensor, rank))
        continue;
      auto it = perRank[rank].find(name);
      if (it == perRank[rank].end())
        return Status::failure("tensor `" + name + "` is missing on rank " +
                               std::to_string(rank));
      const TensorData &block = it->second;
      if (block.shape != local || block.dtype != tensor.dtype)
        return Status::failure("tensor `" + name + "` on rank " +
                               std::to_string(rank) + " is " +
                               std::string(dtypeName(block.dtype)) + " " +
                               mpi::formatShape(block.shape) + ", expected " +
                               std::string(dtypeName(tensor.dtype)) + " " +
                               mpi::formatShape(local));
      // The first replica places the block; the others must agree with it.
      if (mesh.getGroupIndex(rank, replicated) != 0) {
        int64_t first = mesh.getGroup(rank, replicated).front();
        if (perRank[first].at(name).bytes != block.bytes)
          return Status::failure("tensor `" + name + "` is replicated over " +
                                 mpi::formatAxes(replicated) + ", but rank " +
                                 std::to_string(rank) +
                                 " holds other values than rank " +
                                 std::to_string(first));
        continue;
      }
      layout::insertBlock(block.bytes.data(), local,
                          layout.getBlockOffset(mesh, tensor.shape, rank),
                          tensor.shape, dtypeSize(tensor.dtype),
                          value.bytes.data());
    }
    global.emplace(name, std::move(value));
  }
  return Status::success();
}

Status writeCheckpoint(const std::string &dir, CheckpointManifest manifest,
                       const std::vector<TensorMap> &perRank) {
  manifest.files.assign(static_cast<size_t>(manifest.mesh.getNumDevices()),
                        CheckpointFile());
  if (Status status = verifyManifest(manifest); !status)
    return Status::failure("cannot write checkpoint `" + dir +
                           "`: " + status.message());
  if (perRank.size() != manifest.files.size())
    return Status::failure("cannot write checkpoint `" + dir +
                           "`: expected the blocks of " +
                           std::to_string(manifest.files.size()) +
                           " ranks, got " + std::to_string(perRank.size()));
  for (size_t rank = 0; rank < perRank.size(); ++rank)
    if (Status status =
            writeCheckpointShard(dir, static_cast<int64_t>(rank), manifest.step,
                                 perRank[rank], manifest.files[rank]);
        !status)
      return status;
  return writeCheckpointManifest(dir, manifest);
}

Status readGlobalCheckpoint(const std::string &dir,
                            CheckpointManifest &manifest, TensorMap &global) {
  if (Status status = readCheckpointManifest(dir, manifest); !status)
    return status;
  std::vector<TensorMap> perRank(manifest.files.size());
  for (size_t rank = 0; rank < perRank.size(); ++rank)
    if (Status status = readCheckpointShard(
            dir, manifest, static_cast<int64_t>(rank), perRank[rank]);
        !status)
      return status;
  if (Status status = assembleGlobalTensors(manifest, perRank, global); !status)
    return Status::failure("checkpoint `" + dir + "`: " + status.message());
  return Status::success();
}

void applyFileShapes(const CheckpointManifest &manifest, TensorMap &global) {
  for (auto &[name, value] : global) {
    auto it = manifest.tensors.find(name);
    if (it != manifest.tensors.end() && !it->second.fileShape.empty())
      value.shape = it->second.fileShape;
  }
}

} // namespace loom::runtime::io

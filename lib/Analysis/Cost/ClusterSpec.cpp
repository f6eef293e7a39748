//===- ClusterSpec.cpp - Cluster specs: JSON, validation, printing --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Reads and writes the cluster spec JSON of docs/CostModel.md. A spec is user
// input, so every field is checked (known keys only, the right JSON type,
// positive and finite numbers, fractions in (0, 1]) and every message names
// the source, the JSON path (as a JSON pointer), what was expected and what
// was found. nlohmann/json runs in its non-throwing mode (LLVM is built
// without exceptions): values are type-checked before every access.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/ClusterSpec.h"

#include "CalibrationJSON.h"

#include "loom/Interfaces/Cost.h"
#include "loom/Support/InputFile.h"
#include "loom/Support/JSON.h"
#include "loom/Support/ParseCache.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

using json = nlohmann::json;

namespace mlir::loom::dist {

namespace {

/// The element types a device may give a peak for, in the order printed.
const char *const kDtypes[] = {"f64", "f32", "bf16", "f16"};

/// Every op class, in the order `OpClass` declares them.
const OpClass kOpClasses[] = {OpClass::Gemm,         OpClass::Elementwise,
                              OpClass::Reduction,    OpClass::Attention,
                              OpClass::DataMovement, OpClass::Optimizer};

/// Joins `names` with ", " for "expected one of ..." in messages.
template <typename Range> std::string joinNames(const Range &names) {
  std::string text;
  for (const auto &name : names) {
    if (!text.empty())
      text += ", ";
    text += name;
  }
  return text;
}

std::vector<std::string> getOpClassNames() {
  std::vector<std::string> names;
  for (OpClass opClass : kOpClasses)
    names.push_back(stringifyOpClass(opClass).str());
  return names;
}

/// A short rendering of a JSON value for "got ..." in messages.
std::string describe(const json &value) {
  std::string text = value.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

/// Reads one spec; the first problem found is kept in `error`.
class SpecReader {
public:
  explicit SpecReader(std::string_view sourceName) : source(sourceName) {}

  std::optional<std::string> error;

  /// Fails with "<source>: <path>: <message>".
  void fail(const std::string &path, const std::string &message) {
    if (!error)
      error = source + ": " + path + ": " + message;
  }

  /// Checks that `value` at `path` is an object whose keys are all in
  /// `known`.
  bool checkObject(const json &value, const std::string &path,
                   const std::vector<std::string> &known,
                   const std::string &what) {
    if (!value.is_object()) {
      fail(path, "expected " + what + ", got " + describe(value));
      return false;
    }
    for (auto it = value.begin(); it != value.end(); ++it)
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        fail(path + "/" + it.key(),
             "unknown key (expected one of " + joinNames(known) + ")");
        return false;
      }
    return true;
  }

  /// Returns the field `key` of `object`, or fails if it is required and
  /// missing (`what` says what it should be).
  const json *field(const json &object, const std::string &path,
                    const std::string &key, const std::string &what,
                    bool required = true) {
    auto it = object.find(key);
    if (it != object.end())
      return &*it;
    if (required)
      fail(path + "/" + key, "required field missing (expected " + what + ")");
    return nullptr;
  }

  /// Reads a positive finite number (an integer or not) in `unit`.
  std::optional<double> readPositive(const json &value, const std::string &path,
                                     const std::string &unit) {
    std::string expected =
        "a positive number" + (unit.empty() ? "" : " in " + unit);
    if (!value.is_number()) {
      fail(path, "expected " + expected + ", got " + describe(value));
      return std::nullopt;
    }
    double number = value.get<double>();
    if (!std::isfinite(number) || number <= 0) {
      fail(path, "expected " + expected + ", got " + describe(value));
      return std::nullopt;
    }
    return number;
  }

  /// Reads an integer at least 1.
  std::optional<int64_t> readCount(const json &value, const std::string &path) {
    bool ok = value.is_number_unsigned() ||
              (value.is_number_integer() && value.get<int64_t>() >= 1);
    if (ok && value.is_number_unsigned() &&
        value.get<uint64_t>() > uint64_t(INT64_MAX))
      ok = false;
    if (!ok || value.get<int64_t>() < 1) {
      fail(path, "expected an integer >= 1, got " + describe(value));
      return std::nullopt;
    }
    return value.get<int64_t>();
  }

  /// Reads a non-empty string.
  std::optional<std::string> readName(const json &value,
                                      const std::string &path) {
    if (!value.is_string() || value.get<std::string>().empty()) {
      fail(path, "expected a non-empty string, got " + describe(value));
      return std::nullopt;
    }
    return value.get<std::string>();
  }

  /// Reads `{"bandwidth": ..., "latency": ...}`.
  void readLink(const json &object, const std::string &key, LinkSpec &link) {
    std::string path = "/" + key;
    const json *value =
        field(object, "", key, "an object with bandwidth and latency");
    if (!value || !checkObject(*value, path, {"bandwidth", "latency"},
                               "an object with bandwidth and latency"))
      return;
    if (const json *bw =
            field(*value, path, "bandwidth", "a positive number in bytes/s"))
      if (auto number = readPositive(*bw, path + "/bandwidth", "bytes/s"))
        link.bandwidthBytesPerSecond = *number;
    if (const json *lat =
            field(*value, path, "latency", "a positive number in seconds"))
      if (auto number = readPositive(*lat, path + "/latency", "seconds"))
        link.latencySeconds = *number;
  }

  void readDevice(const json &object, DeviceSpec &device) {
    const std::string path = "/device";
    const json *value = field(object, "", "device", "an object");
    if (!value || !checkObject(*value, path,
                               {"name", "peak_flops", "memory_bandwidth",
                                "memory_bytes", "memory_gib"},
                               "an object"))
      return;
    if (const json *name = field(*value, path, "name", "a non-empty string"))
      if (auto text = readName(*name, path + "/name"))
        device.name = *text;

    if (const json *peaks = field(*value, path, "peak_flops",
                                  "an object from dtype to FLOP/s")) {
      std::string peaksPath = path + "/peak_flops";
      std::vector<std::string> dtypes(std::begin(kDtypes), std::end(kDtypes));
      if (checkObject(*peaks, peaksPath, dtypes,
                      "an object from dtype to FLOP/s")) {
        if (peaks->empty())
          fail(peaksPath, "expected a peak for at least one of " +
                              joinNames(dtypes) + ", got {}");
        for (auto it = peaks->begin(); it != peaks->end(); ++it)
          if (auto number = readPositive(it.value(), peaksPath + "/" + it.key(),
                                         "FLOP/s"))
            device.peakFlopsPerSecond[it.key()] = *number;
      }
    }

    if (const json *bw = field(*value, path, "memory_bandwidth",
                               "a positive number in bytes/s"))
      if (auto number =
              readPositive(*bw, path + "/memory_bandwidth", "bytes/s"))
        device.memoryBandwidthBytesPerSecond = *number;

    const json *bytes = field(*value, path, "memory_bytes", "", false);
    const json *gib = field(*value, path, "memory_gib", "", false);
    if (bytes && gib) {
      fail(path, "expected memory_bytes or memory_gib, got both");
    } else if (bytes) {
      if (auto count = readCount(*bytes, path + "/memory_bytes"))
        device.memoryBytes = *count;
    } else if (gib) {
      if (auto number = readPositive(*gib, path + "/memory_gib", "GiB")) {
        double total = std::round(*number * double(int64_t(1) << 30));
        if (total >= 9.2e18 || total < 1)
          fail(path + "/memory_gib",
               "expected a capacity of 1 byte to 8 EiB, got " + describe(*gib));
        else
          device.memoryBytes = static_cast<int64_t>(total);
      }
    } else {
      fail(path + "/memory_bytes",
           "required field missing (expected memory_bytes, an integer, or "
           "memory_gib, a number)");
    }
  }

  void readFractions(const json &object, ClusterSpec &spec) {
    std::vector<std::string> classes = getOpClassNames();
    for (const std::string &name : classes)
      spec.achievableFraction[name] = getDefaultAchievableFraction(name);
    const json *value = field(object, "", "achievable_fraction", "", false);
    const std::string path = "/achievable_fraction";
    if (!value || !checkObject(*value, path, classes,
                               "an object from op class to a fraction"))
      return;
    for (auto it = value->begin(); it != value->end(); ++it) {
      const json &number = it.value();
      std::string at = path + "/" + it.key();
      if (!number.is_number() || !(number.get<double>() > 0) ||
          !(number.get<double>() <= 1)) {
        fail(at, "expected a fraction in (0, 1], got " + describe(number));
        continue;
      }
      spec.achievableFraction[it.key()] = number.get<double>();
    }
  }

  ValueOrError<ClusterSpec> read(std::string_view text) {
    using Result = ValueOrError<ClusterSpec>;
    json root;
    if (auto parseError = ::loom::support::parseJSON(
            text, root, ::loom::support::JSONPathStyle::Pointer))
      return Result::failure(source + ": " + parseError->format());
    if (!root.is_object())
      return Result::failure(source + ": expected a JSON object, got " +
                             describe(root));
    ClusterSpec spec;
    checkObject(root, "",
                {"name", "devices_per_node", "max_nodes", "device",
                 "intra_node", "inter_node", "achievable_fraction",
                 "calibration"},
                "an object");
    if (const json *name = field(root, "", "name", "a non-empty string"))
      if (auto text = readName(*name, "/name"))
        spec.name = *text;
    if (const json *count =
            field(root, "", "devices_per_node", "an integer >= 1"))
      if (auto number = readCount(*count, "/devices_per_node"))
        spec.devicesPerNode = *number;
    if (const json *count = field(root, "", "max_nodes", "", false))
      if (auto number = readCount(*count, "/max_nodes"))
        spec.maxNodes = *number;
    readDevice(root, spec.device);
    readLink(root, "intra_node", spec.intraNode);
    readLink(root, "inter_node", spec.interNode);
    readFractions(root, spec);
    // Curves are checked against the peaks, so only once those are read.
    auto calibration = root.find("calibration");
    if (calibration != root.end() && !error) {
      auto read = std::make_shared<Calibration>();
      if (auto problem = readCalibration(*calibration, "/calibration",
                                         spec.device.peakFlopsPerSecond, *read))
        error = source + ": " + *problem;
      else
        spec.calibration = std::move(read);
    }
    if (error)
      return Result::failure(*error);
    return spec;
  }

private:
  std::string source;
};

} // namespace

double getDefaultAchievableFraction(std::string_view opClassName) {
  // docs/CostModel.md, "Compute time", gives the sources. Large GEMMs reach
  // 70-80% of tensor-core peak in cuBLAS; fused attention 50-73%
  // (FlashAttention-2 on A100); streaming kernels 80-90% of HBM bandwidth;
  // reductions lose some to their tree steps; gathers and transposes
  // access memory irregularly; fused optimizers stream like elementwise.
  if (opClassName == "gemm")
    return 0.7;
  if (opClassName == "elementwise")
    return 0.8;
  if (opClassName == "reduction")
    return 0.7;
  if (opClassName == "attention")
    return 0.6;
  if (opClassName == "data_movement")
    return 0.5;
  if (opClassName == "optimizer")
    return 0.8;
  return 0;
}

ValueOrError<ClusterSpec> parseClusterSpec(std::string_view jsonText,
                                           std::string_view sourceName) {
  return SpecReader(sourceName).read(jsonText);
}

/// Spec texts, parsed once per process (loom/Support/ParseCache.h).
static ::loom::support::ParseCache<ValueOrError<ClusterSpec>> &
getSpecFileCache() {
  static ::loom::support::ParseCache<ValueOrError<ClusterSpec>> cache;
  return cache;
}

ValueOrError<ClusterSpec> loadClusterSpec(std::string_view presetOrFile) {
  using Result = ValueOrError<ClusterSpec>;
  std::vector<std::string> presets = getClusterPresetNames();
  if (std::find(presets.begin(), presets.end(), presetOrFile) != presets.end())
    return getClusterPreset(presetOrFile);
  std::string path(presetOrFile);
  if (!::loom::support::pathExists(path))
    return Result::failure("cluster `" + path + "` is neither a preset (" +
                           joinNames(presets) + ") nor a readable file");
  std::string text;
  if (auto error = ::loom::support::readRegularFile(path, text))
    return Result::failure("cluster: " + *error);
  return getParsedClusterSpec(text, presetOrFile);
}

ValueOrError<ClusterSpec> getParsedClusterSpec(std::string_view jsonText,
                                               std::string_view sourceName) {
  // Errors quote the source name, so it is part of the key.
  std::string key(sourceName);
  key += '\0';
  key += jsonText;
  return *getSpecFileCache().getOrParse(
      key, [&] { return parseClusterSpec(jsonText, sourceName); });
}

size_t getNumClusterSpecParses() { return getSpecFileCache().getNumParses(); }

std::string printClusterSpec(const ClusterSpec &spec) {
  // Keys in schema order, so that the output reads like the docs.
  nlohmann::ordered_json root;
  root["name"] = spec.name;
  root["devices_per_node"] = spec.devicesPerNode;
  if (spec.maxNodes > 0)
    root["max_nodes"] = spec.maxNodes;
  nlohmann::ordered_json device;
  device["name"] = spec.device.name;
  nlohmann::ordered_json peaks = nlohmann::ordered_json::object();
  for (const char *dtype : kDtypes) {
    auto it = spec.device.peakFlopsPerSecond.find(dtype);
    if (it != spec.device.peakFlopsPerSecond.end())
      peaks[dtype] = it->second;
  }
  // Keys the schema does not know still print, so nothing is hidden.
  for (const auto &[dtype, peak] : spec.device.peakFlopsPerSecond)
    if (!peaks.contains(dtype))
      peaks[dtype] = peak;
  device["peak_flops"] = peaks;
  device["memory_bandwidth"] = spec.device.memoryBandwidthBytesPerSecond;
  device["memory_bytes"] = spec.device.memoryBytes;
  root["device"] = device;
  auto link = [](const LinkSpec &spec) {
    nlohmann::ordered_json value;
    value["bandwidth"] = spec.bandwidthBytesPerSecond;
    value["latency"] = spec.latencySeconds;
    return value;
  };
  root["intra_node"] = link(spec.intraNode);
  root["inter_node"] = link(spec.interNode);
  nlohmann::ordered_json fractions = nlohmann::ordered_json::object();
  for (const std::string &name : getOpClassNames()) {
    auto it = spec.achievableFraction.find(name);
    if (it != spec.achievableFraction.end())
      fractions[name] = it->second;
  }
  for (const auto &[name, fraction] : spec.achievableFraction)
    if (!fractions.contains(name))
      fractions[name] = fraction;
  root["achievable_fraction"] = fractions;
  if (spec.calibration)
    root["calibration"] = printCalibration(*spec.calibration);
  return root.dump(2) + "\n";
}

} // namespace mlir::loom::dist

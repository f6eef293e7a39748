//===- ClusterSpecTest.cpp - Cluster spec JSON and presets ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Every preset prints and parses back to itself; `--cluster` resolves presets
// and files; and a corpus of bad specs checks that each mistake is reported
// with the source name, the JSON path, what was expected and what was found.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/ClusterSpec.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <functional>

using namespace mlir::loom::dist;
using json = nlohmann::json;

namespace {

/// Field-by-field equality, so a round trip that drops or rounds a number
/// fails here even if both prints happened to agree.
void expectSameSpec(const ClusterSpec &a, const ClusterSpec &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.devicesPerNode, b.devicesPerNode);
  EXPECT_EQ(a.maxNodes, b.maxNodes);
  EXPECT_EQ(a.device.name, b.device.name);
  EXPECT_EQ(a.device.peakFlopsPerSecond, b.device.peakFlopsPerSecond);
  EXPECT_EQ(a.device.memoryBandwidthBytesPerSecond,
            b.device.memoryBandwidthBytesPerSecond);
  EXPECT_EQ(a.device.memoryBytes, b.device.memoryBytes);
  EXPECT_EQ(a.intraNode.bandwidthBytesPerSecond,
            b.intraNode.bandwidthBytesPerSecond);
  EXPECT_EQ(a.intraNode.latencySeconds, b.intraNode.latencySeconds);
  EXPECT_EQ(a.interNode.bandwidthBytesPerSecond,
            b.interNode.bandwidthBytesPerSecond);
  EXPECT_EQ(a.interNode.latencySeconds, b.interNode.latencySeconds);
  EXPECT_EQ(a.achievableFraction, b.achievableFraction);
}

TEST(ClusterSpecTest, PresetNamesAreStable) {
  EXPECT_EQ(getClusterPresetNames(),
            (std::vector<std::string>{"dgx-a100-80g", "dgx-h100", "p3-v100",
                                      "host"}));
}

TEST(ClusterSpecTest, EveryPresetParsesBackFromItsPrint) {
  for (const std::string &name : getClusterPresetNames()) {
    SCOPED_TRACE(name);
    ValueOrError<ClusterSpec> preset = getClusterPreset(name);
    ASSERT_TRUE(preset.ok()) << preset.error();
    EXPECT_EQ(preset->name, name);
    std::string printed = printClusterSpec(*preset);
    ValueOrError<ClusterSpec> parsed =
        parseClusterSpec(printed, name + ".json");
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    expectSameSpec(*preset, *parsed);
    EXPECT_EQ(printClusterSpec(*parsed), printed);
  }
}

TEST(ClusterSpecTest, PresetNumbersAreTheDatasheetOnes) {
  ValueOrError<ClusterSpec> a100 = getClusterPreset("dgx-a100-80g");
  ASSERT_TRUE(a100.ok());
  EXPECT_EQ(a100->device.peakFlopsPerSecond.at("bf16"), 312e12);
  EXPECT_EQ(a100->device.peakFlopsPerSecond.at("f32"), 19.5e12);
  EXPECT_EQ(a100->device.memoryBandwidthBytesPerSecond, 2039e9);
  EXPECT_EQ(a100->device.memoryBytes, int64_t(80) << 30);
  EXPECT_EQ(a100->devicesPerNode, 8);
  // 600 GB/s bidirectional NVLink; 8 x 200 Gb/s shared by 8 GPUs.
  EXPECT_EQ(a100->intraNode.bandwidthBytesPerSecond, 300e9);
  EXPECT_EQ(a100->interNode.bandwidthBytesPerSecond, 25e9);

  ValueOrError<ClusterSpec> h100 = getClusterPreset("dgx-h100");
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(h100->device.peakFlopsPerSecond.at("bf16"), 989e12);
  EXPECT_EQ(h100->device.peakFlopsPerSecond.at("f32"), 67e12);
  EXPECT_EQ(h100->device.memoryBandwidthBytesPerSecond, 3.35e12);
  EXPECT_EQ(h100->intraNode.bandwidthBytesPerSecond, 450e9);
  EXPECT_EQ(h100->interNode.bandwidthBytesPerSecond, 50e9);

  ValueOrError<ClusterSpec> v100 = getClusterPreset("p3-v100");
  ASSERT_TRUE(v100.ok());
  EXPECT_EQ(v100->device.peakFlopsPerSecond.at("f16"), 125e12);
  EXPECT_EQ(v100->device.peakFlopsPerSecond.count("bf16"), 0u);
  EXPECT_EQ(v100->device.memoryBytes, int64_t(16) << 30);
  EXPECT_EQ(v100->intraNode.bandwidthBytesPerSecond, 150e9);
  EXPECT_EQ(v100->interNode.bandwidthBytesPerSecond, 25e9 / 8 / 8);

  ValueOrError<ClusterSpec> host = getClusterPreset("host");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->devicesPerNode, 2);
}

TEST(ClusterSpecTest, UnknownPresetListsThePresets) {
  ValueOrError<ClusterSpec> spec = getClusterPreset("dgx-b200");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error(), "unknown cluster preset `dgx-b200` (presets: "
                          "dgx-a100-80g, dgx-h100, p3-v100, host)");
}

/// A complete, valid spec that the corpus below breaks one field at a time.
json getValidSpec() {
  return json::parse(R"({
    "name": "lab",
    "devices_per_node": 4,
    "max_nodes": 2,
    "device": {
      "name": "gpu",
      "peak_flops": {"f32": 1e13, "bf16": 1e14},
      "memory_bandwidth": 1e12,
      "memory_gib": 40
    },
    "intra_node": {"bandwidth": 1e11, "latency": 2e-6},
    "inter_node": {"bandwidth": 1e10, "latency": 1e-5},
    "achievable_fraction": {"gemm": 0.5}
  })");
}

TEST(ClusterSpecTest, ParsesAValidSpecAndFillsDefaults) {
  ValueOrError<ClusterSpec> spec =
      parseClusterSpec(getValidSpec().dump(), "lab.json");
  ASSERT_TRUE(spec.ok()) << spec.error();
  EXPECT_EQ(spec->name, "lab");
  EXPECT_EQ(spec->devicesPerNode, 4);
  EXPECT_EQ(spec->maxNodes, 2);
  EXPECT_EQ(spec->device.memoryBytes, int64_t(40) << 30);
  EXPECT_EQ(spec->device.peakFlopsPerSecond.size(), 2u);
  EXPECT_EQ(spec->interNode.latencySeconds, 1e-5);
  // The one fraction given, and the defaults for the other five classes.
  EXPECT_EQ(spec->achievableFraction.at("gemm"), 0.5);
  EXPECT_EQ(spec->achievableFraction.at("elementwise"),
            getDefaultAchievableFraction("elementwise"));
  EXPECT_EQ(spec->achievableFraction.size(), 6u);
  EXPECT_EQ(getDefaultAchievableFraction("matmul"), 0);
}

TEST(ClusterSpecTest, MaxNodesIsOptional) {
  json value = getValidSpec();
  value.erase("max_nodes");
  ValueOrError<ClusterSpec> spec = parseClusterSpec(value.dump(), "lab.json");
  ASSERT_TRUE(spec.ok()) << spec.error();
  EXPECT_EQ(spec->maxNodes, 0);
  EXPECT_EQ(printClusterSpec(*spec).find("max_nodes"), std::string::npos);
}

struct BadSpec {
  const char *what;
  std::function<void(json &)> breakIt;
  const char *message;
};

TEST(ClusterSpecTest, BadSpecsSayWhereAndWhat) {
  const BadSpec corpus[] = {
      {"a string where a peak belongs",
       [](json &v) { v["device"]["peak_flops"]["bf16"] = "fast"; },
       "cluster.json: /device/peak_flops/bf16: expected a positive number in "
       "FLOP/s, got \"fast\""},
      {"an unknown top-level key", [](json &v) { v["colour"] = "green"; },
       "cluster.json: /colour: unknown key (expected one of name, "
       "devices_per_node, max_nodes, device, intra_node, inter_node, "
       "achievable_fraction, calibration)"},
      {"a dtype Loom does not price",
       [](json &v) { v["device"]["peak_flops"]["fp8"] = 1e15; },
       "cluster.json: /device/peak_flops/fp8: unknown key (expected one of "
       "f64, f32, bf16, f16)"},
      {"no peaks at all",
       [](json &v) { v["device"]["peak_flops"] = json::object(); },
       "cluster.json: /device/peak_flops: expected a peak for at least one of "
       "f64, f32, bf16, f16, got {}"},
      {"zero devices per node", [](json &v) { v["devices_per_node"] = 0; },
       "cluster.json: /devices_per_node: expected an integer >= 1, got 0"},
      {"a fractional device count",
       [](json &v) { v["devices_per_node"] = 8.5; },
       "cluster.json: /devices_per_node: expected an integer >= 1, got 8.5"},
      {"a negative max_nodes", [](json &v) { v["max_nodes"] = -2; },
       "cluster.json: /max_nodes: expected an integer >= 1, got -2"},
      {"a missing memory bandwidth",
       [](json &v) { v["device"].erase("memory_bandwidth"); },
       "cluster.json: /device/memory_bandwidth: required field missing "
       "(expected a positive number in bytes/s)"},
      {"a negative latency", [](json &v) { v["intra_node"]["latency"] = -1.5; },
       "cluster.json: /intra_node/latency: expected a positive number in "
       "seconds, got -1.5"},
      {"a zero bandwidth", [](json &v) { v["inter_node"]["bandwidth"] = 0; },
       "cluster.json: /inter_node/bandwidth: expected a positive number in "
       "bytes/s, got 0"},
      {"a missing link level", [](json &v) { v.erase("inter_node"); },
       "cluster.json: /inter_node: required field missing (expected an "
       "object with bandwidth and latency)"},
      {"a link given as a number", [](json &v) { v["intra_node"] = 300; },
       "cluster.json: /intra_node: expected an object with bandwidth and "
       "latency, got 300"},
      {"an unknown link key",
       [](json &v) { v["intra_node"]["bandwith"] = 1e11; },
       "cluster.json: /intra_node/bandwith: unknown key (expected one of "
       "bandwidth, latency)"},
      {"both capacity fields",
       [](json &v) { v["device"]["memory_bytes"] = 1000; },
       "cluster.json: /device: expected memory_bytes or memory_gib, got both"},
      {"no capacity field", [](json &v) { v["device"].erase("memory_gib"); },
       "cluster.json: /device/memory_bytes: required field missing (expected "
       "memory_bytes, an integer, or memory_gib, a number)"},
      {"a capacity as a string",
       [](json &v) { v["device"]["memory_gib"] = "80"; },
       "cluster.json: /device/memory_gib: expected a positive number in GiB, "
       "got \"80\""},
      {"a fraction above 1",
       [](json &v) { v["achievable_fraction"]["gemm"] = 1.5; },
       "cluster.json: /achievable_fraction/gemm: expected a fraction in (0, "
       "1], got 1.5"},
      {"a fraction for an unknown op class",
       [](json &v) { v["achievable_fraction"]["matmul"] = 0.5; },
       "cluster.json: /achievable_fraction/matmul: unknown key (expected one "
       "of gemm, elementwise, reduction, attention, data_movement, "
       "optimizer)"},
      {"an empty name", [](json &v) { v["name"] = ""; },
       "cluster.json: /name: expected a non-empty string, got \"\""},
      {"a missing name", [](json &v) { v.erase("name"); },
       "cluster.json: /name: required field missing (expected a non-empty "
       "string)"},
      {"a device given as a list", [](json &v) { v["device"] = json::array(); },
       "cluster.json: /device: expected an object, got []"},
  };
  for (const BadSpec &bad : corpus) {
    SCOPED_TRACE(bad.what);
    json value = getValidSpec();
    bad.breakIt(value);
    ValueOrError<ClusterSpec> spec =
        parseClusterSpec(value.dump(), "cluster.json");
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.error(), bad.message);
  }
}

//===----------------------------------------------------------------------===//
// Calibrated curves
//===----------------------------------------------------------------------===//

/// The valid spec with a small valid calibration: a 2 x 2 x 1 GEMM grid per
/// dtype whose time grows along every axis, two-point curves, and fits.
json getCalibratedSpec() {
  json spec = getValidSpec();
  json gemm = {{"m", {16, 256}},
               {"n", {16, 256}},
               {"k", {64}},
               {"flops_per_second", {{{1e9}, {4e9}}, {{4e9}, {1e10}}}}};
  json attention = {{"flops", {1e6, 1e9}}, {"flops_per_second", {1e9, 5e9}}};
  spec["calibration"] = {
      {"date", "2026-11-27T20:00:00Z"},
      {"machine", "test"},
      {"ranks", 2},
      {"gemm", {{"f32", gemm}, {"bf16", gemm}}},
      {"attention", {{"f32", attention}, {"bf16", attention}}},
      {"elementwise",
       {{"bytes", {1e3, 1e6}}, {"bytes_per_second", {1e9, 1e10}}}},
      {"row_kernel", {{"bytes", {1e3, 1e6}}, {"bytes_per_second", {5e8, 5e9}}}},
      {"collectives",
       {{"all_reduce",
         {{{"group_size", 2}, {"latency", 1e-5}, {"bandwidth", 1e9}},
          {{"group_size", 4}, {"latency", 3e-5}, {"bandwidth", 5e8}}}},
        {"send_recv",
         {{{"group_size", 2}, {"latency", 4e-6}, {"bandwidth", 2e9}}}}}}};
  return spec;
}

TEST(ClusterSpecTest, CalibratedSpecParsesAndPrintsBack) {
  ValueOrError<ClusterSpec> spec =
      parseClusterSpec(getCalibratedSpec().dump(), "calibrated.json");
  ASSERT_TRUE(spec.ok()) << spec.error();
  ASSERT_TRUE(spec->calibration);
  const Calibration &calibration = *spec->calibration;
  EXPECT_EQ(calibration.ranks, 2);
  EXPECT_EQ(calibration.gemm.at("f32").flopsPerSecond[1][0][0], 4e9);
  EXPECT_EQ(calibration.rowKernel.rates, (std::vector<double>{5e8, 5e9}));
  ASSERT_TRUE(calibration.findCollective("all_reduce", 4));
  EXPECT_EQ(
      calibration.findCollective("all_reduce", 4)->bandwidthBytesPerSecond,
      5e8);
  EXPECT_FALSE(calibration.findCollective("all_reduce", 8));
  EXPECT_FALSE(calibration.findCollective("all_gather", 2));

  // Printing keeps every number: the print parses to the same curves.
  std::string printed = printClusterSpec(*spec);
  ValueOrError<ClusterSpec> again = parseClusterSpec(printed, "printed.json");
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(printClusterSpec(*again), printed);
  expectSameSpec(*spec, *again);
  EXPECT_EQ(again->calibration->gemm.at("bf16").flopsPerSecond,
            calibration.gemm.at("bf16").flopsPerSecond);
  EXPECT_EQ(again->calibration->collectives.at("send_recv")[0].latencySeconds,
            4e-6);

  // Collectives are optional: a one-rank calibration measures none.
  json single = getCalibratedSpec();
  single["calibration"].erase("collectives");
  ValueOrError<ClusterSpec> one = parseClusterSpec(single.dump(), "one.json");
  ASSERT_TRUE(one.ok()) << one.error();
  EXPECT_TRUE(one->calibration->collectives.empty());
}

TEST(ClusterSpecTest, BadCalibrationsSayWhereAndWhat) {
  const BadSpec corpus[] = {
      {"a missing GEMM curve", [](json &v) { v["calibration"].erase("gemm"); },
       "cluster.json: /calibration/gemm: required field missing (expected an "
       "object from dtype to a GEMM grid)"},
      {"a missing row-kernel curve",
       [](json &v) { v["calibration"].erase("row_kernel"); },
       "cluster.json: /calibration/row_kernel: required field missing "
       "(expected an object with bytes and bytes_per_second)"},
      {"a GEMM curve for a dtype without a peak",
       [](json &v) {
         v["calibration"]["gemm"]["f64"] = v["calibration"]["gemm"]["f32"];
       },
       "cluster.json: /calibration/gemm/f64: a curve for a dtype without a "
       "peak in /device/peak_flops (expected one of bf16, f32)"},
      {"a peak without an attention curve",
       [](json &v) { v["calibration"]["attention"].erase("bf16"); },
       "cluster.json: /calibration/attention: expected a curve for each dtype "
       "of /device/peak_flops (bf16, f32), got f32"},
      {"sizes that do not increase",
       [](json &v) {
         v["calibration"]["elementwise"]["bytes"] = {1e6, 1e3};
       },
       "cluster.json: /calibration/elementwise/bytes/1: expected sizes "
       "strictly increasing, got 1000 after 1e+06"},
      {"a larger size that takes less time",
       [](json &v) {
         v["calibration"]["row_kernel"]["bytes_per_second"] = {5e8, 1e12};
       },
       "cluster.json: /calibration/row_kernel/bytes_per_second/1: the time "
       "this implies falls from 2e-06 s at bytes 1000 to 1e-06 s at 1e+06 (a "
       "larger size cannot take less time)"},
      {"a GEMM grid whose time falls as n grows",
       [](json &v) {
         v["calibration"]["gemm"]["f32"]["flops_per_second"][0][1][0] = 1e11;
       },
       "cluster.json: /calibration/gemm/f32/flops_per_second/0/1/0: the time "
       "this implies falls from 3.2768e-05 s at flops (n grows) 32768 to "
       "5.24288e-06 s at 524288 (a larger size cannot take less time)"},
      {"a zero rate",
       [](json &v) {
         v["calibration"]["attention"]["f32"]["flops_per_second"][0] = 0;
       },
       "cluster.json: /calibration/attention/f32/flops_per_second/0: "
       "expected a positive number in FLOP/s, got 0"},
      {"a negative size",
       [](json &v) { v["calibration"]["gemm"]["bf16"]["k"] = {-64}; },
       "cluster.json: /calibration/gemm/bf16/k/0: expected a positive number "
       "in elements, got -64"},
      {"one rate too few",
       [](json &v) {
         v["calibration"]["elementwise"]["bytes_per_second"] = {1e9};
       },
       "cluster.json: /calibration/elementwise/bytes_per_second: expected 2 "
       "rates (one per bytes entry), got 1"},
      {"a GEMM grid missing a row",
       [](json &v) {
         v["calibration"]["gemm"]["f32"]["flops_per_second"][1] = {{4e9}};
       },
       "cluster.json: /calibration/gemm/f32/flops_per_second/1: expected an "
       "array of 2 (one per n entry), got [[4000000000.0]]"},
      {"a negative latency",
       [](json &v) {
         v["calibration"]["collectives"]["all_reduce"][0]["latency"] = -1e-5;
       },
       "cluster.json: /calibration/collectives/all_reduce/0/latency: expected "
       "a positive number in seconds, got -1e-05"},
      {"a group of one",
       [](json &v) {
         v["calibration"]["collectives"]["send_recv"][0]["group_size"] = 1;
       },
       "cluster.json: /calibration/collectives/send_recv/0/group_size: "
       "expected an integer >= 2, got 1"},
      {"group sizes out of order",
       [](json &v) {
         v["calibration"]["collectives"]["all_reduce"][1]["group_size"] = 2;
       },
       "cluster.json: /calibration/collectives/all_reduce/1/group_size: "
       "expected group sizes strictly increasing, got 2 after 2"},
      {"an unknown collective",
       [](json &v) {
         v["calibration"]["collectives"]["broadcast"] = json::array();
       },
       "cluster.json: /calibration/collectives/broadcast: unknown key "
       "(expected one of all_reduce, all_gather, reduce_scatter, all_to_all, "
       "send_recv)"},
      {"no ranks", [](json &v) { v["calibration"]["ranks"] = 0; },
       "cluster.json: /calibration/ranks: expected an integer >= 1, got 0"},
      {"a calibration given as a list",
       [](json &v) { v["calibration"] = json::array(); },
       "cluster.json: /calibration: expected an object, got []"},
  };
  for (const BadSpec &bad : corpus) {
    SCOPED_TRACE(bad.what);
    json value = getCalibratedSpec();
    bad.breakIt(value);
    ValueOrError<ClusterSpec> spec =
        parseClusterSpec(value.dump(), "cluster.json");
    ASSERT_FALSE(spec.ok());
    EXPECT_EQ(spec.error(), bad.message);
  }
}

TEST(ClusterSpecTest, NotAnObjectOrNotJson) {
  ValueOrError<ClusterSpec> list = parseClusterSpec("[1, 2]", "c.json");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error(), "c.json: expected a JSON object, got [1,2]");

  ValueOrError<ClusterSpec> broken =
      parseClusterSpec("{\"name\": \"x\",\n \"devices_per_node\": }", "c.json");
  ASSERT_FALSE(broken.ok());
  // The line and column of the mistake, then nlohmann's own words.
  EXPECT_EQ(broken.error().rfind("c.json: line 2, column 22: "
                                 "`/devices_per_node`: invalid JSON: "
                                 "syntax error",
                                 0),
            0u)
      << broken.error();

  // Keys are unique (loom/Support/JSON.h): the duplicate's JSON pointer.
  ValueOrError<ClusterSpec> duplicate = parseClusterSpec(
      "{\"name\": \"x\", \"device\": {\"memory_gib\": 1, \"memory_gib\": 2}}",
      "c.json");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().rfind("c.json: line 1, column 43: "
                                    "`/device/memory_gib`: duplicate key "
                                    "`memory_gib`, already given at line 1, "
                                    "column 26",
                                    0),
            0u)
      << duplicate.error();
}

TEST(ClusterSpecTest, LoadResolvesPresetsThenFiles) {
  ValueOrError<ClusterSpec> preset = loadClusterSpec("dgx-h100");
  ASSERT_TRUE(preset.ok()) << preset.error();
  EXPECT_EQ(preset->name, "dgx-h100");

  std::string path = ::testing::TempDir() + "loom-cluster-spec-test.json";
  {
    std::ofstream file(path);
    file << getValidSpec().dump(2);
  }
  ValueOrError<ClusterSpec> fromFile = loadClusterSpec(path);
  ASSERT_TRUE(fromFile.ok()) << fromFile.error();
  EXPECT_EQ(fromFile->name, "lab");

  // Messages from a file name the file.
  {
    std::ofstream file(path);
    file << R"({"name": 3})";
  }
  ValueOrError<ClusterSpec> bad = loadClusterSpec(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), path + ": /name: expected a non-empty string, got 3");
  std::remove(path.c_str());

  ValueOrError<ClusterSpec> missing = loadClusterSpec("no-such-cluster");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            "cluster `no-such-cluster` is neither a preset (dgx-a100-80g, "
            "dgx-h100, p3-v100, host) nor a readable file");
}

TEST(ClusterSpecTest, EachSpecFileIsParsedOnce) {
  // The passes of one compile each resolve `--cluster FILE`: the file is
  // parsed once, and parsed again only when its bytes change.
  std::string path = ::testing::TempDir() + "loom-cluster-spec-once.json";
  nlohmann::json spec = getValidSpec();
  spec["name"] = "parsed-once";
  {
    std::ofstream file(path);
    file << spec.dump(2);
  }
  size_t before = getNumClusterSpecParses();
  for (int i = 0; i < 3; ++i) {
    ValueOrError<ClusterSpec> loaded = loadClusterSpec(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_EQ(loaded->name, "parsed-once");
  }
  EXPECT_EQ(getNumClusterSpecParses(), before + 1);
  spec["name"] = "edited";
  {
    std::ofstream file(path);
    file << spec.dump(2);
  }
  ValueOrError<ClusterSpec> edited = loadClusterSpec(path);
  ASSERT_TRUE(edited.ok()) << edited.error();
  EXPECT_EQ(edited->name, "edited");
  EXPECT_EQ(getNumClusterSpecParses(), before + 2);
  std::remove(path.c_str());
}

} // namespace

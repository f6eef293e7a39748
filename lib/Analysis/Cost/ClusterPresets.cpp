//===- ClusterPresets.cpp - Shipped cluster specs -------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The clusters `--cluster NAME` knows. Every number carries its source:
// vendor datasheets for peaks, memory and links; the policy choices (the f32
// rate, latencies, achievable fractions) are argued in docs/CostModel.md,
// "Cluster specs", which repeats this table with its sources.
//
// Conventions: a link's bandwidth is what one device drives in one direction
// (NVLink totals are quoted bidirectional, so halved; a node's NICs are
// shared by its devices, so divided by the devices per node); FLOP/s are
// dense (no 2:4 sparsity); GB = 1e9 bytes, GiB = 2^30 bytes.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/ClusterSpec.h"

namespace mlir::loom::dist {

namespace {

constexpr double kGiB = double(int64_t(1) << 30);

/// Fills the op-class fractions every GPU preset shares (see
/// getDefaultAchievableFraction for how they were chosen).
void setDefaultFractions(ClusterSpec &spec) {
  for (const char *name : {"gemm", "elementwise", "reduction", "attention",
                           "data_movement", "optimizer"})
    spec.achievableFraction[name] = getDefaultAchievableFraction(name);
}

/// NVIDIA DGX A100 (80 GB): 8 x A100-SXM4-80GB per node, NVSwitch.
ClusterSpec getDgxA100() {
  ClusterSpec spec;
  spec.name = "dgx-a100-80g";
  spec.device.name = "A100-SXM4-80GB";
  // NVIDIA A100 Tensor Core GPU datasheet (2021), SXM column:
  //   FP64 Tensor Core 19.5 TFLOPS (FP64 non-tensor 9.7); GEMMs use the
  //   tensor-core rate.
  spec.device.peakFlopsPerSecond["f64"] = 19.5e12;
  //   FP32 19.5 TFLOPS. TF32 (156 TFLOPS) is not used: Loom's f32 means
  //   IEEE f32 (cuBLAS's default math mode), whose results the numeric
  //   tests compare; a TF32 cluster is a spec file with f32 = 156e12.
  spec.device.peakFlopsPerSecond["f32"] = 19.5e12;
  //   BF16 / FP16 Tensor Core 312 TFLOPS dense (624 with sparsity).
  spec.device.peakFlopsPerSecond["bf16"] = 312e12;
  spec.device.peakFlopsPerSecond["f16"] = 312e12;
  //   GPU memory bandwidth 2,039 GB/s (80GB SXM, HBM2e).
  spec.device.memoryBandwidthBytesPerSecond = 2039e9;
  //   GPU memory 80GB (nvidia-smi: 81920 MiB = 80 GiB).
  spec.device.memoryBytes = static_cast<int64_t>(80 * kGiB);
  // DGX A100 user guide / datasheet: 8 GPUs per node.
  spec.devicesPerNode = 8;
  // Datasheet: NVLink 3 600 GB/s per GPU, bidirectional total (12 links x
  // 50 GB/s) -> 300 GB/s per direction; any pair at full rate via six
  // NVSwitches. Latency: 3 us per NCCL step inside a node (a few us; see
  // docs/CostModel.md).
  spec.intraNode = {300e9, 3e-6};
  // DGX A100 datasheet: 8 x single-port ConnectX-6 200 Gb/s HDR InfiniBand
  // for the compute fabric = 1,600 Gb/s = 200 GB/s per node -> 25 GB/s per
  // GPU per direction. Latency: 6 us per step over IB (5-10 us).
  spec.interNode = {25e9, 6e-6};
  setDefaultFractions(spec);
  return spec;
}

/// NVIDIA DGX H100: 8 x H100 SXM5 80 GB per node, NVSwitch.
ClusterSpec getDgxH100() {
  ClusterSpec spec;
  spec.name = "dgx-h100";
  spec.device.name = "H100-SXM5-80GB";
  // NVIDIA H100 Tensor Core GPU datasheet, SXM column:
  //   FP64 Tensor Core 67 TFLOPS (FP64 34).
  spec.device.peakFlopsPerSecond["f64"] = 67e12;
  //   FP32 67 TFLOPS (TF32 Tensor Core 989 dense, not used: see A100).
  spec.device.peakFlopsPerSecond["f32"] = 67e12;
  //   BF16 / FP16 Tensor Core 1,979 TFLOPS with sparsity -> 989 dense.
  spec.device.peakFlopsPerSecond["bf16"] = 989e12;
  spec.device.peakFlopsPerSecond["f16"] = 989e12;
  //   GPU memory bandwidth 3.35 TB/s (HBM3).
  spec.device.memoryBandwidthBytesPerSecond = 3.35e12;
  //   GPU memory 80GB.
  spec.device.memoryBytes = static_cast<int64_t>(80 * kGiB);
  // DGX H100 datasheet: 8 GPUs, 4 NVSwitches.
  spec.devicesPerNode = 8;
  // Datasheet: NVLink 4 900 GB/s per GPU bidirectional (18 links x 50 GB/s)
  // -> 450 GB/s per direction. Latency as for NVLink 3.
  spec.intraNode = {450e9, 3e-6};
  // DGX H100 datasheet: 8 x ConnectX-7 400 Gb/s NDR InfiniBand (4 OSFP
  // ports) = 3,200 Gb/s = 400 GB/s per node -> 50 GB/s per GPU.
  spec.interNode = {50e9, 6e-6};
  setDefaultFractions(spec);
  return spec;
}

/// AWS p3.16xlarge: 8 x V100-SXM2-16GB with NVLink, 25 Gb/s Ethernet.
ClusterSpec getP3V100() {
  ClusterSpec spec;
  spec.name = "p3-v100";
  spec.device.name = "V100-SXM2-16GB";
  // NVIDIA Tesla V100 datasheet, SXM2 column: double 7.8 TFLOPS, single
  // 15.7 TFLOPS, tensor (f16 in, f32 accumulate) 125 TFLOPS. Volta has no
  // bf16: a bf16 model cannot be priced on this cluster (an error says so).
  spec.device.peakFlopsPerSecond["f64"] = 7.8e12;
  spec.device.peakFlopsPerSecond["f32"] = 15.7e12;
  spec.device.peakFlopsPerSecond["f16"] = 125e12;
  //   Memory bandwidth 900 GB/s (HBM2); capacity 16 GB (16 GiB of HBM2).
  spec.device.memoryBandwidthBytesPerSecond = 900e9;
  spec.device.memoryBytes = static_cast<int64_t>(16 * kGiB);
  // AWS EC2 P3 instance table: p3.16xlarge has 8 GPUs.
  spec.devicesPerNode = 8;
  // V100 datasheet: NVLink 2 300 GB/s per GPU bidirectional (6 links x
  // 50 GB/s) -> 150 GB/s per direction. The hybrid cube-mesh does not
  // connect every pair, but NCCL's rings use the direct links.
  spec.intraNode = {150e9, 3e-6};
  // AWS EC2 P3 instance table: p3.16xlarge network performance 25 Gbps
  // (TCP, no EFA) = 3.125 GB/s per node -> 390.625 MB/s per GPU. Latency:
  // 50 us per step for TCP over Ethernet.
  spec.interNode = {3.125e9 / 8, 50e-6};
  setDefaultFractions(spec);
  return spec;
}

/// The machine Loom is developed on: one KVM guest with 2 vCPUs of an AMD
/// EPYC (family 25 model 1, Zen 3, 2.445 GHz, AVX2 + FMA) and 24 GiB,
/// running one rank per core through the host backend.
ClusterSpec getHost() {
  ClusterSpec spec;
  spec.name = "host";
  spec.device.name = "AMD EPYC Zen 3 core (2.445 GHz, AVX2)";
  // Zen 3 issues two 256-bit FMAs per cycle: 2 x 8 f32 lanes x 2 FLOP x
  // 2.445e9 Hz = 78.2 GFLOP/s per core, half for f64 (lscpu; a 10-chain
  // FMA loop measured 59 GFLOP/s with the other core busy, see
  // docs/CostModel.md). The host runtime widens bf16 / f16 to f32
  // (include/loom/Runtime/Host/README.md), so they run at the f32 rate.
  spec.device.peakFlopsPerSecond["f64"] = 39.1e9;
  spec.device.peakFlopsPerSecond["f32"] = 78.2e9;
  spec.device.peakFlopsPerSecond["bf16"] = 78.2e9;
  spec.device.peakFlopsPerSecond["f16"] = 78.2e9;
  // Measured (docs/CostModel.md): a triad streams 10.4 GB/s on one core
  // and 9.5 GB/s on both together, so each of the two ranks gets ~5 GB/s.
  spec.device.memoryBandwidthBytesPerSecond = 5e9;
  // 24 GiB of memory (free -g), shared by the two ranks.
  spec.device.memoryBytes = static_cast<int64_t>(12 * kGiB);
  // One rank per core.
  spec.devicesPerNode = 2;
  // Ranks on one machine exchange data through shared memory: memcpy
  // measured 7.3 GB/s on one core, and a message is copied in and out, so
  // ~3.5 GB/s per direction; ~1 us per message (MPI shared memory).
  spec.intraNode = {3.5e9, 1e-6};
  // Not measured (these machines have no network between them): assume
  // 10 Gb/s Ethernet = 1.25 GB/s per machine -> 625 MB/s per rank, 50 us
  // per TCP message.
  spec.interNode = {1.25e9 / 2, 50e-6};
  // The host kernels are plain loops over OpenBLAS: a single-threaded
  // sgemm reached ~0.7 of the f32 peak; streaming loops get the measured
  // bandwidth above (so ~0.9 of it); attention is unfused loops.
  spec.achievableFraction = {{"gemm", 0.7},          {"elementwise", 0.9},
                             {"reduction", 0.8},     {"attention", 0.3},
                             {"data_movement", 0.6}, {"optimizer", 0.8}};
  return spec;
}

struct Preset {
  const char *name;
  ClusterSpec (*build)();
};

/// In the order `getClusterPresetNames` lists them.
const Preset kPresets[] = {{"dgx-a100-80g", getDgxA100},
                           {"dgx-h100", getDgxH100},
                           {"p3-v100", getP3V100},
                           {"host", getHost}};

} // namespace

std::vector<std::string> getClusterPresetNames() {
  std::vector<std::string> names;
  for (const Preset &preset : kPresets)
    names.push_back(preset.name);
  return names;
}

ValueOrError<ClusterSpec> getClusterPreset(std::string_view name) {
  std::string known;
  for (const Preset &preset : kPresets) {
    if (name == preset.name)
      return preset.build();
    known += known.empty() ? "" : ", ";
    known += preset.name;
  }
  return ValueOrError<ClusterSpec>::failure("unknown cluster preset `" +
                                            std::string(name) +
                                            "` (presets: " + known + ")");
}

} // namespace mlir::loom::dist

//===- loom-calibrate.cpp - Measure a machine, write a cluster spec -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `mpirun -np N loom-calibrate -o FILE.json [--quick]` measures this machine
// as N host ranks see it and writes a cluster spec (docs/CostModel.md) whose
// `calibration` object holds the measured curves; `loomc --cluster FILE.json`
// then prices plans by them. A C++ program rather than a script because it
// must time the very kernels and communicator emitted programs call (the
// host runtime's OpenBLAS GEMMs and MPI collectives; the CUDA ones later).
//
//  1. Every rank measures the compute curves at once (GEMM grid per dtype,
//     attention, streaming and row kernels): N ranks sharing cores is what
//     an N-rank run sees.
//  2. Collectives are timed per group size and fitted to α–β.
//  3. Rank 0 assembles the spec, parses it back with the spec reader (so a
//     file it writes is a file loomc accepts), and writes it atomically.
//
//===----------------------------------------------------------------------===//

#include "CollectiveFits.h"
#include "ComputeCurves.h"

#include "loom/Analysis/Cost/ClusterSpec.h"
#include "loom/Support/CommandLine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <thread>

namespace cl = llvm::cl;
using namespace mlir::loom::dist;
using namespace loom::calibrate;

static cl::opt<std::string> outputPath("o", cl::desc("cluster spec to write"),
                                       cl::value_desc("FILE.json"),
                                       cl::Required);
static cl::opt<bool>
    quick("quick", cl::desc("a two-point grid and short timings, for tests "
                            "(the numbers are rough)"));

/// OpenBLAS's own thread count; emitted launch scripts run one BLAS thread
/// per rank (OPENBLAS_NUM_THREADS=1 unless set), and so does calibration.
extern "C" void openblas_set_num_threads(int threads);

static int blasThreads() {
  const char *text = std::getenv("OPENBLAS_NUM_THREADS");
  int threads = text ? std::atoi(text) : 1;
  return threads >= 1 ? threads : 1;
}

static std::string getUtcDate() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

static std::string getMachine(int ranks) {
  char host[256] = "unknown host";
  gethostname(host, sizeof(host) - 1);
  std::string cpu = "unknown CPU";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  return std::string(host) + ": " + cpu + ", " +
         std::to_string(std::thread::hardware_concurrency()) + " cores, " +
         std::to_string(ranks) + " MPI ranks, " +
         std::to_string(blasThreads()) + " OpenBLAS thread(s) per rank";
}

/// Rank 0 says what it measures, so a two-minute run shows progress.
static void progress(int rank, const std::string &what) {
  if (rank == 0)
    llvm::errs() << "loom-calibrate: " << what << "\n";
}

/// Builds the spec around the measured curves (docs/CostModel.md,
/// "Calibrated curves", says where each number comes from).
static ClusterSpec makeSpec(std::shared_ptr<Calibration> calibration,
                            int ranks) {
  ClusterSpec spec;
  char host[256] = "host";
  gethostname(host, sizeof(host) - 1);
  spec.name = "calibrated-" + std::string(host) + "-np" + std::to_string(ranks);
  spec.devicesPerNode = ranks;
  spec.maxNodes = 1;
  spec.device.name = "host rank";
  for (const auto &[dtype, curve] : calibration->gemm) {
    double peak = 0;
    for (const auto &plane : curve.flopsPerSecond)
      for (const auto &row : plane)
        for (double rate : row)
          peak = std::max(peak, rate);
    spec.device.peakFlopsPerSecond[dtype] = peak;
  }
  // The largest streaming size runs from DRAM.
  spec.device.memoryBandwidthBytesPerSecond =
      calibration->elementwise.rates.back();
  double memory =
      double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  spec.device.memoryBytes =
      std::max<int64_t>(1, static_cast<int64_t>(memory / ranks));
  // One node: both levels are the measured pairwise exchange, or without
  // one (a single rank) the memory bandwidth and a microsecond.
  LinkSpec link{spec.device.memoryBandwidthBytesPerSecond, 1e-6};
  if (std::optional<CollectiveFit> pair =
          calibration->findCollective("send_recv", 2))
    link = {pair->bandwidthBytesPerSecond, pair->latencySeconds};
  spec.intraNode = spec.interNode = link;
  // Peaks and bandwidths are achieved rates already.
  for (const char *opClass : {"gemm", "elementwise", "reduction", "attention",
                              "data_movement", "optimizer"})
    spec.achievableFraction[opClass] = 1.0;
  spec.calibration = std::move(calibration);
  return spec;
}

static int run(int rank, int ranks) {
  auto started = std::chrono::steady_clock::now();
  // Fail before measuring when the output cannot be written.
  std::string temporary = outputPath + ".tmp";
  int writable = 1;
  if (rank == 0) {
    std::FILE *probe = std::fopen(temporary.c_str(), "w");
    writable = probe != nullptr;
    if (probe) {
      std::fclose(probe);
      std::remove(temporary.c_str());
    }
  }
  MPI_Bcast(&writable, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!writable) {
    if (rank == 0)
      llvm::errs() << "loom-calibrate: error: cannot write `" << outputPath
                   << "` (the directory must exist and be writable)\n";
    return 1;
  }
  openblas_set_num_threads(blasThreads());

  ComputePlan plan = ComputePlan::get(quick);
  auto calibration = std::make_shared<Calibration>();
  calibration->date = getUtcDate();
  calibration->machine = getMachine(ranks);
  calibration->ranks = ranks;
  for (const char *dtype : {"f32", "f64"}) {
    progress(rank, std::string("gemm ") + dtype);
    calibration->gemm[dtype] = measureGemm(plan, dtype);
    progress(rank, std::string("attention ") + dtype);
    calibration->attention[dtype] = measureAttention(plan, dtype);
  }
  progress(rank, "elementwise and row kernels");
  calibration->elementwise = measureElementwise(plan);
  calibration->rowKernel = measureRowKernels(plan);
  if (ranks > 1) {
    progress(rank, "collectives");
    std::vector<double> bytes =
        quick ? std::vector<double>{8192, 524288}
              : std::vector<double>{8192, 65536, 524288, 4194304};
    std::string error =
        measureCollectives(bytes, plan.budget, calibration->collectives);
    if (!error.empty()) {
      llvm::errs() << "loom-calibrate: rank " << rank << ": error: " << error
                   << "\n";
      return 1;
    }
  }
  if (rank != 0)
    return 0;

  ClusterSpec spec = makeSpec(std::move(calibration), ranks);
  std::string text = printClusterSpec(spec);
  ValueOrError<ClusterSpec> check = parseClusterSpec(text, outputPath);
  if (!check) {
    llvm::errs() << "loom-calibrate: error: the measured spec does not "
                    "validate: "
                 << check.error() << "\n";
    return 1;
  }
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file || std::rename(temporary.c_str(), outputPath.c_str()) != 0) {
      std::remove(temporary.c_str());
      llvm::errs() << "loom-calibrate: error: cannot write `" << outputPath
                   << "`\n";
      return 1;
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  llvm::outs() << "wrote " << outputPath << " (" << spec.name << ", " << ranks
               << (ranks == 1 ? " rank" : " ranks") << ") in "
               << llvm::format("%.1f", seconds) << " s\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Loom calibration: measures this machine's GEMM, attention, memory and "
      "collective rates as `mpirun -np N` ranks see them and writes a cluster "
      "spec with the curves (docs/CostModel.md)\n");
  if (auto repeated = loom::support::findRepeatedFlag()) {
    llvm::errs() << "loom-calibrate: error: " << *repeated << "\n";
    return 1;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = run(rank, ranks);
  // A failing rank fails the whole job alike.
  int worst = status;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}

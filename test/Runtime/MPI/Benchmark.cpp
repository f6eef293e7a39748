//===- Benchmark.cpp - Time the MPI communicator's collectives ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Measures (it asserts nothing; the numbers go to docs/Runtime.md):
//
//   mpirun -np 4 loom-mpi-bench --mesh a=4 --bytes 67108864 [--iterations 5]
//
// For a float tensor of --bytes per rank over the whole mesh it times, after
// one warm-up call each: all_reduce sum with both deterministic schedules,
// MPI_Allreduce itself (unordered sums: the price of determinism),
// reduce_scatter, all_gather (of a 1/n-size operand, so the result has
// --bytes) and all_to_all. Rank 0 prints the median time per call and the
// bus bandwidth (bytes each rank must move for the algorithm, over time).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/MPI/Communicator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using loom::runtime::Shape;
using loom::runtime::mpi::AxisList;
using loom::runtime::mpi::Communicator;
using loom::runtime::mpi::CommunicatorOptions;
using loom::runtime::mpi::DeviceMesh;
using loom::runtime::mpi::ReduceKind;
using loom::runtime::mpi::Status;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string meshText = "a=4";
  int64_t bytes = 64 << 20;
  int iterations = 5;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string flag = argv[a];
    if (flag == "--mesh")
      meshText = argv[a + 1];
    else if (flag == "--bytes")
      bytes = std::atoll(argv[a + 1]);
    else if (flag == "--iterations")
      iterations = std::max(1, std::atoi(argv[a + 1]));
  }
  DeviceMesh mesh;
  std::unique_ptr<Communicator> gather, chunked;
  CommunicatorOptions gatherOptions, chunkedOptions;
  gatherOptions.gatherReduceMaxBytes = int64_t(1) << 62;
  chunkedOptions.gatherReduceMaxBytes = 0;
  Status status = DeviceMesh::parse(meshText, mesh);
  if (status.ok())
    status = Communicator::create(mesh, gather, gatherOptions);
  if (status.ok())
    status = Communicator::create(mesh, chunked, chunkedOptions);
  if (!status.ok()) {
    std::fprintf(stderr, "loom-mpi-bench: rank %d: error: %s\n", rank,
                 status.message().c_str());
    MPI_Finalize();
    return 1;
  }
  AxisList all;
  for (const auto &axis : mesh.getAxes())
    all.push_back(axis.name);
  int64_t n = mesh.getNumDevices();
  int64_t count = bytes / 4 / n * n;
  Shape shape{count}, piece{count / n};
  std::vector<float> in(count), out(count);
  for (int64_t i = 0; i < count; ++i)
    in[i] = static_cast<float>((i * 7 + rank) % 101) * 0.01f;

  auto time = [&](const char *name, double busFactor,
                  const std::function<Status()> &call) {
    std::vector<double> seconds;
    for (int it = 0; it <= iterations; ++it) {
      MPI_Barrier(MPI_COMM_WORLD);
      double start = MPI_Wtime();
      Status s = call();
      double elapsed = MPI_Wtime() - start;
      if (!s.ok())
        gather->abort(s);
      double slowest = 0;
      MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (it > 0) // the first call warms up
        seconds.push_back(slowest);
    }
    std::sort(seconds.begin(), seconds.end());
    double median = seconds[seconds.size() / 2];
    if (rank == 0)
      std::printf("%-28s %10.2f ms  bus %7.2f GB/s\n", name, median * 1e3,
                  busFactor * static_cast<double>(count * 4) / median / 1e9);
  };
  if (rank == 0)
    std::printf("mesh %s, %lld ranks, %lld bytes of f32 per rank, median of "
                "%d\n",
                mesh.toString().c_str(), static_cast<long long>(n),
                static_cast<long long>(count * 4), iterations);
  double ring = 2.0 * (n - 1) / n, once = 1.0 * (n - 1) / n;
  time("all_reduce sum (gather)", ring, [&] {
    return gather->allReduce(in.data(), shape, all, ReduceKind::Sum,
                             out.data());
  });
  time("all_reduce sum (chunked)", ring, [&] {
    return chunked->allReduce(in.data(), shape, all, ReduceKind::Sum,
                              out.data());
  });
  time("MPI_Allreduce (unordered)", ring, [&] {
    int code = MPI_Allreduce(in.data(), out.data(), static_cast<int>(count),
                             MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    return code == MPI_SUCCESS ? Status::success()
                               : Status::failure("MPI_Allreduce failed");
  });
  time("reduce_scatter", once, [&] {
    return chunked->reduceScatter(in.data(), shape, all, 0, out.data());
  });
  time("all_gather", once, [&] {
    return chunked->allGather(in.data(), piece, all, 0, out.data());
  });
  time("all_to_all", once, [&] {
    return chunked->allToAll(in.data(), shape, all, 0, 0, out.data());
  });
  gather.reset();
  chunked.reset();
  MPI_Finalize();
  return 0;
}

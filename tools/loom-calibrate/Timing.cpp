//===- Timing.cpp - Timing a kernel on every rank at once -----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "Timing.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace loom::calibrate {

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double timeOnAllRanks(const std::function<void()> &kernel,
                      const TimingBudget &budget) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = now();
  kernel(); // Warm-up: first touch of the buffers, BLAS's own setup.
  double once = std::max(now() - start, 1e-9);
  double calls = std::ceil(budget.batchSeconds / once);
  double agreed = 1;
  MPI_Allreduce(&calls, &agreed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long count = static_cast<long>(std::min(agreed, 1e7));
  std::vector<double> perCall;
  for (int b = 0; b < budget.batches; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    double begin = now();
    for (long i = 0; i < count; ++i)
      kernel();
    double mine = (now() - begin) / double(count), slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    perCall.push_back(slowest);
  }
  std::sort(perCall.begin(), perCall.end());
  return perCall[perCall.size() / 2];
}

} // namespace loom::calibrate

//===- CollectiveFits.cpp - α–β of collectives per group size -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "CollectiveFits.h"

#include "loom/Runtime/MPI/Communicator.h"

#include <mpi.h>

#include <algorithm>
#include <memory>

using mlir::loom::dist::CollectiveFit;
using mlir::loom::dist::fitAlphaBeta;
namespace rt = loom::runtime;
namespace mpi = loom::runtime::mpi;

namespace loom::calibrate {

namespace {

/// One group of the world: the mesh axes that form it and its size.
struct Group {
  mpi::AxisList axes;
  int64_t size;
};

std::string
measureOnMesh(const mpi::DeviceMesh &mesh, const std::vector<Group> &groups,
              const std::vector<double> &bytes, const TimingBudget &budget,
              std::map<std::string, std::vector<CollectiveFit>> &fits) {
  std::unique_ptr<mpi::Communicator> comm;
  if (mpi::Status status = mpi::Communicator::create(mesh, comm); !status)
    return status.message();
  int64_t largest = int64_t(bytes.back() / sizeof(float));
  std::vector<float> in(largest, 1.0f), out(largest);
  mpi::Status failure = mpi::Status::success();
  auto check = [&](mpi::Status status) {
    if (!status && failure)
      failure = std::move(status);
  };
  for (const Group &group : groups) {
    std::map<std::string, std::vector<double>> times;
    for (double size : bytes) {
      // Elements per device, a multiple of the group size (scatters split).
      int64_t count = std::max<int64_t>(group.size, int64_t(size / 4));
      count -= count % group.size;
      std::vector<int64_t> whole = {count}, piece = {count / group.size};
      const mpi::AxisList &axes = group.axes;
      auto time = [&](const std::function<void()> &kernel) {
        return timeOnAllRanks(kernel, budget);
      };
      times["all_reduce"].push_back(time([&] {
        check(comm->allReduce(in.data(), whole, axes, rt::ReduceKind::Sum,
                              out.data()));
      }));
      times["all_gather"].push_back(time([&] {
        check(comm->allGather(in.data(), piece, axes, 0, out.data()));
      }));
      times["reduce_scatter"].push_back(time([&] {
        check(comm->reduceScatter(in.data(), whole, axes, 0, out.data()));
      }));
      times["all_to_all"].push_back(time([&] {
        check(comm->allToAll(in.data(), whole, axes, 0, 0, out.data()));
      }));
      if (group.size == 2) {
        int64_t index = 0;
        check(comm->axisIndex(axes.back(), index));
        int64_t partner = 0;
        check(comm->peer(axes.back(), 1 - index, partner));
        times["send_recv"].push_back(time([&] {
          check(comm->send(in.data(), whole, partner, 1));
          check(comm->recv(out.data(), whole, partner, 1));
          check(comm->waitSends());
        }));
      }
      if (!failure)
        return failure.message();
    }
    for (auto &[name, seconds] : times) {
      CollectiveFit fit = fitAlphaBeta(bytes, seconds);
      fit.groupSize = group.size;
      fits[name].push_back(fit);
    }
  }
  return "";
}

} // namespace

std::string
measureCollectives(const std::vector<double> &bytes, const TimingBudget &budget,
                   std::map<std::string, std::vector<CollectiveFit>> &fits) {
  int worldSize = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (worldSize < 2)
    return "";
  mpi::DeviceMesh mesh;
  std::vector<Group> groups;
  mpi::Status made = mpi::Status::success();
  if (worldSize > 2 && worldSize % 2 == 0) {
    made = mpi::DeviceMesh::create({{"o", worldSize / 2}, {"i", 2}}, mesh);
    groups = {{{"i"}, 2}, {{"o", "i"}, worldSize}};
  } else {
    made = mpi::DeviceMesh::create({{"x", worldSize}}, mesh);
    groups = {{{"x"}, worldSize}};
  }
  if (!made)
    return made.message();
  return measureOnMesh(mesh, groups, bytes, budget, fits);
}

} // namespace loom::calibrate

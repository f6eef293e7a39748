//===- CrossCheck.cpp - The NCCL communicator against the MPI one ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `mpirun -np N loom-nccl-crosscheck --mesh a=2,b=2`: one process per GPU.
// For every ordered list of mesh axes (so group orders that differ from
// NCCL's rank order are covered), every collective, every dim of a rank-3
// tensor and both float types, each rank runs the call through the MPI
// communicator on host data and through the NCCL communicator on the same
// data on its GPU, and compares (exactly for moves, within 1e-12 / 1e-5
// relative for sums, whose order NCCL chooses). Invalid calls fail on both
// with the same message (the communicators share one argument contract),
// including the checks NCCL did not make before it: shapes, peers and tags of
// send/recv, and empty axis lists. Prints "nccl crosscheck: N checks passed"
// on rank 0, or the first failure of each rank and exits 1.
// Needs as many GPUs as ranks (NCCL refuses two ranks on one device).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/CUDA/Check.h"
#include "loom/Runtime/MPI/Communicator.h"
#include "loom/Runtime/NCCL/Communicator.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace loom::runtime;

namespace {

struct Checks {
  int64_t count = 0;
  std::string firstFailure;

  template <typename T>
  void expectClose(const std::vector<T> &got, const std::vector<T> &expected,
                   double rtol, const std::string &what) {
    ++count;
    if (!firstFailure.empty())
      return;
    if (got.size() != expected.size()) {
      firstFailure = what + ": size " + std::to_string(got.size()) +
                     " != " + std::to_string(expected.size());
      return;
    }
    for (size_t i = 0; i < got.size(); ++i)
      if (std::abs(static_cast<double>(got[i]) - expected[i]) >
          rtol * std::max(1.0, std::abs(static_cast<double>(expected[i])))) {
        firstFailure = what + ": element " + std::to_string(i) + " is " +
                       std::to_string(got[i]) + ", expected " +
                       std::to_string(expected[i]);
        return;
      }
  }
  void fail(const std::string &what) {
    ++count;
    if (firstFailure.empty())
      firstFailure = what;
  }
};

template <typename T> struct Device {
  T *data = nullptr;
  size_t count;
  explicit Device(const std::vector<T> &values) : count(values.size()) {
    LOOM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&data),
                               std::max<size_t>(count, 1) * sizeof(T)));
    LOOM_CUDA_CHECK(cudaMemcpy(data, values.data(), count * sizeof(T),
                               cudaMemcpyHostToDevice));
  }
  ~Device() { cudaFree(data); }
  std::vector<T> download() const {
    LOOM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> values(count);
    LOOM_CUDA_CHECK(cudaMemcpy(values.data(), data, count * sizeof(T),
                               cudaMemcpyDeviceToHost));
    return values;
  }
};

/// Every ordered list of distinct axes, the empty one excluded.
void orderedLists(const std::vector<std::string> &axes, mpi::AxisList &prefix,
                  std::vector<mpi::AxisList> &out) {
  for (const std::string &axis : axes) {
    if (std::find(prefix.begin(), prefix.end(), axis) != prefix.end())
      continue;
    prefix.push_back(axis);
    out.push_back(prefix);
    orderedLists(axes, prefix, out);
    prefix.pop_back();
  }
}

template <typename T>
void crossCheck(mpi::Communicator &host, nccl::Communicator &device,
                const mpi::DeviceMesh &mesh, int64_t rank, Checks &checks) {
  double rtol = std::is_same_v<T, double> ? 1e-12 : 1e-5;
  std::vector<std::string> names;
  for (const auto &axis : mesh.getAxes())
    names.push_back(axis.name);
  std::vector<mpi::AxisList> lists;
  mpi::AxisList prefix;
  orderedLists(names, prefix, lists);
  std::mt19937_64 engine(1234 + rank);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (const mpi::AxisList &axes : lists) {
    int64_t n = mesh.getGroupSize(axes);
    // Every dim divisible by the group size, twice over for all_to_all.
    Shape shape = {2 * n, 3 * n, n};
    std::vector<T> in(numElements(shape));
    for (T &v : in)
      v = static_cast<T>(dist(engine));
    Device<T> din(in);
    std::string over = " over " + mpi::formatAxes(axes);
    auto run = [&](const std::string &what, size_t outCount, auto hostCall,
                   auto deviceCall, double tolerance) {
      std::vector<T> expected(outCount);
      Device<T> dout{std::vector<T>(outCount)};
      mpi::Status hs = hostCall(expected.data());
      nccl::Status ds = deviceCall(dout.data);
      if (!hs.ok() || !ds.ok()) {
        checks.fail(what + over + ": " + hs.message() + ds.message());
        return;
      }
      checks.expectClose(dout.download(), expected, tolerance, what + over);
    };
    size_t count = in.size();
    for (auto kind : {mpi::ReduceKind::Sum, mpi::ReduceKind::Max})
      run(
          "all_reduce", count,
          [&](T *out) {
            return host.allReduce(in.data(), shape, axes, kind, out);
          },
          [&](T *out) {
            return device.allReduce(din.data, shape, axes,
                                    kind == mpi::ReduceKind::Sum
                                        ? nccl::ReduceKind::Sum
                                        : nccl::ReduceKind::Max,
                                    out);
          },
          kind == mpi::ReduceKind::Sum ? rtol : 0.0);
    for (int64_t dim = 0; dim < 3; ++dim) {
      run(
          "all_gather dim " + std::to_string(dim), count * n,
          [&](T *out) {
            return host.allGather(in.data(), shape, axes, dim, out);
          },
          [&](T *out) {
            return device.allGather(din.data, shape, axes, dim, out);
          },
          0.0);
      run(
          "all_slice dim " + std::to_string(dim), count / n,
          [&](T *out) {
            return host.allSlice(in.data(), shape, axes, dim, out);
          },
          [&](T *out) {
            return device.allSlice(din.data, shape, axes, dim, out);
          },
          0.0);
      run(
          "reduce_scatter dim " + std::to_string(dim), count / n,
          [&](T *out) {
            return host.reduceScatter(in.data(), shape, axes, dim, out);
          },
          [&](T *out) {
            return device.reduceScatter(din.data, shape, axes, dim, out);
          },
          rtol);
      for (int64_t concat = 0; concat < 3; ++concat)
        run(
            "all_to_all " + std::to_string(dim) + "->" + std::to_string(concat),
            count,
            [&](T *out) {
              return host.allToAll(in.data(), shape, axes, dim, concat, out);
            },
            [&](T *out) {
              return device.allToAll(din.data, shape, axes, dim, concat, out);
            },
            0.0);
    }
    for (int64_t shift : {int64_t(1), int64_t(-1), n + 1})
      run(
          "collective_permute shift " + std::to_string(shift), count,
          [&](T *out) {
            return host.collectivePermute(in.data(), shape, axes, shift, out);
          },
          [&](T *out) {
            return device.collectivePermute(din.data, shape, axes, shift, out);
          },
          0.0);
    run(
        "broadcast root " + std::to_string(n - 1), count,
        [&](T *out) {
          return host.broadcast(in.data(), shape, axes, n - 1, out);
        },
        [&](T *out) {
          return device.broadcast(din.data, shape, axes, n - 1, out);
        },
        0.0);
  }
  // send/recv around the ring of all ranks.
  int64_t size = mesh.getNumDevices();
  Shape shape = {5, 3};
  std::vector<T> in(15);
  for (T &v : in)
    v = static_cast<T>(rank * 100 + dist(engine));
  Device<T> din(in);
  Device<T> dout{std::vector<T>(15)};
  int64_t to = (rank + 1) % size, from = (rank + size - 1) % size;
  std::vector<T> expected(15);
  mpi::Status hs = host.send(in.data(), shape, to, 0);
  if (hs.ok())
    hs = host.recv(expected.data(), shape, from, 0);
  if (hs.ok())
    hs = host.waitSends();
  // Every rank sends before it receives: NCCL's rendezvous sends would all
  // wait, but the communicator queues them and posts them with the receive.
  nccl::Status ds = device.send(din.data, shape, to, 0);
  if (ds.ok())
    ds = device.recv(dout.data, shape, from, 0);
  if (ds.ok())
    ds = device.synchronize();
  if (!hs.ok() || !ds.ok())
    checks.fail("send/recv: " + hs.message() + ds.message());
  else
    checks.expectClose(dout.download(), expected, 0.0, "send/recv");

  if (size < 2)
    return;
  // Tags: each rank sends two tensors (tags 1, 2) and receives them in the
  // other order; the step's table says what `from` sends, so tag 2 arrives
  // first and tag 1 waits in the stash.
  std::vector<T> second(15);
  for (T &v : second)
    v = static_cast<T>(rank * 1000 + dist(engine));
  Device<T> dsecond(second);
  Device<T> dfirst{std::vector<T>(15)}, dlast{std::vector<T>(15)};
  std::vector<T> expectedFirst(15), expectedLast(15);
  hs = host.send(in.data(), shape, to, 1);
  if (hs.ok())
    hs = host.send(second.data(), shape, to, 2);
  if (hs.ok())
    hs = host.recv(expectedFirst.data(), shape, from, 2);
  if (hs.ok())
    hs = host.recv(expectedLast.data(), shape, from, 1);
  if (hs.ok())
    hs = host.waitSends();
  const nccl::Message table[] = {nccl::Message::of<T>(from, 1, 15),
                                 nccl::Message::of<T>(from, 2, 15)};
  ds = device.beginStep(table, 2);
  if (ds.ok())
    ds = device.send(din.data, shape, to, 1);
  if (ds.ok())
    ds = device.send(dsecond.data, shape, to, 2);
  if (ds.ok())
    ds = device.recv(dfirst.data, shape, from, 2);
  if (ds.ok())
    ds = device.recv(dlast.data, shape, from, 1);
  if (ds.ok())
    ds = device.synchronize();
  if (!hs.ok() || !ds.ok()) {
    checks.fail("tagged send/recv: " + hs.message() + ds.message());
  } else {
    checks.expectClose(dfirst.download(), expectedFirst, 0.0,
                       "send/recv tag 2 (received first)");
    checks.expectClose(dlast.download(), expectedLast, 0.0,
                       "send/recv tag 1 (from the stash)");
  }

  // A table message no recv takes is an error at the step's end, and a
  // step cannot start before the previous one ended.
  const nccl::Message declared[] = {nccl::Message::of<T>(from, 7, 15),
                                    nccl::Message::of<T>(from, 8, 15)};
  ds = device.beginStep(declared, 2);
  if (ds.ok())
    ds = device.send(din.data, shape, to, 7);
  if (ds.ok())
    ds = device.recv(dfirst.data, shape, from, 7);
  nccl::Status again = device.beginStep(declared, 2);
  nccl::Status end = device.synchronize();
  if (!ds.ok())
    checks.fail("send/recv tag 7: " + ds.message());
  else if (again.ok() || again.message().find("before the previous one "
                                              "ended") == std::string::npos)
    checks.fail("beginStep before synchronize: got '" + again.message() + "'");
  else if (end.ok() ||
           end.message().find("message tag 8 from rank " +
                              std::to_string(from)) == std::string::npos)
    checks.fail("an undelivered message: synchronize said '" + end.message() +
                "'");
  else
    ++checks.count;
}

/// Invalid calls fail alike on both communicators, with the contract's
/// message (`expected` is part of it), before any traffic.
void invalidCalls(mpi::Communicator &host, nccl::Communicator &device,
                  const mpi::DeviceMesh &mesh, Checks &checks) {
  const std::string first = mesh.getAxes()[0].name;
  int64_t n = mesh.getAxes()[0].size;
  Shape shape{2 * n, 3};
  std::vector<float> in(2 * n * 3 * n), out(in.size());
  Device<float> din(in), dout(out);
  auto expectSame = [&](const std::string &what, const Status &hs,
                        const Status &ds, const std::string &expected) {
    if (hs.ok() || ds.ok())
      checks.fail(what + ": expected both to fail, MPI said '" + hs.message() +
                  "', NCCL said '" + ds.message() + "'");
    else if (hs.message() != ds.message())
      checks.fail(what + ": MPI said '" + hs.message() + "', NCCL said '" +
                  ds.message() + "'");
    else if (ds.message().find(expected) == std::string::npos)
      checks.fail(what + ": said '" + ds.message() + "', expected '" +
                  expected + "'");
    else
      ++checks.count;
  };
  expectSame("unknown axis",
             host.allGather(in.data(), shape, {"nope"}, 0, out.data()),
             device.allGather(din.data, shape, {"nope"}, 0, dout.data),
             "`nope` is not an axis of mesh");
  expectSame("empty axis list",
             host.allReduce(in.data(), shape, {}, ReduceKind::Sum, out.data()),
             device.allReduce(din.data, shape, {}, ReduceKind::Sum, dout.data),
             "a collective needs at least one mesh axis");
  Shape odd{2 * n, n + 1};
  expectSame("indivisible reduce_scatter",
             host.reduceScatter(in.data(), odd, {first}, 1, out.data()),
             device.reduceScatter(din.data, odd, {first}, 1, dout.data),
             "does not divide dim 1");
  expectSame("concat dim out of range",
             host.allToAll(in.data(), shape, {first}, 0, 2, out.data()),
             device.allToAll(din.data, shape, {first}, 0, 2, dout.data),
             "concat dim 2 is out of range");
  expectSame("root out of range",
             host.broadcast(in.data(), shape, {first}, n, out.data()),
             device.broadcast(din.data, shape, {first}, n, dout.data),
             "root " + std::to_string(n) + " is outside the group of");
  expectSame("negative dim in a send", host.send(in.data(), Shape{-1}, 0, 0),
             device.send(din.data, Shape{-1}, 0, 0), "has a negative dim 0");
  int64_t ranks = mesh.getNumDevices();
  expectSame("send to a rank outside the mesh",
             host.send(in.data(), shape, ranks, 0),
             device.send(din.data, shape, ranks, 0),
             "rank " + std::to_string(ranks) + " is outside the");
  expectSame("negative tag", host.recv(out.data(), shape, 0, -1),
             device.recv(dout.data, shape, 0, -1),
             "tag -1 is outside [0, 32767]");
  expectSame("tag above kMaxTag", host.send(in.data(), shape, 0, kMaxTag + 1),
             device.send(din.data, shape, 0, kMaxTag + 1),
             "tag 32768 is outside [0, 32767]");
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  std::string meshText = "a=2,b=2";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--mesh") == 0)
      meshText = argv[i + 1];
  mpi::DeviceMesh mesh;
  if (mpi::Status s = mpi::DeviceMesh::parse(meshText, mesh); !s) {
    std::fprintf(stderr, "loom-nccl-crosscheck: %s\n", s.message().c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::unique_ptr<mpi::Communicator> host;
  if (mpi::Status s = mpi::Communicator::create(mesh, host); !s) {
    std::fprintf(stderr, "loom-nccl-crosscheck: %s\n", s.message().c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int64_t rank = host->getRank();
  int devices = 0;
  LOOM_CUDA_CHECK(cudaGetDeviceCount(&devices));
  LOOM_CUDA_CHECK(cudaSetDevice(static_cast<int>(rank % devices)));
  cudaStream_t stream;
  LOOM_CUDA_CHECK(cudaStreamCreate(&stream));
  std::unique_ptr<nccl::Communicator> device;
  if (nccl::Status s = nccl::Communicator::create(mesh, stream, device); !s)
    host->abort(s);

  Checks checks;
  invalidCalls(*host, *device, mesh, checks);
  crossCheck<float>(*host, *device, mesh, rank, checks);
  crossCheck<double>(*host, *device, mesh, rank, checks);
  LOOM_CUDA_CHECK(cudaStreamSynchronize(stream));

  int failed = !checks.firstFailure.empty(), anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (failed)
    std::fprintf(stderr, "loom-nccl-crosscheck: rank %lld: %s\n",
                 static_cast<long long>(rank), checks.firstFailure.c_str());
  if (rank == 0 && !anyFailed)
    std::printf("nccl crosscheck: %lld checks passed, %zu group "
                "communicators\n",
                static_cast<long long>(checks.count),
                device->getNumGroupCommunicators());
  device.reset();
  host.reset();
  MPI_Finalize();
  return anyFailed ? 1 : 0;
}

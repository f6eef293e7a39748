//===- CrossCheck.cpp - MPI collectives against the interpreter's ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Runs, on 6 MPI ranks, the collectives of @collectives in crosscheck.mlir
// and compares each rank's results bit for bit with its block of the
// interpreter's outputs for the same inputs:
//
//   loom-run crosscheck.mlir --entry collectives --dtype f32 \
//       --inputs in.safetensors --outputs interp.safetensors
//   mpirun -np 6 loom-mpi-crosscheck --dtype f32 \
//       --inputs in.safetensors --expected interp.safetensors
//
// The table below restates the MLIR function (op, axes, attributes, result
// layout); the two must be kept in step. Each result is computed with both
// all-reduce schedules (gather-and-fold and chunked). Rank 0 prints one line
// per result; the exit status is 1 when any rank differs.
//
//===----------------------------------------------------------------------===//

#include "MPITestSupport.h"

#include "loom/Runtime/IO/SafeTensors.h"
#include "loom/Runtime/MPI/Communicator.h"

#include <functional>
#include <memory>

using namespace loom::mpitest;
using loom::runtime::io::DType;
using loom::runtime::io::TensorData;
using loom::runtime::io::TensorMap;
using loom::runtime::mpi::Communicator;
using loom::runtime::mpi::CommunicatorOptions;
using loom::runtime::mpi::ReduceKind;
using loom::runtime::mpi::Status;

namespace {

/// The layout of a result: the axes splitting each dim.
using DimAxes = std::vector<AxisList>;

/// One result of @collectives.
template <typename T> struct Result {
  std::string name;
  Shape local;
  DimAxes layout;
  std::function<Status(Communicator &, const std::vector<T> &x,
                       const std::vector<T> &y, T *out)>
      compute;
};

template <typename T> std::vector<Result<T>> resultsOf() {
  using V = const std::vector<T> &;
  Shape x{2, 6, 4}, y{2, 6, 4};
  return {
      {"sum_b",
       {2, 6, 4},
       {{"a"}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.allReduce(xs.data(), x, {"b"}, ReduceKind::Sum, out);
       }},
      {"sum_ab",
       {2, 6, 4},
       {{}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.allReduce(xs.data(), x, {"a", "b"}, ReduceKind::Sum, out);
       }},
      {"sum_ba",
       {2, 6, 4},
       {{}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.allReduce(xs.data(), x, {"b", "a"}, ReduceKind::Sum, out);
       }},
      {"max_a",
       {2, 6, 4},
       {{"b"}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.allReduce(xs.data(), x, {"a"}, ReduceKind::Max, out);
       }},
      {"rs_b",
       {2, 2, 4},
       {{"a"}, {"b"}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.reduceScatter(xs.data(), x, {"b"}, 1, out);
       }},
      {"rs_a",
       {2, 6, 2},
       {{"b"}, {}, {"a"}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.reduceScatter(xs.data(), x, {"a"}, 2, out);
       }},
      {"ag_b",
       {2, 18, 4},
       {{"a"}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.allGather(xs.data(), x, {"b"}, 1, out);
       }},
      {"ag_ba",
       {2, 6, 24},
       {{}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.allGather(xs.data(), x, {"b", "a"}, 2, out);
       }},
      {"a2a_ab",
       {12, 1, 4},
       {{}, {"a", "b"}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.allToAll(xs.data(), x, {"a", "b"}, 1, 0, out);
       }},
      {"a2a_b",
       {2, 2, 12},
       {{"a"}, {"b"}, {}},
       [=](Communicator &c, V, V ys, T *out) {
         return c.allToAll(ys.data(), y, {"b"}, 1, 2, out);
       }},
      {"perm_b",
       {2, 6, 4},
       {{"a", "b"}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.collectivePermute(xs.data(), x, {"b"}, int64_t(1), out);
       }},
      {"perm_ba",
       {2, 6, 4},
       {{"a", "b"}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.collectivePermute(xs.data(), x, {"b", "a"}, int64_t(4), out);
       }},
      {"bcast_a",
       {2, 6, 4},
       {{"b"}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.broadcast(xs.data(), x, {"a"}, 1, out);
       }},
      {"slice_b",
       {2, 2, 4},
       {{"a", "b"}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         return c.allSlice(xs.data(), x, {"b"}, 1, out);
       }},
      {"recv_a",
       {2, 6, 4},
       {{"a", "b"}, {}, {}},
       [=](Communicator &c, V xs, V, T *out) {
         // dist.send ... axis "a" to 1; dist.recv ... axis "a" from 0.
         int64_t to = 0, from = 0;
         if (Status s = c.peer("a", 1, to); !s.ok())
           return s;
         if (Status s = c.peer("a", 0, from); !s.ok())
           return s;
         if (Status s = c.send(xs.data(), x, to, 0); !s.ok())
           return s;
         if (Status s = c.recv(out, x, from, 0); !s.ok())
           return s;
         return c.waitSends();
       }},
  };
}

template <typename T> std::vector<T> valuesOf(const TensorData &tensor) {
  std::vector<T> values(tensor.numElements());
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

/// Runs every result on this rank; returns the number of mismatches over all
/// ranks.
template <typename T>
int run(const DeviceMesh &mesh, int rank, const TensorMap &inputs,
        const TensorMap &expected, DType dtype, Communicator &gatherComm,
        Communicator &chunkedComm) {
  Shape offset, local;
  std::vector<T> xGlobal = valuesOf<T>(inputs.at("x"));
  blockOf(mesh, rank, {{"a", "b"}, {}, {}}, inputs.at("x").shape, offset,
          local);
  std::vector<T> x = extract(xGlobal, inputs.at("x").shape, offset, local);
  std::vector<T> yGlobal = valuesOf<T>(inputs.at("y"));
  blockOf(mesh, rank, {{"a"}, {}, {"b"}}, inputs.at("y").shape, offset, local);
  std::vector<T> y = extract(yGlobal, inputs.at("y").shape, offset, local);

  int mismatches = 0;
  for (const Result<T> &result : resultsOf<T>()) {
    std::string problem;
    auto it = expected.find(result.name);
    if (it == expected.end() || it->second.dtype != dtype)
      problem = "the expected file has no " +
                std::string(loom::runtime::io::dtypeName(dtype)) + " tensor `" +
                result.name + "`";
    std::vector<T> want;
    if (problem.empty()) {
      blockOf(mesh, rank, result.layout, it->second.shape, offset, local);
      if (local != result.local)
        problem = "the interpreter's tensor has shape " +
                  loom::runtime::mpi::formatShape(it->second.shape) +
                  ", which does not give local shape " +
                  loom::runtime::mpi::formatShape(result.local);
      else
        want =
            extract(valuesOf<T>(it->second), it->second.shape, offset, local);
    }
    for (Communicator *comm : {&gatherComm, &chunkedComm}) {
      if (!problem.empty())
        break;
      std::vector<T> got(numElements(result.local));
      Status status = result.compute(*comm, x, y, got.data());
      if (!status.ok())
        problem = status.message();
      else if (std::string d = compareBits(got, want); !d.empty())
        problem = d + (comm == &chunkedComm ? " (chunked schedule)" : "");
    }
    int mine = !problem.empty(), total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (mine)
      std::fprintf(stderr, "rank %d: %s: %s\n", rank, result.name.c_str(),
                   problem.c_str());
    if (rank == 0)
      std::printf("%s: %s\n", result.name.c_str(),
                  total ? "MISMATCH" : "bit-identical on every rank");
    mismatches += total;
  }
  return mismatches;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string dtypeText = "f64", inputsPath, expectedPath;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string flag = argv[a];
    if (flag == "--dtype")
      dtypeText = argv[a + 1];
    else if (flag == "--inputs")
      inputsPath = argv[a + 1];
    else if (flag == "--expected")
      expectedPath = argv[a + 1];
  }
  // Every rank reads the same files, so every rank fails alike.
  auto fail = [&](const std::string &message) {
    std::fprintf(stderr, "loom-mpi-crosscheck: rank %d: error: %s\n", rank,
                 message.c_str());
    MPI_Finalize();
    return 1;
  };
  if (inputsPath.empty() || expectedPath.empty() ||
      (dtypeText != "f32" && dtypeText != "f64"))
    return fail("usage: loom-mpi-crosscheck --dtype f32|f64 --inputs FILE "
                "--expected FILE");
  TensorMap inputs, expected;
  if (auto error = loom::runtime::io::readSafeTensors(inputsPath, inputs))
    return fail(*error);
  if (auto error = loom::runtime::io::readSafeTensors(expectedPath, expected))
    return fail(*error);
  DType dtype = dtypeText == "f32" ? DType::F32 : DType::F64;
  for (const char *name : {"x", "y"})
    if (!inputs.count(name) || inputs.at(name).dtype != dtype)
      return fail(inputsPath + " has no " + dtypeText + " tensor `" + name +
                  "`");

  DeviceMesh mesh;
  std::unique_ptr<Communicator> gatherComm, chunkedComm;
  CommunicatorOptions chunked;
  chunked.gatherReduceMaxBytes = 0;
  if (Status s = DeviceMesh::parse("a=2,b=3", mesh); !s.ok())
    return fail(s.message());
  if (Status s = Communicator::create(mesh, gatherComm); !s.ok())
    return fail(s.message());
  if (Status s = Communicator::create(mesh, chunkedComm, chunked); !s.ok())
    return fail(s.message());
  int mismatches = dtype == DType::F32
                       ? run<float>(mesh, rank, inputs, expected, dtype,
                                    *gatherComm, *chunkedComm)
                       : run<double>(mesh, rank, inputs, expected, dtype,
                                     *gatherComm, *chunkedComm);
  gatherComm.reset();
  chunkedComm.reset();
  MPI_Finalize();
  return mismatches ? 1 : 0;
}

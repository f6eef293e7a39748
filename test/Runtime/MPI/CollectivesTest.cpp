//===- CollectivesTest.cpp - Every collective on real MPI ranks -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Run under mpirun with one process per device of `--mesh`:
//
//   mpirun -np 6 loom-mpi-collectives-test --mesh a=2,b=3 [--junit FILE]
//
// Each case runs one collective for one element type over every ordered,
// non-empty list of mesh axes and every dim (or attribute) it takes, on
// rank-3 tensors. Every rank builds every member's operand deterministically
// (MPITestSupport.h), computes its expected result from the mesh definitions
// by index arithmetic (not with the communicator's packing code), and
// compares bit for bit. Sums are folded in group order in T, which is what
// the interpreter does; the sum cases also check that the data tells that
// order from another (or the comparison would prove nothing).
//
// Rank 0 prints `PASS name` / `FAIL name: detail` per case (a case fails when
// it fails on any rank), writes JUnit XML with --junit, and every rank exits
// 1 when a case failed.
//
// `--abort-on-rank R` instead shows how a failure that strikes one rank
// ends the job: rank R calls Communicator::abort while the others wait in an
// all_reduce; mpirun must stop them all (no hang) with a non-zero status.
//
//===----------------------------------------------------------------------===//

#include "MPITestSupport.h"

#include "loom/Runtime/MPI/Communicator.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>

using namespace loom::mpitest;
using loom::runtime::mpi::Communicator;
using loom::runtime::mpi::CommunicatorOptions;
using loom::runtime::mpi::ReduceKind;
using loom::runtime::mpi::Status;

namespace {

/// What a case records on this rank.
struct Checks {
  int64_t count = 0;
  std::string firstFailure;

  void fail(const std::string &what) {
    if (firstFailure.empty())
      firstFailure = what;
  }
  /// Records a comparison; `what` describes the call.
  template <typename T>
  void expectBits(const std::vector<T> &got, const std::vector<T> &expected,
                  const std::string &what) {
    ++count;
    std::string difference = compareBits(got, expected);
    if (!difference.empty())
      fail(what + ": " + difference);
  }
  void expectOk(const Status &status, const std::string &what) {
    ++count;
    if (!status.ok())
      fail(what + ": unexpected failure: " + status.message());
  }
  void expectFailure(const Status &status, const std::string &substring,
                     const std::string &what) {
    ++count;
    if (status.ok())
      fail(what + ": succeeded, expected a failure containing `" + substring +
           "`");
    else if (status.message().find(substring) == std::string::npos)
      fail(what + ": failed with `" + status.message() +
           "`, expected a message containing `" + substring + "`");
  }
};

struct Context {
  DeviceMesh mesh;
  int64_t rank;
  /// Default options: small all-reduces gather and fold.
  Communicator *comm;
  /// Every all-reduce takes the chunked two-round schedule.
  Communicator *chunked;
  /// verifyCalls on.
  Communicator *verifying;
  std::vector<AxisList> axisLists;
};

/// Every ordered list of distinct mesh axes, at least one long.
std::vector<AxisList> orderedAxisLists(const DeviceMesh &mesh) {
  std::vector<AxisList> lists;
  std::function<void(AxisList &)> extend = [&](AxisList &prefix) {
    if (!prefix.empty())
      lists.push_back(prefix);
    for (const auto &axis : mesh.getAxes()) {
      if (std::find(prefix.begin(), prefix.end(), axis.name) != prefix.end())
        continue;
      prefix.push_back(axis.name);
      extend(prefix);
      prefix.pop_back();
    }
  };
  AxisList empty;
  extend(empty);
  return lists;
}

template <typename T> const char *typeName() {
  if constexpr (std::is_same_v<T, float>)
    return "f32";
  else if constexpr (std::is_same_v<T, double>)
    return "f64";
  else
    return "i64";
}

template <typename T> T maxNaN(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
  return std::max(a, b);
}

/// Folds `values` first to last.
template <typename T>
T foldValues(const std::vector<T> &values, ReduceKind kind) {
  T acc = values[0];
  for (size_t j = 1; j < values.size(); ++j)
    acc = kind == ReduceKind::Sum ? T(acc + values[j]) : maxNaN(acc, values[j]);
  return acc;
}

/// A distinct salt per call, the same on every rank.
uint64_t saltOf(const std::string &what) {
  uint64_t hash = 1469598103934665603ull;
  for (char c : what)
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return hash;
}

std::string describeCall(const char *op, const AxisList &axes,
                         const std::string &attributes, const Shape &shape) {
  return std::string(op) + " over " + loom::runtime::mpi::formatAxes(axes) +
         (attributes.empty() ? "" : " " + attributes) + " on " +
         loom::runtime::mpi::formatShape(shape);
}

/// The shapes of the cases: `odd` for the ops that need no divisibility,
/// `even` (every dim divisible by the device count) for the others.
Shape oddShape() { return {3, 5, 2}; }
Shape evenShape(const DeviceMesh &mesh) {
  int64_t n = mesh.getNumDevices();
  return {n, 2 * n, n};
}

/// The operands of every member of `rank`'s group, in group order.
template <typename T>
std::vector<std::vector<T>>
memberTensors(const Context &ctx, const AxisList &axes, const Shape &shape,
              uint64_t salt, bool specials = false) {
  std::vector<std::vector<T>> tensors;
  for (int64_t member : ctx.mesh.getGroup(ctx.rank, axes))
    tensors.push_back(tensorOf<T>(member, shape, salt, specials));
  return tensors;
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

template <typename T> void allGatherCase(Context &ctx, Checks &checks) {
  for (const AxisList &axes : ctx.axisLists)
    for (const Shape &shape : {oddShape(), evenShape(ctx.mesh)})
      for (int64_t dim = 0; dim < 3; ++dim) {
        std::string what = describeCall("all_gather", axes,
                                        "dim " + std::to_string(dim), shape);
        uint64_t salt = saltOf(what);
        auto inputs = memberTensors<T>(ctx, axes, shape, salt);
        int64_t n = static_cast<int64_t>(inputs.size());
        int64_t i = ctx.mesh.getGroupIndex(ctx.rank, axes);
        Shape outShape = shape;
        outShape[dim] *= n;
        std::vector<T> expected(numElements(outShape));
        for (int64_t o = 0; o < static_cast<int64_t>(expected.size()); ++o) {
          std::vector<int64_t> index = unravel(o, outShape);
          int64_t member = index[dim] / shape[dim];
          index[dim] %= shape[dim];
          expected[o] = inputs[member][ravel(index, shape)];
        }
        std::vector<T> got(expected.size());
        checks.expectOk(
            ctx.comm->allGather(inputs[i].data(), shape, axes, dim, got.data()),
            what);
        checks.expectBits(got, expected, what);
      }
}

template <typename T> void allSliceCase(Context &ctx, Checks &checks) {
  Shape shape = evenShape(ctx.mesh);
  for (const AxisList &axes : ctx.axisLists)
    for (int64_t dim = 0; dim < 3; ++dim) {
      std::string what =
          describeCall("all_slice", axes, "dim " + std::to_string(dim), shape);
      std::vector<T> input = tensorOf<T>(ctx.rank, shape, saltOf(what));
      int64_t n = ctx.mesh.getGroupSize(axes);
      int64_t i = ctx.mesh.getGroupIndex(ctx.rank, axes);
      Shape outShape = shape;
      outShape[dim] /= n;
      std::vector<T> expected(numElements(outShape));
      for (int64_t o = 0; o < static_cast<int64_t>(expected.size()); ++o) {
        std::vector<int64_t> index = unravel(o, outShape);
        index[dim] += i * outShape[dim];
        expected[o] = input[ravel(index, shape)];
      }
      std::vector<T> got(expected.size());
      checks.expectOk(
          ctx.comm->allSlice(input.data(), shape, axes, dim, got.data()), what);
      checks.expectBits(got, expected, what);
    }
}

/// All-reduces over every axis list with `comm`. For float sums, counts the
/// elements whose bits depend on the order of the fold.
template <typename T>
void allReduceCase(Context &ctx, Checks &checks, Communicator &comm,
                   ReduceKind kind, const char *label) {
  int64_t orderSensitive = 0;
  bool anyGroupOfThree = false;
  for (const AxisList &axes : ctx.axisLists)
    for (const Shape &shape :
         {oddShape(), evenShape(ctx.mesh), Shape{7, 1, 13}}) {
      std::string what = describeCall(label, axes, "", shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what),
                                     /*specials=*/kind == ReduceKind::Max);
      int64_t n = static_cast<int64_t>(inputs.size());
      int64_t i = ctx.mesh.getGroupIndex(ctx.rank, axes);
      anyGroupOfThree |= n >= 3;
      std::vector<T> expected(inputs[0].size());
      for (size_t e = 0; e < expected.size(); ++e) {
        std::vector<T> column;
        for (const auto &input : inputs)
          column.push_back(input[e]);
        expected[e] = foldValues(column, kind);
        std::reverse(column.begin(), column.end());
        T reversed = foldValues(column, kind);
        orderSensitive += std::memcmp(&reversed, &expected[e], sizeof(T)) != 0;
      }
      std::vector<T> got(expected.size());
      checks.expectOk(
          comm.allReduce(inputs[i].data(), shape, axes, kind, got.data()),
          what);
      checks.expectBits(got, expected, what);
    }
  // With three or more members the data must tell fold orders apart, or a
  // wrongly ordered sum would still pass.
  if (std::is_floating_point_v<T> && kind == ReduceKind::Sum &&
      anyGroupOfThree && orderSensitive == 0)
    checks.fail("no element's sum depends on the fold order: the data "
                "cannot tell the interpreter's order from another");
}

template <typename T> void reduceScatterCase(Context &ctx, Checks &checks) {
  int64_t orderSensitive = 0;
  bool anyGroupOfThree = false;
  Shape shape = evenShape(ctx.mesh);
  for (const AxisList &axes : ctx.axisLists)
    for (int64_t dim = 0; dim < 3; ++dim) {
      std::string what = describeCall("reduce_scatter", axes,
                                      "dim " + std::to_string(dim), shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
      int64_t n = static_cast<int64_t>(inputs.size());
      int64_t i = ctx.mesh.getGroupIndex(ctx.rank, axes);
      anyGroupOfThree |= n >= 3;
      Shape outShape = shape;
      outShape[dim] /= n;
      std::vector<T> expected(numElements(outShape));
      for (int64_t o = 0; o < static_cast<int64_t>(expected.size()); ++o) {
        std::vector<int64_t> index = unravel(o, outShape);
        index[dim] += i * outShape[dim];
        std::vector<T> column;
        for (const auto &input : inputs)
          column.push_back(input[ravel(index, shape)]);
        expected[o] = foldValues(column, ReduceKind::Sum);
        std::reverse(column.begin(), column.end());
        T reversed = foldValues(column, ReduceKind::Sum);
        orderSensitive += std::memcmp(&reversed, &expected[o], sizeof(T)) != 0;
      }
      std::vector<T> got(expected.size());
      checks.expectOk(ctx.comm->reduceScatter(inputs[i].data(), shape, axes,
                                              dim, got.data()),
                      what);
      checks.expectBits(got, expected, what);
    }
  if (std::is_floating_point_v<T> && anyGroupOfThree && orderSensitive == 0)
    checks.fail("no element's sum depends on the fold order");
}

template <typename T> void allToAllCase(Context &ctx, Checks &checks) {
  Shape shape = evenShape(ctx.mesh);
  for (const AxisList &axes : ctx.axisLists)
    for (int64_t split = 0; split < 3; ++split)
      for (int64_t concat = 0; concat < 3; ++concat) {
        std::string what =
            describeCall("all_to_all", axes,
                         "split_dim " + std::to_string(split) + " concat_dim " +
                             std::to_string(concat),
                         shape);
        auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
        int64_t n = static_cast<int64_t>(inputs.size());
        int64_t i = ctx.mesh.getGroupIndex(ctx.rank, axes);
        Shape piece = shape;
        piece[split] /= n;
        Shape outShape = piece;
        outShape[concat] *= n;
        std::vector<T> expected(numElements(outShape));
        for (int64_t o = 0; o < static_cast<int64_t>(expected.size()); ++o) {
          std::vector<int64_t> index = unravel(o, outShape);
          int64_t member = index[concat] / piece[concat];
          index[concat] %= piece[concat];
          index[split] += i * piece[split];
          expected[o] = inputs[member][ravel(index, shape)];
        }
        std::vector<T> got(expected.size());
        checks.expectOk(ctx.comm->allToAll(inputs[i].data(), shape, axes, split,
                                           concat, got.data()),
                        what);
        checks.expectBits(got, expected, what);
      }
}

template <typename T> void permuteCase(Context &ctx, Checks &checks) {
  Shape shape = oddShape();
  for (const AxisList &axes : ctx.axisLists) {
    int64_t n = ctx.mesh.getGroupSize(axes);
    int64_t i = ctx.mesh.getGroupIndex(ctx.rank, axes);
    // Shifts beyond (0, n), negative and zero shifts wrap as in the
    // interpreter.
    for (int64_t shift = -1; shift <= n + 1; ++shift) {
      std::string what = describeCall("collective_permute", axes,
                                      "shift " + std::to_string(shift), shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
      const std::vector<T> &expected = inputs[((i - shift) % n + n) % n];
      std::vector<T> got(expected.size());
      checks.expectOk(ctx.comm->collectivePermute(inputs[i].data(), shape, axes,
                                                  shift, got.data()),
                      what);
      checks.expectBits(got, expected, what);
    }
    // Explicit pairs: a reversal, and one message (the others get zeros).
    std::vector<std::vector<std::pair<int64_t, int64_t>>> pairLists(2);
    for (int64_t j = 0; j < n; ++j)
      pairLists[0].push_back({j, n - 1 - j});
    pairLists[1].push_back({0, n - 1});
    for (size_t p = 0; p < pairLists.size(); ++p) {
      std::string what = describeCall("collective_permute", axes,
                                      "pairs #" + std::to_string(p), shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
      std::vector<T> expected(inputs[0].size(), T(0));
      for (auto [source, target] : pairLists[p])
        if (target == i)
          expected = inputs[source];
      std::vector<T> got(expected.size(), T(1));
      checks.expectOk(ctx.comm->collectivePermute(inputs[i].data(), shape, axes,
                                                  pairLists[p], got.data()),
                      what);
      checks.expectBits(got, expected, what);
    }
  }
}

template <typename T> void broadcastCase(Context &ctx, Checks &checks) {
  Shape shape = oddShape();
  for (const AxisList &axes : ctx.axisLists) {
    int64_t n = ctx.mesh.getGroupSize(axes);
    int64_t i = ctx.mesh.getGroupIndex(ctx.rank, axes);
    for (int64_t root = 0; root < n; ++root) {
      std::string what = describeCall("broadcast", axes,
                                      "root " + std::to_string(root), shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
      std::vector<T> got(inputs[0].size());
      checks.expectOk(
          ctx.comm->broadcast(inputs[i].data(), shape, axes, root, got.data()),
          what);
      checks.expectBits(got, inputs[root], what);
    }
  }
}

/// The operations documented to accept `out == in`.
template <typename T> void inPlaceCase(Context &ctx, Checks &checks) {
  Shape shape = oddShape();
  for (const AxisList &axes : ctx.axisLists) {
    int64_t n = ctx.mesh.getGroupSize(axes);
    int64_t i = ctx.mesh.getGroupIndex(ctx.rank, axes);
    for (Communicator *comm : {ctx.comm, ctx.chunked}) {
      std::string what =
          describeCall(comm == ctx.comm ? "all_reduce sum in place"
                                        : "chunked all_reduce sum in place",
                       axes, "", shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
      std::vector<T> expected(inputs[0].size());
      for (size_t e = 0; e < expected.size(); ++e) {
        std::vector<T> column;
        for (const auto &input : inputs)
          column.push_back(input[e]);
        expected[e] = foldValues(column, ReduceKind::Sum);
      }
      std::vector<T> buffer = inputs[i];
      checks.expectOk(comm->allReduce(buffer.data(), shape, axes,
                                      ReduceKind::Sum, buffer.data()),
                      what);
      checks.expectBits(buffer, expected, what);
    }
    {
      std::string what =
          describeCall("broadcast in place", axes, "root 0", shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
      std::vector<T> buffer = inputs[i];
      checks.expectOk(
          ctx.comm->broadcast(buffer.data(), shape, axes, n - 1, buffer.data()),
          what);
      checks.expectBits(buffer, inputs[n - 1], what);
    }
    {
      std::string what =
          describeCall("collective_permute in place", axes, "shift 1", shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
      std::vector<T> buffer = inputs[i];
      checks.expectOk(ctx.comm->collectivePermute(buffer.data(), shape, axes, 1,
                                                  buffer.data()),
                      what);
      checks.expectBits(buffer, inputs[(i - 1 + n) % n], what);
    }
    {
      std::string what =
          describeCall("collective_permute in place", axes, "pairs", shape);
      auto inputs = memberTensors<T>(ctx, axes, shape, saltOf(what));
      std::vector<std::pair<int64_t, int64_t>> pairs;
      for (int64_t j = 0; j < n; ++j)
        pairs.push_back({j, n - 1 - j});
      std::vector<T> buffer = inputs[i];
      checks.expectOk(ctx.comm->collectivePermute(buffer.data(), shape, axes,
                                                  pairs, buffer.data()),
                      what);
      checks.expectBits(buffer, inputs[n - 1 - i], what);
    }
  }
}

/// Point to point: a ring with two ordered messages per tag, the peers of
/// every axis (as `dist.send/recv ... axis`), a large exchange in which both
/// sides send before receiving (buffered sends), and messages to oneself.
template <typename T> void sendRecvCase(Context &ctx, Checks &checks) {
  int64_t world = ctx.mesh.getNumDevices();
  int64_t r = ctx.rank;
  Shape shape = oddShape();
  {
    int64_t to = (r + 1) % world, from = (r - 1 + world) % world;
    for (int message = 0; message < 2; ++message)
      checks.expectOk(
          ctx.comm->send(tensorOf<T>(r, shape, 100 + message).data(), shape, to,
                         /*tag=*/7),
          "ring send #" + std::to_string(message));
    for (int message = 0; message < 2; ++message) {
      std::vector<T> got(numElements(shape));
      std::string what = "ring recv #" + std::to_string(message);
      checks.expectOk(ctx.comm->recv(got.data(), shape, from, 7), what);
      checks.expectBits(got, tensorOf<T>(from, shape, 100 + message), what);
    }
  }
  for (size_t axis = 0; axis < ctx.mesh.getAxes().size(); ++axis) {
    const auto &meshAxis = ctx.mesh.getAxes()[axis];
    int64_t c = ctx.comm->getCoordinates()[axis];
    int64_t to = 0, from = 0;
    checks.expectOk(ctx.comm->peer(meshAxis.name, (c + 1) % meshAxis.size, to),
                    "peer");
    checks.expectOk(ctx.comm->peer(meshAxis.name,
                                   (c - 1 + meshAxis.size) % meshAxis.size,
                                   from),
                    "peer");
    uint64_t salt = 200 + axis;
    checks.expectOk(
        ctx.comm->send(tensorOf<T>(r, shape, salt).data(), shape, to, 8),
        "send along " + meshAxis.name);
    std::vector<T> got(numElements(shape), T(1));
    std::string what = "recv along " + meshAxis.name;
    checks.expectOk(ctx.comm->recv(got.data(), shape, from, 8), what);
    // On an axis of size 1 the peer is the rank itself: zeros.
    checks.expectBits(got,
                      from == r ? std::vector<T>(got.size(), T(0))
                                : tensorOf<T>(from, shape, salt),
                      what);
  }
  {
    // 4 MiB each way, beyond any eager limit: a blocking send would wait for
    // the peer's receive, which waits for its own send.
    Shape big{1 << 19, 1, 1};
    int64_t peer = r ^ 1;
    if (peer < world) {
      checks.expectOk(
          ctx.comm->send(tensorOf<T>(r, big, 300).data(), big, peer, 9),
          "exchange send");
      std::vector<T> got(numElements(big));
      checks.expectOk(ctx.comm->recv(got.data(), big, peer, 9),
                      "exchange recv");
      checks.expectBits(got, tensorOf<T>(peer, big, 300), "exchange recv");
    }
  }
  {
    std::vector<T> got(numElements(shape), T(1));
    checks.expectOk(
        ctx.comm->send(tensorOf<T>(r, shape, 400).data(), shape, r, 3),
        "send to self");
    checks.expectOk(ctx.comm->recv(got.data(), shape, r, 3), "recv from self");
    checks.expectBits(got, std::vector<T>(got.size(), T(0)), "recv from self");
  }
  checks.expectOk(ctx.comm->waitSends(), "waitSends");
}

/// Invalid calls fail on every rank with a message naming the problem,
/// before any traffic (so no rank waits for another).
void invalidCallsCase(Context &ctx, Checks &checks) {
  using loom::runtime::mpi::formatAxes;
  Shape shape = evenShape(ctx.mesh);
  std::vector<float> in(numElements(shape) * ctx.mesh.getNumDevices()),
      out(in.size());
  const std::string first = ctx.mesh.getAxes()[0].name;
  int64_t n = ctx.mesh.getAxes()[0].size;
  Communicator &comm = *ctx.comm;
  checks.expectFailure(
      comm.allGather(in.data(), shape, {"nope"}, 0, out.data()),
      "all_gather over [\"nope\"]: `nope` is not an axis of mesh " +
          ctx.mesh.toString(),
      "unknown axis");
  checks.expectFailure(comm.allReduce(in.data(), shape, {first, first},
                                      ReduceKind::Sum, out.data()),
                       "mesh axis `" + first + "` is named twice",
                       "repeated axis");
  checks.expectFailure(comm.allSlice(in.data(), shape, {"nope"}, 0, out.data()),
                       "is not an axis of mesh", "unknown axis in all_slice");
  checks.expectFailure(
      comm.reduceScatter(in.data(), shape, {first}, 3, out.data()),
      "reduce_scatter over " + formatAxes({first}) +
          ": dim 3 is out of range for shape " +
          loom::runtime::mpi::formatShape(shape),
      "dim out of range");
  if (n > 1) {
    Shape odd{shape[0], n + 1, 1};
    checks.expectFailure(
        comm.reduceScatter(in.data(), odd, {first}, 1, out.data()),
        "the group size " + std::to_string(n) +
            " does not divide dim 1 (size " + std::to_string(n + 1) + ")",
        "indivisible reduce_scatter");
    checks.expectFailure(
        comm.allToAll(in.data(), odd, {first}, 1, 0, out.data()),
        "does not divide dim 1", "indivisible all_to_all");
    checks.expectFailure(comm.allSlice(in.data(), odd, {first}, 1, out.data()),
                         "does not divide dim 1", "indivisible all_slice");
  }
  checks.expectFailure(
      comm.allToAll(in.data(), shape, {first}, 0, -1, out.data()),
      "concat dim -1 is out of range", "concat dim out of range");
  checks.expectFailure(comm.broadcast(in.data(), shape, {first}, n, out.data()),
                       "root " + std::to_string(n) +
                           " is outside the group of " + std::to_string(n),
                       "root out of range");
  checks.expectFailure(
      comm.collectivePermute(in.data(), shape, {first},
                             {{0, 0}, {0, n > 1 ? 1 : 0}}, out.data()),
      "member 0 is the source of two pairs", "repeated source");
  checks.expectFailure(
      comm.collectivePermute(in.data(), shape, {first}, {{0, n}}, out.data()),
      "is outside the group of", "pair out of range");
  checks.expectFailure(
      comm.allGather(in.data(), Shape{2, -1}, {first}, 0, out.data()),
      "has a negative dim 1", "negative dim");
  checks.expectFailure(comm.send(in.data(), shape, ctx.mesh.getNumDevices(), 0),
                       "is outside the " +
                           std::to_string(ctx.mesh.getNumDevices()) + " ranks",
                       "send to a rank outside the mesh");
  checks.expectFailure(comm.recv(out.data(), shape, 0, -1),
                       "tag -1 is outside [0, ", "negative tag");
  // Stricter since both communicators share one contract
  // (CollectiveContract): a tag above the dialect's bound (MPI took any tag
  // up to its MPI_TAG_UB) and an empty axis list (once a group of one).
  checks.expectFailure(
      comm.send(in.data(), shape, 0, loom::runtime::kMaxTag + 1),
      "send to rank 0 (tag 32768): tag 32768 is outside [0, 32767]",
      "tag above kMaxTag");
  checks.expectFailure(
      comm.allReduce(in.data(), shape, {}, ReduceKind::Sum, out.data()),
      "all_reduce sum over []: a collective needs at least one mesh axis",
      "empty axis list");
  int64_t index = 0;
  checks.expectFailure(comm.axisIndex("nope", index),
                       "axis_index: `nope` is not an axis of mesh",
                       "axis_index of an unknown axis");
  checks.expectFailure(comm.peer(first, n, index),
                       "peer: coordinate " + std::to_string(n) +
                           " is outside axis `" + first + "`",
                       "peer outside the axis");
}

/// A mismatched program: with verifyCalls the members compare their calls
/// and all fail alike instead of hanging; a receive of the wrong size is a
/// clear error on the receiver.
void mismatchCase(Context &ctx, Checks &checks) {
  int64_t world = ctx.mesh.getNumDevices();
  Shape shape = evenShape(ctx.mesh);
  // Every rank but 0 passes a shorter tensor.
  Shape mine = shape;
  if (ctx.rank != 0)
    mine[0] = 1;
  AxisList all;
  for (const auto &axis : ctx.mesh.getAxes())
    all.push_back(axis.name);
  std::vector<double> in(numElements(shape)), out(in.size() * world);
  checks.expectFailure(
      ctx.verifying->allGather(in.data(), mine, all, 1, out.data()),
      "the group's members make different calls: member 0 calls "
      "`all_gather over " +
          loom::runtime::mpi::formatAxes(all) + " dim 1 f64 " +
          loom::runtime::mpi::formatShape(shape) + "`",
      "verifyCalls on mismatched shapes");
  // The communicator remains usable after the failed call.
  std::vector<double> sum(in.size());
  checks.expectOk(ctx.verifying->allReduce(in.data(), shape, all,
                                           ReduceKind::Sum, sum.data()),
                  "all_reduce after a verified mismatch");

  // Rank 1 sends 3 elements, rank 0 expects 4.
  if (world >= 2 && ctx.rank == 1)
    checks.expectOk(ctx.comm->send(in.data(), Shape{3}, 0, 11), "short send");
  if (ctx.rank == 0)
    checks.expectFailure(ctx.comm->recv(out.data(), Shape{4}, 1, 11),
                         "rank 0: recv from rank 1 (tag 11): expects shape "
                         "[4] (4 f64 elements, 32 bytes) but the message "
                         "holds 24 bytes",
                         "recv of the wrong size");
  checks.expectOk(ctx.comm->waitSends(), "waitSends");
}

/// Non-blocking all-reduces against the blocking ones, bit for bit: every
/// axis list and shape started before any is waited (so many requests of
/// several groups are in flight at once), a blocking all-reduce and
/// progress() in between, the operand overwritten right after its start
/// (the request owns a copy), and the waits in reverse start order.
template <typename T>
void nonBlockingAllReduceCase(Context &ctx, Checks &checks, Communicator &comm,
                              ReduceKind kind, const char *label) {
  struct Started {
    std::string what;
    std::vector<T> expected, got;
    Communicator::Request request = -1;
  };
  std::vector<Started> started;
  for (const AxisList &axes : ctx.axisLists)
    for (const Shape &shape :
         {oddShape(), evenShape(ctx.mesh), Shape{7, 1, 13}, Shape{67, 129}}) {
      Started call;
      call.what = describeCall(label, axes, "", shape);
      std::vector<T> input = tensorOf<T>(ctx.rank, shape, saltOf(call.what),
                                         kind == ReduceKind::Max);
      call.expected.resize(input.size());
      checks.expectOk(
          comm.allReduce(input.data(), shape, axes, kind, call.expected.data()),
          "blocking " + call.what);
      call.got.assign(input.size(), T(0));
      checks.expectOk(comm.startAllReduce(input.data(), shape, axes, kind,
                                          call.got.data(), call.request),
                      "start " + call.what);
      std::fill(input.begin(), input.end(), T(1));
      started.push_back(std::move(call));
    }
  // A blocking collective on the same groups while the requests fly.
  AxisList first{ctx.mesh.getAxes()[0].name};
  double one = 1, sum = 0;
  checks.expectOk(comm.allReduce(&one, Shape{}, first, ReduceKind::Sum, &sum),
                  "blocking all_reduce among requests in flight");
  checks.expectOk(comm.progress(), "progress");
  if (comm.getNumInFlight() != started.size())
    checks.fail("progress completed or dropped requests: " +
                std::to_string(comm.getNumInFlight()) + " in flight, " +
                std::to_string(started.size()) + " started");
  for (auto it = started.rbegin(); it != started.rend(); ++it) {
    checks.expectOk(comm.wait(it->request), "wait " + it->what);
    checks.expectBits(it->got, it->expected, "non-blocking " + it->what);
  }
  checks.expectOk(comm.checkAllWaited(), "every request waited");
}

/// Non-blocking reduce-scatters against the blocking ones, bit for bit, as
/// nonBlockingAllReduceCase: every axis list and dim started before any is
/// waited (a leading dim needs no packing, the others do), the operand
/// overwritten right after its start, an all-reduce started among them
/// (the two kinds share the group's tag sequence), and the waits in
/// reverse start order.
template <typename T>
void nonBlockingReduceScatterCase(Context &ctx, Checks &checks) {
  Communicator &comm = *ctx.comm;
  struct Started {
    std::string what;
    std::vector<T> expected, got;
    Communicator::Request request = -1;
  };
  std::vector<Started> started;
  Shape shape = evenShape(ctx.mesh);
  for (const AxisList &axes : ctx.axisLists)
    for (int64_t dim = 0; dim < 3; ++dim) {
      Started call;
      call.what = describeCall("reduce_scatter", axes,
                               "dim " + std::to_string(dim), shape);
      std::vector<T> input = tensorOf<T>(ctx.rank, shape, saltOf(call.what));
      call.expected.resize(input.size() / ctx.mesh.getGroupSize(axes));
      checks.expectOk(comm.reduceScatter(input.data(), shape, axes, dim,
                                         call.expected.data()),
                      "blocking " + call.what);
      call.got.assign(call.expected.size(), T(0));
      checks.expectOk(comm.startReduceScatter(input.data(), shape, axes, dim,
                                              call.got.data(), call.request),
                      "start " + call.what);
      std::fill(input.begin(), input.end(), T(1));
      started.push_back(std::move(call));
    }
  AxisList first{ctx.mesh.getAxes()[0].name};
  std::vector<T> ones(7, T(1)), sum(7);
  Communicator::Request reduce = -1;
  checks.expectOk(comm.startAllReduce(ones.data(), Shape{7}, first,
                                      ReduceKind::Sum, sum.data(), reduce),
                  "an all_reduce started among the reduce_scatters");
  checks.expectOk(comm.progress(), "progress");
  for (auto it = started.rbegin(); it != started.rend(); ++it) {
    checks.expectOk(comm.wait(it->request), "wait " + it->what);
    checks.expectBits(it->got, it->expected, "non-blocking " + it->what);
  }
  checks.expectOk(comm.wait(reduce), "wait for the all_reduce");
  std::vector<T> groupSize(7, T(ctx.mesh.getGroupSize(first)));
  checks.expectBits(sum, groupSize, "the all_reduce among reduce_scatters");
  checks.expectOk(comm.checkAllWaited(), "every request waited");
}

/// A wait on a request already waited or never started, and a request
/// left in flight at the end of the step, are errors naming the request.
void nonBlockingErrorsCase(Context &ctx, Checks &checks) {
  Communicator &comm = *ctx.comm;
  AxisList first{ctx.mesh.getAxes()[0].name};
  std::vector<float> in(6, 1.0f), out(6);
  Communicator::Request request = -1;
  checks.expectFailure(comm.startAllReduce(in.data(), Shape{6}, {"nope"},
                                           ReduceKind::Sum, out.data(),
                                           request),
                       "`nope` is not an axis of mesh", "start, unknown axis");
  checks.expectOk(comm.startAllReduce(in.data(), Shape{6}, first,
                                      ReduceKind::Sum, out.data(), request),
                  "start");
  checks.expectFailure(comm.checkAllWaited(),
                       "1 non-blocking collective(s) started and never "
                       "waited at the end of the step: #" +
                           std::to_string(request) +
                           " (non-blocking all_reduce sum over",
                       "a request never waited");
  checks.expectOk(comm.wait(request), "wait");
  checks.expectFailure(comm.wait(request),
                       "wait: request #" + std::to_string(request) +
                           " was already waited",
                       "waiting twice");
  checks.expectFailure(comm.wait(request + 1000),
                       "wait: request #" + std::to_string(request + 1000) +
                           " was never started",
                       "waiting on a request never started");
  checks.expectOk(comm.checkAllWaited(), "nothing left in flight");
}

} // namespace

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

static int usage(int rank) {
  if (rank == 0)
    std::fprintf(stderr, "usage: mpirun -np N loom-mpi-collectives-test "
                         "--mesh NAME=SIZE,... [--junit FILE] "
                         "[--abort-on-rank R]\n");
  MPI_Finalize();
  return 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string meshText, junit;
  int abortRank = -1;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--mesh" && a + 1 < argc)
      meshText = argv[++a];
    else if (arg == "--junit" && a + 1 < argc)
      junit = argv[++a];
    else if (arg == "--abort-on-rank" && a + 1 < argc)
      abortRank = std::atoi(argv[++a]);
    else
      return usage(rank);
  }
  if (meshText.empty())
    return usage(rank);

  // Set-up failures are the same on every rank, so every rank reports and
  // exits (no rank is left waiting in a collective).
  auto fail = [&](const Status &status) {
    std::fprintf(stderr, "loom-mpi-collectives-test: rank %d: error: %s\n",
                 rank, status.message().c_str());
    MPI_Finalize();
    return 1;
  };
  Context ctx;
  if (Status status = DeviceMesh::parse(meshText, ctx.mesh); !status.ok())
    return fail(status);
  std::unique_ptr<Communicator> comm, chunked, verifying;
  CommunicatorOptions chunkedOptions, verifyingOptions;
  chunkedOptions.gatherReduceMaxBytes = 0;
  verifyingOptions.verifyCalls = true;
  if (Status status = Communicator::create(ctx.mesh, comm); !status.ok())
    return fail(status);
  if (Status status = Communicator::create(ctx.mesh, chunked, chunkedOptions);
      !status.ok())
    return fail(status);
  if (Status status =
          Communicator::create(ctx.mesh, verifying, verifyingOptions);
      !status.ok())
    return fail(status);
  ctx.rank = rank;
  ctx.comm = comm.get();
  ctx.chunked = chunked.get();
  ctx.verifying = verifying.get();
  ctx.axisLists = orderedAxisLists(ctx.mesh);

  if (abortRank >= 0) {
    if (rank == abortRank)
      comm->abort(Status::failure("injected failure on one rank"));
    AxisList all;
    for (const auto &axis : ctx.mesh.getAxes())
      all.push_back(axis.name);
    double value = 1, sum = 0;
    Status status =
        comm->allReduce(&value, Shape{}, all, ReduceKind::Sum, &sum);
    std::fprintf(stderr, "rank %d: the all_reduce returned (%s)\n", rank,
                 status.ok() ? "ok" : status.message().c_str());
    MPI_Finalize();
    return 0;
  }

  std::vector<std::pair<std::string, std::function<void(Checks &)>>> cases;
  auto addTyped = [&](auto zero) {
    using T = decltype(zero);
    std::string suffix = std::string(".") + typeName<T>();
    cases.push_back(
        {"all_gather" + suffix, [&](Checks &c) { allGatherCase<T>(ctx, c); }});
    cases.push_back(
        {"all_slice" + suffix, [&](Checks &c) { allSliceCase<T>(ctx, c); }});
    cases.push_back({"all_reduce_sum" + suffix, [&](Checks &c) {
                       allReduceCase<T>(ctx, c, *ctx.comm, ReduceKind::Sum,
                                        "all_reduce sum");
                     }});
    cases.push_back({"all_reduce_sum_chunked" + suffix, [&](Checks &c) {
                       allReduceCase<T>(ctx, c, *ctx.chunked, ReduceKind::Sum,
                                        "chunked all_reduce sum");
                     }});
    cases.push_back({"all_reduce_max" + suffix, [&](Checks &c) {
                       allReduceCase<T>(ctx, c, *ctx.comm, ReduceKind::Max,
                                        "all_reduce max");
                       allReduceCase<T>(ctx, c, *ctx.chunked, ReduceKind::Max,
                                        "chunked all_reduce max");
                     }});
    cases.push_back(
        {"nonblocking_all_reduce" + suffix, [&](Checks &c) {
           nonBlockingAllReduceCase<T>(ctx, c, *ctx.comm, ReduceKind::Sum,
                                       "all_reduce sum");
           nonBlockingAllReduceCase<T>(ctx, c, *ctx.chunked, ReduceKind::Sum,
                                       "chunked all_reduce sum");
           nonBlockingAllReduceCase<T>(ctx, c, *ctx.chunked, ReduceKind::Max,
                                       "chunked all_reduce max");
         }});
    cases.push_back({"reduce_scatter" + suffix,
                     [&](Checks &c) { reduceScatterCase<T>(ctx, c); }});
    cases.push_back({"nonblocking_reduce_scatter" + suffix, [&](Checks &c) {
                       nonBlockingReduceScatterCase<T>(ctx, c);
                     }});
    cases.push_back(
        {"all_to_all" + suffix, [&](Checks &c) { allToAllCase<T>(ctx, c); }});
    cases.push_back({"collective_permute" + suffix,
                     [&](Checks &c) { permuteCase<T>(ctx, c); }});
    cases.push_back(
        {"broadcast" + suffix, [&](Checks &c) { broadcastCase<T>(ctx, c); }});
    cases.push_back(
        {"in_place" + suffix, [&](Checks &c) { inPlaceCase<T>(ctx, c); }});
    cases.push_back(
        {"send_recv" + suffix, [&](Checks &c) { sendRecvCase<T>(ctx, c); }});
  };
  addTyped(float());
  addTyped(double());
  addTyped(int64_t());
  cases.push_back(
      {"invalid_calls", [&](Checks &c) { invalidCallsCase(ctx, c); }});
  cases.push_back({"nonblocking_errors",
                   [&](Checks &c) { nonBlockingErrorsCase(ctx, c); }});
  cases.push_back(
      {"mismatched_calls", [&](Checks &c) { mismatchCase(ctx, c); }});

  std::string suite = "mpi" + ctx.mesh.toString();
  std::vector<CaseResult> results;
  int failed = 0;
  for (auto &[name, run] : cases) {
    Checks checks;
    auto start = std::chrono::steady_clock::now();
    run(checks);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    // A case passes when it passes on every rank; each failing rank says why.
    int mineFailed = !checks.firstFailure.empty(), anyFailed = 0;
    int64_t totalChecks = 0;
    MPI_Allreduce(&mineFailed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce(&checks.count, &totalChecks, 1, MPI_INT64_T, MPI_SUM, 0,
               MPI_COMM_WORLD);
    if (mineFailed)
      std::fprintf(stderr, "rank %d: %s: %s\n", rank, name.c_str(),
                   checks.firstFailure.c_str());
    CaseResult result{name, "", seconds};
    if (anyFailed) {
      ++failed;
      result.failure = mineFailed ? checks.firstFailure
                                  : "failed on another rank (see stderr)";
    }
    if (rank == 0) {
      if (anyFailed)
        std::printf("FAIL %s %s: %s\n", suite.c_str(), name.c_str(),
                    result.failure.c_str());
      else
        std::printf("PASS %s %s (%lld checks)\n", suite.c_str(), name.c_str(),
                    static_cast<long long>(totalChecks));
      std::fflush(stdout);
    }
    results.push_back(result);
  }
  if (rank == 0) {
    std::printf("%zu cases, %d failed on %lld ranks\n", results.size(), failed,
                static_cast<long long>(ctx.mesh.getNumDevices()));
    if (!junit.empty() && !writeJUnit(junit, suite, results)) {
      std::fprintf(stderr, "cannot write %s\n", junit.c_str());
      failed = 1;
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  comm.reset();
  chunked.reset();
  verifying.reset();
  MPI_Finalize();
  return failed ? 1 : 0;
}

//===- Communicator.cpp - Every dist collective over MPI ranks ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// 1. create: duplicate the world communicator (errors return, never abort),
//    check its size against the mesh, note this rank's coordinates.
// 2. groups: a collective over an axis list first validates its arguments
//    (CollectiveContract, as the NCCL communicator does), then looks up this
//    rank's group; the first use of an axis list creates
//    its communicator with MPI_Comm_create_group over the members in group
//    index order, so the communicator rank *is* the group index.
//    (MPI_Comm_split would also do, with color = the group's first rank and
//    key = the group index, but it is collective over every world rank, and
//    would deadlock a program in which only some ranks reach a collective,
//    e.g. per-stage code of a pipeline; create_group involves the members
//    only.)
// 3. data movement: a collective along any dim packs its operand so that the
//    blocks MPI moves are contiguous ([outer][n][inner] <-> [n][outer][inner])
//    and unpacks what it receives the same way; a leading dim needs neither.
// 4. reductions: the members' tensors (or chunks of them) are exchanged and
//    folded in group index order in T arithmetic, exactly as the interpreter
//    does; see CommunicatorOptions::gatherReduceMaxBytes for the two
//    schedules.
// 5. non-blocking all-reduces and reduce-scatters (startAllReduce,
//    startReduceScatter / progress / wait) move the same blocks as the
//    blocking schedules, as point-to-point messages on a
//    duplicate of the group's communicator tagged by the group's start
//    sequence (so requests may complete in any order), and fold them in
//    group index order in the same code: the same bits.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/MPI/Communicator.h"
#include "loom/Runtime/Support/Failure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace loom::runtime::mpi {

namespace {

template <typename T> MPI_Datatype datatypeOf();
template <> MPI_Datatype datatypeOf<float>() { return MPI_FLOAT; }
template <> MPI_Datatype datatypeOf<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype datatypeOf<int64_t>() { return MPI_INT64_T; }

/// Tags of the point-to-point traffic inside a group communicator; user
/// tags of send/recv live on the base communicator and never meet them.
constexpr int kPermuteTag = 1;
/// Non-blocking collectives tag their two rounds 2 s and 2 s + 1 by their
/// start sequence s modulo this (MPI guarantees tags up to 32767), so that
/// this many requests of one group may be in flight at once.
constexpr int64_t kAsyncTagCycle = 16000;

/// Copies `src`, viewed as [a][b][inner], to `dst` as [b][a][inner]. Packs
/// the n pieces along a dim into consecutive blocks (a = outer, b = n) and
/// unpacks received blocks into a concatenation (a = n, b = outer).
template <typename T>
void swapLeadingAxes(const T *src, int64_t a, int64_t b, int64_t inner,
                     T *dst) {
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      std::memcpy(dst + (j * a + i) * inner, src + (i * b + j) * inner,
                  sizeof(T) * inner);
}

/// Folds `n` consecutive blocks of `count` elements into `dst`, block 0
/// first: the interpreter's `combine` (lib/Interpreter/Interpreter.cpp).
template <typename T>
void fold(const T *blocks, int64_t n, int64_t count, ReduceKind kind, T *dst) {
  std::memmove(dst, blocks, sizeof(T) * count);
  for (int64_t p = 1; p < n; ++p) {
    const T *src = blocks + p * count;
    if (kind == ReduceKind::Sum) {
      for (int64_t i = 0; i < count; ++i)
        dst[i] += src[i];
      continue;
    }
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(src[i]) || std::isnan(dst[i]))
          dst[i] = std::numeric_limits<T>::quiet_NaN();
        else
          dst[i] = std::max(dst[i], src[i]);
      } else {
        dst[i] = std::max(dst[i], src[i]);
      }
    }
  }
}

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t d = begin; d < end; ++d)
    result *= shape[d];
  return result;
}

} // namespace

#define LOOM_RETURN_IF_FAILED(expr)                                            \
  do {                                                                         \
    Status status_ = (expr);                                                   \
    if (!status_.ok())                                                         \
      return status_;                                                          \
  } while (false)

/// Calls MPI function `fn` and returns a Status naming it if it fails.
#define LOOM_MPI_CHECK(what, fn, ...)                                          \
  do {                                                                         \
    int code_ = fn(__VA_ARGS__);                                               \
    if (code_ != MPI_SUCCESS)                                                  \
      return mpiFailure(#fn, code_, what);                                     \
  } while (false)

//===----------------------------------------------------------------------===//
// Creation and groups
//===----------------------------------------------------------------------===//

Communicator::Communicator(const DeviceMesh &mesh,
                           const CommunicatorOptions &options, MPI_Comm world,
                           MPI_Comm base, int rank)
    : mesh(mesh), options(options), world(world), base(base), rank(rank),
      coordinates(mesh.getCoordinates(rank)) {}

Status Communicator::create(const DeviceMesh &mesh,
                            std::unique_ptr<Communicator> &out,
                            const CommunicatorOptions &options,
                            MPI_Comm world) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return Status::failure("MPI is not initialized (call MPI_Init before "
                           "creating a communicator)");
  int size = 0, rank = 0;
  // World's own error handler applies until `base` exists; these two calls
  // fail only on an invalid communicator.
  if (int code = MPI_Comm_size(world, &size); code != MPI_SUCCESS)
    return Status::failure("MPI_Comm_size failed on the world communicator");
  if (int code = MPI_Comm_rank(world, &rank); code != MPI_SUCCESS)
    return Status::failure("MPI_Comm_rank failed on the world communicator");
  setReportedRank(rank);
  if (size != mesh.getNumDevices())
    return Status::failure("mesh " + mesh.toString() + " has " +
                           std::to_string(mesh.getNumDevices()) +
                           " devices but MPI runs " + std::to_string(size) +
                           " ranks (start it with mpirun -np " +
                           std::to_string(mesh.getNumDevices()) + ")");
  MPI_Comm base = MPI_COMM_NULL;
  int code = MPI_Comm_dup(world, &base);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN);
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    return Status::failure("rank " + std::to_string(rank) +
                           ": MPI_Comm_dup failed creating the communicator "
                           "of mesh " +
                           mesh.toString() + ": " +
                           std::string(text, static_cast<size_t>(length)));
  }
  out.reset(new Communicator(mesh, options, world, base, rank));
  return Status::success();
}

/// A non-blocking all-reduce or reduce-scatter in flight. Type-erased:
/// `fold` is the blocking schedule's fold for the element type.
struct Communicator::AsyncReduce {
  std::string what;
  Group *group = nullptr;
  MPI_Datatype type;
  size_t elementSize = 0;
  void (*fold)(const void *blocks, int64_t n, int64_t count, ReduceKind kind,
               void *dst) = nullptr;
  ReduceKind kind = ReduceKind::Sum;
  int64_t count = 0;
  /// Two rounds (chunks folded per member, then gathered) or one (every
  /// tensor gathered and folded), as allReduce chooses.
  bool chunked = false;
  /// 0: first round in flight; 1: second round in flight (chunked);
  /// 2: every transfer done.
  int round = 0;
  int tag = 0;
  unsigned char *out = nullptr;
  /// The operand's copy, the received blocks, and this member's folded
  /// chunk (chunked).
  std::vector<unsigned char> sent, received, folded;
  std::vector<int> counts, displs;
  std::vector<MPI_Request> requests;
};

namespace {
template <typename T>
void foldErased(const void *blocks, int64_t n, int64_t count, ReduceKind kind,
                void *dst) {
  fold(static_cast<const T *>(blocks), n, count, kind, static_cast<T *>(dst));
}
} // namespace

Communicator::~Communicator() {
  // Errors cannot be reported from here; a program that cares calls
  // waitSends() and waits its requests first. The peers posted the
  // matching transfers (they run the same program), so these complete.
  for (auto &pending : pendingSends)
    MPI_Wait(&pending->request, MPI_STATUS_IGNORE);
  for (auto &[id, reduce] : inFlight)
    MPI_Waitall(static_cast<int>(reduce->requests.size()),
                reduce->requests.data(), MPI_STATUSES_IGNORE);
  for (auto &[axes, group] : groups) {
    if (group.async != MPI_COMM_NULL)
      MPI_Comm_free(&group.async);
    if (group.comm != MPI_COMM_NULL)
      MPI_Comm_free(&group.comm);
  }
  if (base != MPI_COMM_NULL)
    MPI_Comm_free(&base);
}

Status Communicator::mpiFailure(const char *call, int code,
                                const std::string &what) const {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = std::snprintf(text, sizeof(text), "MPI error code %d", code);
  return Status::failure("rank " + std::to_string(rank) + ": " + call +
                         " failed in " + what + ": " +
                         std::string(text, static_cast<size_t>(length)));
}

void Communicator::abort(const Status &status) const {
  std::fprintf(stderr, "loom: rank %lld: %s\n", static_cast<long long>(rank),
               status.message().c_str());
  std::fflush(stderr);
  MPI_Abort(world, 1);
  std::exit(1); // MPI_Abort does not return; this keeps [[noreturn]] honest.
}

Status Communicator::axisIndex(std::string_view axis, int64_t &index) const {
  std::optional<size_t> position = mesh.findAxis(axis);
  if (!position)
    return Status::failure("axis_index: " + *mesh.verifyAxis(axis));
  index = coordinates[*position];
  return Status::success();
}

Status Communicator::peer(std::string_view axis, int64_t coordinate,
                          int64_t &peerRank) const {
  std::optional<size_t> position = mesh.findAxis(axis);
  if (!position)
    return Status::failure("peer: " + *mesh.verifyAxis(axis));
  int64_t size = mesh.getAxes()[*position].size;
  if (coordinate < 0 || coordinate >= size)
    return Status::failure("peer: coordinate " + std::to_string(coordinate) +
                           " is outside axis `" + std::string(axis) +
                           "` of size " + std::to_string(size));
  peerRank = mesh.getPeer(rank, *position, coordinate);
  return Status::success();
}

Status Communicator::getGroup(const AxisList &axes, const std::string &what,
                              Group *&group) {
  std::vector<size_t> key;
  for (const std::string &name : axes)
    key.push_back(*mesh.findAxis(name));
  auto it = groups.find(key);
  if (it != groups.end()) {
    group = &it->second;
    return Status::success();
  }
  Group created;
  created.size = static_cast<int>(mesh.getGroupSize(axes));
  created.index = static_cast<int>(mesh.getGroupIndex(rank, axes));
  if (created.size > 1) {
    std::vector<int64_t> members = mesh.getGroup(rank, axes);
    std::vector<int> ranks(members.begin(), members.end());
    // Concurrent creations on one parent need distinct tags; the axis
    // positions, as digits, tell the axis lists apart.
    int tag = 0;
    for (size_t position : key)
      tag = (tag * static_cast<int>(mesh.getAxes().size() + 1) +
             static_cast<int>(position) + 1) %
            32768;
    MPI_Group baseGroup, memberGroup;
    LOOM_MPI_CHECK(what, MPI_Comm_group, base, &baseGroup);
    int code =
        MPI_Group_incl(baseGroup, created.size, ranks.data(), &memberGroup);
    MPI_Group_free(&baseGroup);
    if (code != MPI_SUCCESS)
      return mpiFailure("MPI_Group_incl", code, what);
    code = MPI_Comm_create_group(base, memberGroup, tag, &created.comm);
    MPI_Group_free(&memberGroup);
    if (code != MPI_SUCCESS)
      return mpiFailure("MPI_Comm_create_group", code, what);
    LOOM_MPI_CHECK(what, MPI_Comm_set_errhandler, created.comm,
                   MPI_ERRORS_RETURN);
  }
  group = &groups.emplace(std::move(key), created).first->second;
  return Status::success();
}

template <typename T> T *Communicator::scratch(int slot, int64_t count) {
  Scratch &buffer = scratchBuffers[slot];
  size_t bytes = sizeof(T) * static_cast<size_t>(count);
  if (buffer.bytes < bytes) {
    // Default-initialized: no zero fill of memory about to be overwritten.
    buffer.data.reset(new unsigned char[bytes]);
    buffer.bytes = bytes;
  }
  return reinterpret_cast<T *>(buffer.data.get());
}

void Communicator::releaseScratch() {
  for (Scratch &buffer : scratchBuffers) {
    buffer.data.reset();
    buffer.bytes = 0;
  }
}

int64_t Communicator::getScratchBytes() const {
  int64_t bytes = 0;
  for (const Scratch &buffer : scratchBuffers)
    bytes += static_cast<int64_t>(buffer.bytes);
  return bytes;
}

Status Communicator::verifyCall(const Group &group, const std::string &what,
                                const std::string &signature) {
  if (!options.verifyCalls || group.size == 1)
    return Status::success();
  constexpr size_t kLength = 192;
  char mine[kLength] = {};
  std::strncpy(mine, signature.c_str(), kLength - 1);
  std::vector<char> all(kLength * group.size);
  LOOM_MPI_CHECK(what, MPI_Allgather, mine, static_cast<int>(kLength), MPI_CHAR,
                 all.data(), static_cast<int>(kLength), MPI_CHAR, group.comm);
  // Every member compares the same table, so all of them fail alike.
  for (int j = 1; j < group.size; ++j)
    if (std::strncmp(all.data(), all.data() + j * kLength, kLength) != 0)
      return Status::failure(
          what +
          ": the group's members make different calls: member 0 "
          "calls `" +
          std::string(all.data()) + "`, member " + std::to_string(j) +
          " calls `" + std::string(all.data() + j * kLength) + "`");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// The signature verifyCall compares: op, type, attributes, shape.
template <typename T>
static std::string signatureOf(const std::string &what, const Shape &shape) {
  return what + " " + elementTypeName<T>() + " " + formatShape(shape);
}

template <typename T>
Status Communicator::allGather(const T *in, const Shape &shape,
                               const AxisList &axes, int64_t dim, T *out) {
  LOOM_RETURN_IF_FAILED(contract().allGather(shape, axes, dim));
  std::string what = CollectiveContract::describe("all_gather", axes);
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t n = group->size;
  int64_t count = product(shape, 0, shape.size());
  if (n == 1) {
    std::memmove(out, in, sizeof(T) * count);
    return Status::success();
  }
  LOOM_RETURN_IF_FAILED(
      verifyCall(*group, what,
                 signatureOf<T>(what + " dim " + std::to_string(dim), shape)));
  int64_t outer = product(shape, 0, dim);
  int64_t inner = count / std::max<int64_t>(outer, 1);
  // Member j's tensor goes to the j-th block of [outer][n][inner]; with one
  // outer row the blocks are consecutive and MPI writes them in place.
  T *target = outer > 1 ? scratch<T>(1, count * n) : out;
  LOOM_MPI_CHECK(what, MPI_Allgather, in, static_cast<int>(count),
                 datatypeOf<T>(), target, static_cast<int>(count),
                 datatypeOf<T>(), group->comm);
  if (outer > 1)
    swapLeadingAxes(target, n, outer, inner, out);
  return Status::success();
}

template <typename T>
Status Communicator::allSlice(const T *in, const Shape &shape,
                              const AxisList &axes, int64_t dim, T *out) {
  LOOM_RETURN_IF_FAILED(contract().allSlice(shape, axes, dim));
  // No communicator: the piece follows from the mesh alone.
  int64_t n = mesh.getGroupSize(axes);
  int64_t index = mesh.getGroupIndex(rank, axes);
  int64_t outer = product(shape, 0, dim);
  int64_t piece = shape[dim] / n * product(shape, dim + 1, shape.size());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out + o * piece, in + (o * n + index) * piece,
                sizeof(T) * piece);
  return Status::success();
}

template <typename T>
Status Communicator::allReduce(const T *in, const Shape &shape,
                               const AxisList &axes, ReduceKind kind, T *out) {
  LOOM_RETURN_IF_FAILED(contract().allReduce(shape, axes, kind));
  std::string what = CollectiveContract::describe(kind, axes);
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t n = group->size;
  int64_t count = product(shape, 0, shape.size());
  if (n == 1) {
    std::memmove(out, in, sizeof(T) * count);
    return Status::success();
  }
  LOOM_RETURN_IF_FAILED(verifyCall(*group, what, signatureOf<T>(what, shape)));
  MPI_Datatype type = datatypeOf<T>();
  int64_t bytes = count * static_cast<int64_t>(sizeof(T));
  if (bytes <= options.gatherReduceMaxBytes) {
    // One round: everyone gathers every tensor and folds them alike.
    if (count * n > std::numeric_limits<int>::max())
      return Status::failure(what + ": the gathered tensors have more "
                                    "elements than an MPI count holds");
    T *all = scratch<T>(1, count * n);
    LOOM_MPI_CHECK(what, MPI_Allgather, in, static_cast<int>(count), type, all,
                   static_cast<int>(count), type, group->comm);
    fold(all, n, count, kind, out);
    return Status::success();
  }
  // Two rounds: member c folds chunk c of every tensor (an all-to-all of
  // chunks), then the folded chunks are gathered. Chunk sizes differ by at
  // most one element.
  std::vector<int> counts(n), displs(n);
  for (int64_t c = 0, at = 0; c < n; ++c) {
    counts[c] = static_cast<int>(count / n + (c < count % n ? 1 : 0));
    displs[c] = static_cast<int>(at);
    at += counts[c];
  }
  int mine = counts[group->index];
  std::vector<int> recvCounts(n, mine), recvDispls(n);
  for (int64_t j = 0; j < n; ++j)
    recvDispls[j] = static_cast<int>(j * mine);
  T *chunks = scratch<T>(1, static_cast<int64_t>(mine) * n);
  T *folded = scratch<T>(2, mine);
  LOOM_MPI_CHECK(what, MPI_Alltoallv, in, counts.data(), displs.data(), type,
                 chunks, recvCounts.data(), recvDispls.data(), type,
                 group->comm);
  fold(chunks, n, mine, kind, folded);
  LOOM_MPI_CHECK(what, MPI_Allgatherv, folded, mine, type, out, counts.data(),
                 displs.data(), type, group->comm);
  return Status::success();
}

template <typename T>
Status Communicator::reduceScatter(const T *in, const Shape &shape,
                                   const AxisList &axes, int64_t dim, T *out) {
  LOOM_RETURN_IF_FAILED(contract().reduceScatter(shape, axes, dim));
  std::string what = CollectiveContract::describe("reduce_scatter", axes);
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t n = group->size;
  int64_t count = product(shape, 0, shape.size());
  if (n == 1) {
    std::memmove(out, in, sizeof(T) * count);
    return Status::success();
  }
  LOOM_RETURN_IF_FAILED(
      verifyCall(*group, what,
                 signatureOf<T>(what + " dim " + std::to_string(dim), shape)));
  int64_t outer = product(shape, 0, dim);
  int64_t pieceInner = count / std::max<int64_t>(outer, 1) / n;
  int64_t piece = count / n;
  // Piece j (along dim) of the operand goes to member j; each member then
  // holds its piece of every member's tensor, in group order, and folds.
  const T *source = in;
  if (outer > 1) {
    T *packed = scratch<T>(0, count);
    swapLeadingAxes(in, outer, n, pieceInner, packed);
    source = packed;
  }
  T *received = scratch<T>(1, count);
  MPI_Datatype type = datatypeOf<T>();
  LOOM_MPI_CHECK(what, MPI_Alltoall, source, static_cast<int>(piece), type,
                 received, static_cast<int>(piece), type, group->comm);
  fold(received, n, piece, ReduceKind::Sum, out);
  return Status::success();
}

template <typename T>
Status Communicator::allToAll(const T *in, const Shape &shape,
                              const AxisList &axes, int64_t splitDim,
                              int64_t concatDim, T *out) {
  LOOM_RETURN_IF_FAILED(contract().allToAll(shape, axes, splitDim, concatDim));
  std::string what = CollectiveContract::describe("all_to_all", axes);
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t n = group->size;
  int64_t count = product(shape, 0, shape.size());
  if (n == 1) {
    std::memmove(out, in, sizeof(T) * count);
    return Status::success();
  }
  LOOM_RETURN_IF_FAILED(verifyCall(
      *group, what,
      signatureOf<T>(what + " split_dim " + std::to_string(splitDim) +
                         " concat_dim " + std::to_string(concatDim),
                     shape)));
  int64_t piece = count / n;
  // Send side: piece j along splitDim to member j.
  int64_t splitOuter = product(shape, 0, splitDim);
  const T *source = in;
  if (splitOuter > 1) {
    T *packed = scratch<T>(0, count);
    swapLeadingAxes(in, splitOuter, n, count / splitOuter / n, packed);
    source = packed;
  }
  // Receive side: member j's piece is block j of the concatenation along
  // concatDim of pieces shaped like `pieceShape`.
  Shape pieceShape = shape;
  pieceShape[splitDim] /= n;
  int64_t concatOuter = product(pieceShape, 0, concatDim);
  T *target = concatOuter > 1 ? scratch<T>(1, count) : out;
  MPI_Datatype type = datatypeOf<T>();
  LOOM_MPI_CHECK(what, MPI_Alltoall, source, static_cast<int>(piece), type,
                 target, static_cast<int>(piece), type, group->comm);
  if (concatOuter > 1)
    swapLeadingAxes(target, n, concatOuter, piece / concatOuter, out);
  return Status::success();
}

template <typename T>
Status Communicator::collectivePermute(const T *in, const Shape &shape,
                                       const AxisList &axes, int64_t shift,
                                       T *out) {
  LOOM_RETURN_IF_FAILED(contract().collectivePermute(shape, axes));
  std::string what = CollectiveContract::describe("collective_permute", axes);
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t n = group->size;
  int64_t count = product(shape, 0, shape.size());
  int64_t k = (shift % n + n) % n;
  if (k == 0) {
    std::memmove(out, in, sizeof(T) * count);
    return Status::success();
  }
  LOOM_RETURN_IF_FAILED(verifyCall(
      *group, what,
      signatureOf<T>(what + " shift " + std::to_string(shift), shape)));
  int to = static_cast<int>((group->index + k) % n);
  int from = static_cast<int>((group->index - k + n) % n);
  MPI_Datatype type = datatypeOf<T>();
  if (in == out) {
    LOOM_MPI_CHECK(what, MPI_Sendrecv_replace, out, static_cast<int>(count),
                   type, to, kPermuteTag, from, kPermuteTag, group->comm,
                   MPI_STATUS_IGNORE);
    return Status::success();
  }
  LOOM_MPI_CHECK(what, MPI_Sendrecv, in, static_cast<int>(count), type, to,
                 kPermuteTag, out, static_cast<int>(count), type, from,
                 kPermuteTag, group->comm, MPI_STATUS_IGNORE);
  return Status::success();
}

template <typename T>
Status Communicator::collectivePermute(
    const T *in, const Shape &shape, const AxisList &axes,
    const std::vector<std::pair<int64_t, int64_t>> &pairs, T *out) {
  LOOM_RETURN_IF_FAILED(contract().collectivePermute(shape, axes, pairs));
  std::string what = CollectiveContract::describe("collective_permute", axes);
  int64_t n = mesh.getGroupSize(axes);
  std::vector<int64_t> sourceOf(n, -1), targetOf(n, -1);
  std::string pairText;
  for (auto [source, target] : pairs) {
    pairText +=
        "(" + std::to_string(source) + ", " + std::to_string(target) + ")";
    targetOf[source] = target;
    sourceOf[target] = source;
  }
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t count = product(shape, 0, shape.size());
  int64_t i = group->index;
  bool moves = std::any_of(pairs.begin(), pairs.end(),
                           [](auto pair) { return pair.first != pair.second; });
  if (!moves) {
    // Nothing moves between members: keep or clear locally.
    if (sourceOf[i] == i)
      std::memmove(out, in, sizeof(T) * count);
    else
      std::fill(out, out + count, T(0));
    return Status::success();
  }
  LOOM_RETURN_IF_FAILED(verifyCall(
      *group, what, signatureOf<T>(what + " pairs " + pairText, shape)));
  // An aliased output must not be overwritten before the send has read it.
  std::vector<T> copy;
  const T *source = in;
  if (in == out && targetOf[i] >= 0 && targetOf[i] != i) {
    copy.assign(in, in + count);
    source = copy.data();
  }
  MPI_Datatype type = datatypeOf<T>();
  MPI_Request requests[2];
  int active = 0;
  bool selfCopy = targetOf[i] == i;
  if (sourceOf[i] >= 0 && sourceOf[i] != i)
    LOOM_MPI_CHECK(what, MPI_Irecv, out, static_cast<int>(count), type,
                   static_cast<int>(sourceOf[i]), kPermuteTag, group->comm,
                   &requests[active++]);
  if (targetOf[i] >= 0 && !selfCopy)
    LOOM_MPI_CHECK(what, MPI_Isend, source, static_cast<int>(count), type,
                   static_cast<int>(targetOf[i]), kPermuteTag, group->comm,
                   &requests[active++]);
  if (selfCopy && in != out)
    std::memmove(out, in, sizeof(T) * count);
  if (sourceOf[i] < 0)
    std::fill(out, out + count, T(0));
  LOOM_MPI_CHECK(what, MPI_Waitall, active, requests, MPI_STATUSES_IGNORE);
  return Status::success();
}

template <typename T>
Status Communicator::broadcast(const T *in, const Shape &shape,
                               const AxisList &axes, int64_t root, T *out) {
  LOOM_RETURN_IF_FAILED(contract().broadcast(shape, axes, root));
  std::string what = CollectiveContract::describe("broadcast", axes);
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t n = group->size;
  int64_t count = product(shape, 0, shape.size());
  if (group->index == root && in != out)
    std::memmove(out, in, sizeof(T) * count);
  if (n == 1)
    return Status::success();
  LOOM_RETURN_IF_FAILED(verifyCall(
      *group, what,
      signatureOf<T>(what + " root " + std::to_string(root), shape)));
  LOOM_MPI_CHECK(what, MPI_Bcast, out, static_cast<int>(count), datatypeOf<T>(),
                 static_cast<int>(root), group->comm);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Non-blocking all-reduce
//===----------------------------------------------------------------------===//

template <typename T>
Status Communicator::startAllReduce(const T *in, const Shape &shape,
                                    const AxisList &axes, ReduceKind kind,
                                    T *out, Request &request) {
  LOOM_RETURN_IF_FAILED(contract().allReduce(shape, axes, kind));
  std::string what = "non-blocking " + CollectiveContract::describe(kind, axes);
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t n = group->size;
  int64_t count = product(shape, 0, shape.size());
  auto reduce = std::make_unique<AsyncReduce>();
  reduce->what = what;
  reduce->group = group;
  reduce->type = datatypeOf<T>();
  reduce->elementSize = sizeof(T);
  reduce->fold = &foldErased<T>;
  reduce->kind = kind;
  reduce->count = count;
  reduce->out = reinterpret_cast<unsigned char *>(out);
  request = nextRequest++;
  if (n == 1) {
    std::memmove(out, in, sizeof(T) * count);
    reduce->round = 2;
    inFlight.emplace(request, std::move(reduce));
    return Status::success();
  }
  LOOM_RETURN_IF_FAILED(verifyCall(*group, what, signatureOf<T>(what, shape)));
  if (group->async == MPI_COMM_NULL) {
    LOOM_MPI_CHECK(what, MPI_Comm_dup, group->comm, &group->async);
    LOOM_MPI_CHECK(what, MPI_Comm_set_errhandler, group->async,
                   MPI_ERRORS_RETURN);
  }
  reduce->tag = static_cast<int>(2 * (group->started++ % kAsyncTagCycle));
  // The operand is copied so that the caller may reuse its buffer at once
  // (the static memory plan frees it at the start).
  reduce->sent.assign(reinterpret_cast<const unsigned char *>(in),
                      reinterpret_cast<const unsigned char *>(in + count));
  const T *sent = reinterpret_cast<const T *>(reduce->sent.data());
  int64_t index = group->index;
  MPI_Datatype type = reduce->type;
  auto post = [&](int64_t peer, const T *send, int sendCount, T *recv,
                  int recvCount) -> Status {
    MPI_Request pair[2];
    LOOM_MPI_CHECK(what, MPI_Irecv, recv, recvCount, type,
                   static_cast<int>(peer), reduce->tag, group->async, &pair[0]);
    LOOM_MPI_CHECK(what, MPI_Isend, send, sendCount, type,
                   static_cast<int>(peer), reduce->tag, group->async, &pair[1]);
    reduce->requests.push_back(pair[0]);
    reduce->requests.push_back(pair[1]);
    return Status::success();
  };
  int64_t bytes = count * static_cast<int64_t>(sizeof(T));
  if (bytes <= options.gatherReduceMaxBytes) {
    // One round, as allReduce: every member's tensor to every member.
    reduce->received.resize(sizeof(T) * count * n);
    T *all = reinterpret_cast<T *>(reduce->received.data());
    std::memcpy(all + index * count, sent, sizeof(T) * count);
    for (int64_t p = 0; p < n; ++p)
      if (p != index)
        LOOM_RETURN_IF_FAILED(post(p, sent, static_cast<int>(count),
                                   all + p * count, static_cast<int>(count)));
  } else {
    // Round one of two, as allReduce: chunk p of every tensor to member p.
    reduce->chunked = true;
    reduce->counts.resize(n);
    reduce->displs.resize(n);
    for (int64_t c = 0, at = 0; c < n; ++c) {
      reduce->counts[c] = static_cast<int>(count / n + (c < count % n ? 1 : 0));
      reduce->displs[c] = static_cast<int>(at);
      at += reduce->counts[c];
    }
    int mine = reduce->counts[index];
    reduce->received.resize(sizeof(T) * mine * n);
    reduce->folded.resize(sizeof(T) * mine);
    T *chunks = reinterpret_cast<T *>(reduce->received.data());
    std::memcpy(chunks + index * mine, sent + reduce->displs[index],
                sizeof(T) * mine);
    for (int64_t p = 0; p < n; ++p)
      if (p != index)
        LOOM_RETURN_IF_FAILED(post(p, sent + reduce->displs[p],
                                   reduce->counts[p], chunks + p * mine, mine));
  }
  inFlight.emplace(request, std::move(reduce));
  return Status::success();
}

template <typename T>
Status Communicator::startReduceScatter(const T *in, const Shape &shape,
                                        const AxisList &axes, int64_t dim,
                                        T *out, Request &request) {
  LOOM_RETURN_IF_FAILED(contract().reduceScatter(shape, axes, dim));
  std::string what =
      "non-blocking " + CollectiveContract::describe("reduce_scatter", axes);
  Group *group = nullptr;
  LOOM_RETURN_IF_FAILED(getGroup(axes, what, group));
  int64_t n = group->size;
  int64_t count = product(shape, 0, shape.size());
  auto reduce = std::make_unique<AsyncReduce>();
  reduce->what = what;
  reduce->group = group;
  reduce->type = datatypeOf<T>();
  reduce->elementSize = sizeof(T);
  reduce->fold = &foldErased<T>;
  reduce->kind = ReduceKind::Sum;
  // One round: the fold of advance() runs over this member's piece.
  reduce->count = count / n;
  reduce->out = reinterpret_cast<unsigned char *>(out);
  request = nextRequest++;
  if (n == 1) {
    std::memmove(out, in, sizeof(T) * count);
    reduce->round = 2;
    inFlight.emplace(request, std::move(reduce));
    return Status::success();
  }
  LOOM_RETURN_IF_FAILED(
      verifyCall(*group, what,
                 signatureOf<T>(what + " dim " + std::to_string(dim), shape)));
  if (group->async == MPI_COMM_NULL) {
    LOOM_MPI_CHECK(what, MPI_Comm_dup, group->comm, &group->async);
    LOOM_MPI_CHECK(what, MPI_Comm_set_errhandler, group->async,
                   MPI_ERRORS_RETURN);
  }
  reduce->tag = static_cast<int>(2 * (group->started++ % kAsyncTagCycle));
  // The operand, packed as reduceScatter packs it (piece j consecutive),
  // is the request's own copy: the caller may reuse `in` at once.
  int64_t piece = count / n;
  int64_t outer = product(shape, 0, dim);
  reduce->sent.resize(sizeof(T) * count);
  T *sent = reinterpret_cast<T *>(reduce->sent.data());
  if (outer > 1)
    swapLeadingAxes(in, outer, n, count / outer / n, sent);
  else
    std::memcpy(sent, in, sizeof(T) * count);
  reduce->received.resize(sizeof(T) * count);
  T *received = reinterpret_cast<T *>(reduce->received.data());
  int64_t index = group->index;
  std::memcpy(received + index * piece, sent + index * piece,
              sizeof(T) * piece);
  for (int64_t p = 0; p < n; ++p) {
    if (p == index)
      continue;
    MPI_Request pair[2];
    LOOM_MPI_CHECK(what, MPI_Irecv, received + p * piece,
                   static_cast<int>(piece), reduce->type, static_cast<int>(p),
                   reduce->tag, group->async, &pair[0]);
    LOOM_MPI_CHECK(what, MPI_Isend, sent + p * piece, static_cast<int>(piece),
                   reduce->type, static_cast<int>(p), reduce->tag, group->async,
                   &pair[1]);
    reduce->requests.push_back(pair[0]);
    reduce->requests.push_back(pair[1]);
  }
  inFlight.emplace(request, std::move(reduce));
  return Status::success();
}

Status Communicator::advance(AsyncReduce &reduce, bool block) {
  if (reduce.round == 2)
    return Status::success();
  int done = 1;
  int active = static_cast<int>(reduce.requests.size());
  if (block)
    LOOM_MPI_CHECK(reduce.what, MPI_Waitall, active, reduce.requests.data(),
                   MPI_STATUSES_IGNORE);
  else
    LOOM_MPI_CHECK(reduce.what, MPI_Testall, active, reduce.requests.data(),
                   &done, MPI_STATUSES_IGNORE);
  if (!done)
    return Status::success();
  reduce.requests.clear();
  Group &group = *reduce.group;
  int64_t n = group.size;
  if (!reduce.chunked) {
    reduce.fold(reduce.received.data(), n, reduce.count, reduce.kind,
                reduce.out);
    reduce.round = 2;
    return Status::success();
  }
  if (reduce.round == 1) {
    reduce.round = 2;
    return Status::success();
  }
  // Round two: fold this member's chunk in group order and gather the
  // folded chunks into `out`.
  int64_t index = group.index;
  int mine = reduce.counts[index];
  size_t size = reduce.elementSize;
  reduce.fold(reduce.received.data(), n, mine, reduce.kind,
              reduce.folded.data());
  std::memcpy(reduce.out + size * reduce.displs[index], reduce.folded.data(),
              size * mine);
  reduce.round = 1;
  for (int64_t p = 0; p < n; ++p) {
    if (p == index)
      continue;
    MPI_Request pair[2];
    LOOM_MPI_CHECK(reduce.what, MPI_Irecv, reduce.out + size * reduce.displs[p],
                   reduce.counts[p], reduce.type, static_cast<int>(p),
                   reduce.tag + 1, group.async, &pair[0]);
    LOOM_MPI_CHECK(reduce.what, MPI_Isend, reduce.folded.data(), mine,
                   reduce.type, static_cast<int>(p), reduce.tag + 1,
                   group.async, &pair[1]);
    reduce.requests.push_back(pair[0]);
    reduce.requests.push_back(pair[1]);
  }
  if (block)
    return advance(reduce, block);
  return Status::success();
}

Status Communicator::progress() {
  for (auto &[id, reduce] : inFlight)
    LOOM_RETURN_IF_FAILED(advance(*reduce, /*block=*/false));
  return Status::success();
}

Status Communicator::wait(Request request) {
  auto it = inFlight.find(request);
  if (it == inFlight.end()) {
    if (request < 0 || request >= nextRequest)
      return Status::failure("wait: request #" + std::to_string(request) +
                             " was never started");
    return Status::failure("wait: request #" + std::to_string(request) +
                           " was already waited");
  }
  Status status = advance(*it->second, /*block=*/true);
  inFlight.erase(it);
  return status;
}

Status Communicator::checkAllWaited() const {
  if (inFlight.empty())
    return Status::success();
  std::string list;
  for (const auto &[id, reduce] : inFlight)
    list += (list.empty() ? "" : ", ") + std::string("#") + std::to_string(id) +
            " (" + reduce->what + ")";
  return Status::failure(std::to_string(inFlight.size()) +
                         " non-blocking collective(s) started and never "
                         "waited at the end of the step: " +
                         list);
}

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

Status Communicator::reapSends() {
  // Drop the sends MPI has finished with, keeping the order of the rest.
  size_t kept = 0;
  for (size_t s = 0; s < pendingSends.size(); ++s) {
    int done = 0;
    LOOM_MPI_CHECK("send", MPI_Test, &pendingSends[s]->request, &done,
                   MPI_STATUS_IGNORE);
    if (!done)
      pendingSends[kept++] = std::move(pendingSends[s]);
  }
  pendingSends.resize(kept);
  return Status::success();
}

Status Communicator::waitSends() {
  for (auto &pending : pendingSends)
    LOOM_MPI_CHECK("send", MPI_Wait, &pending->request, MPI_STATUS_IGNORE);
  pendingSends.clear();
  return Status::success();
}

template <typename T>
Status Communicator::send(const T *in, const Shape &shape, int64_t to,
                          Tag tag) {
  LOOM_RETURN_IF_FAILED(contract().send(shape, to, tag));
  std::string what = CollectiveContract::describeSend(to, tag);
  if (to == rank)
    return Status::success();
  LOOM_RETURN_IF_FAILED(reapSends());
  int64_t count = product(shape, 0, shape.size());
  auto pending = std::make_unique<PendingSend>();
  pending->data.resize(sizeof(T) * count);
  std::memcpy(pending->data.data(), in, sizeof(T) * count);
  LOOM_MPI_CHECK(what, MPI_Isend, pending->data.data(), static_cast<int>(count),
                 datatypeOf<T>(), static_cast<int>(to), static_cast<int>(tag),
                 base, &pending->request);
  pendingSends.push_back(std::move(pending));
  return Status::success();
}

template <typename T>
Status Communicator::recv(T *out, const Shape &shape, int64_t from, Tag tag) {
  LOOM_RETURN_IF_FAILED(contract().recv(shape, from, tag));
  std::string what = CollectiveContract::describeRecv(from, tag);
  int64_t count = product(shape, 0, shape.size());
  if (from == rank) {
    std::fill(out, out + count, T(0));
    return Status::success();
  }
  // Our own sends must progress while we wait, or two ranks that send to
  // each other before receiving could stall.
  LOOM_RETURN_IF_FAILED(reapSends());
  // Probe first so that a message of the wrong size is reported with both
  // sizes rather than as MPI's truncation error.
  MPI_Status status;
  int mpiTag = static_cast<int>(tag);
  LOOM_MPI_CHECK(what, MPI_Probe, static_cast<int>(from), mpiTag, base,
                 &status);
  int bytes = 0;
  LOOM_MPI_CHECK(what, MPI_Get_count, &status, MPI_BYTE, &bytes);
  if (Status size = contract().received(what, shape, elementTypeName<T>(),
                                        sizeof(T), {bytes});
      !size.ok()) {
    // Consume the message so that the job can go on or end cleanly.
    std::vector<unsigned char> discard(static_cast<size_t>(bytes) + 1);
    LOOM_MPI_CHECK(what, MPI_Recv, discard.data(), bytes, MPI_BYTE,
                   static_cast<int>(from), mpiTag, base, MPI_STATUS_IGNORE);
    return size;
  }
  LOOM_MPI_CHECK(what, MPI_Recv, out, static_cast<int>(count), datatypeOf<T>(),
                 static_cast<int>(from), mpiTag, base, MPI_STATUS_IGNORE);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Instantiations
//===----------------------------------------------------------------------===//

#define LOOM_INSTANTIATE(T)                                                    \
  template Status Communicator::allGather<T>(const T *, const Shape &,         \
                                             const AxisList &, int64_t, T *);  \
  template Status Communicator::allSlice<T>(const T *, const Shape &,          \
                                            const AxisList &, int64_t, T *);   \
  template Status Communicator::allReduce<T>(                                  \
      const T *, const Shape &, const AxisList &, ReduceKind, T *);            \
  template Status Communicator::startAllReduce<T>(                             \
      const T *, const Shape &, const AxisList &, ReduceKind, T *, Request &); \
  template Status Communicator::reduceScatter<T>(                              \
      const T *, const Shape &, const AxisList &, int64_t, T *);               \
  template Status Communicator::startReduceScatter<T>(                         \
      const T *, const Shape &, const AxisList &, int64_t, T *, Request &);    \
  template Status Communicator::allToAll<T>(                                   \
      const T *, const Shape &, const AxisList &, int64_t, int64_t, T *);      \
  template Status Communicator::collectivePermute<T>(                          \
      const T *, const Shape &, const AxisList &, int64_t, T *);               \
  template Status Communicator::collectivePermute<T>(                          \
      const T *, const Shape &, const AxisList &,                              \
      const std::vector<std::pair<int64_t, int64_t>> &, T *);                  \
  template Status Communicator::broadcast<T>(const T *, const Shape &,         \
                                             const AxisList &, int64_t, T *);  \
  template Status Communicator::send<T>(const T *, const Shape &, int64_t,     \
                                        Tag);                                  \
  template Status Communicator::recv<T>(T *, const Shape &, int64_t, Tag);

LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
LOOM_INSTANTIATE(int64_t)

#undef LOOM_INSTANTIATE

} // namespace loom::runtime::mpi

//===- Layout.h - Device meshes and tensor layouts --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The algebra behind the `dist` dialect, in plain C++ so that the strategy
// search and the redistribution planner can use it without IR, and so that it
// is unit-tested exhaustively.
//
// A `Mesh` is an ordered list of named axes, e.g. {dp:2, tp:4}; a device's
// rank is the row-major index of its mesh coordinates (last axis fastest).
//
// A `Layout` says how a global tensor is spread over a mesh: for each tensor
// dim, the mesh axes splitting it, major to minor; and the `partial` axes
// over which the value is a pending sum. An axis used nowhere is replicated.
// Every collective has an exact effect on a layout (`Layout::allGather`, ...),
// so a chain of collectives can be checked without running it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_LAYOUT_LAYOUT_H
#define LOOM_ANALYSIS_LAYOUT_LAYOUT_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlir::loom::dist {

/// A value of type `T`, or a message saying why there is none. Layout
/// functions report invalid requests through this rather than asserting:
/// their inputs come from user-written IR and from search enumerations.
template <typename T> class ValueOrError {
public:
  ValueOrError(T value) : value(std::move(value)) {}

  /// Returns a failure carrying `message` (lowercase, no trailing period).
  static ValueOrError failure(std::string message) {
    ValueOrError result;
    result.message = std::move(message);
    return result;
  }

  bool ok() const { return value.has_value(); }
  explicit operator bool() const { return ok(); }

  /// The value; only valid when `ok()`.
  const T &operator*() const { return *value; }
  const T *operator->() const { return &*value; }

  /// Why there is no value; empty when `ok()`.
  const std::string &error() const { return message; }

private:
  ValueOrError() = default;

  std::optional<T> value;
  std::string message;
};

/// The largest `tag` of `dist.send`/`dist.recv` (constraint C4 of both ops):
/// the least upper bound MPI guarantees for MPI_TAG_UB, so that a program's
/// tags are valid on every MPI and on both runtime communicators.
inline constexpr int64_t kMaxMessageTag = 32767;

/// The axes of a logical device mesh.
class Mesh {
public:
  struct Axis {
    std::string name;
    int64_t size;
    bool operator==(const Axis &other) const {
      return name == other.name && size == other.size;
    }
  };

  /// The most devices a mesh may have: ranks must fit MPI's and NCCL's int.
  static constexpr int64_t kMaxDevices = int64_t(1) << 30;

  /// Builds a mesh, checking that names are non-empty and unique, sizes are
  /// at least 1, and the device count is at most kMaxDevices.
  static ValueOrError<Mesh> get(std::vector<Axis> axes);

  /// Parses `dp=2,tp=4` (the spelling of `loomc --mesh` and of the runtime's
  /// program specs), then checks it as `get`. The empty text is the mesh
  /// with no axes: one device.
  static ValueOrError<Mesh> parse(std::string_view text);

  size_t getNumAxes() const { return axes.size(); }
  const std::vector<Axis> &getAxes() const { return axes; }
  const Axis &getAxis(size_t index) const { return axes[index]; }

  /// The position of the axis named `name`, if there is one.
  std::optional<size_t> findAxis(std::string_view name) const;

  /// Checks that `name` is an axis of this mesh.
  std::optional<std::string> verifyAxis(std::string_view name) const;

  /// Checks the axes a collective names: at least one, each an axis of this
  /// mesh, none twice.
  std::optional<std::string>
  verifyGroupAxes(const std::vector<std::string> &axisNames) const;

  /// The number of devices: the product of the axis sizes.
  int64_t getNumDevices() const;

  /// The product of the sizes of the named axes (1 for none); every name must
  /// be an axis of this mesh.
  int64_t getGroupSize(const std::vector<std::string> &axisNames) const;

  /// The mesh coordinates of `rank`, one per axis.
  std::vector<int64_t> getCoordinates(int64_t rank) const;

  /// The rank at `coordinates` (row-major, last axis fastest).
  int64_t getRank(const std::vector<int64_t> &coordinates) const;

  /// The rank with coordinate `coordinate` on axis number `axis` and the
  /// coordinates of `rank` elsewhere: the peer of a `dist.send`/`dist.recv`
  /// along that axis. Both must be in range.
  int64_t getPeer(int64_t rank, size_t axis, int64_t coordinate) const;

  /// The position of `rank` inside its group over `axisNames`: the
  /// mixed-radix number formed by its coordinates on those axes, the first
  /// named axis most significant.
  int64_t getGroupIndex(int64_t rank,
                        const std::vector<std::string> &axisNames) const;

  /// The ranks that differ from `rank` only in the named axes (`rank`
  /// included), ordered by their group index. This is the group a collective
  /// over `axisNames` runs in.
  std::vector<int64_t>
  getGroup(int64_t rank, const std::vector<std::string> &axisNames) const;

  /// Every group over `axisNames`, ordered by their smallest rank; together
  /// they partition the devices (what a communicator split creates).
  std::vector<std::vector<int64_t>>
  getGroups(const std::vector<std::string> &axisNames) const;

  bool operator==(const Mesh &other) const { return axes == other.axes; }
  bool operator!=(const Mesh &other) const { return !(*this == other); }

  /// `{dp:2, tp:4}`.
  std::string toString() const;

private:
  explicit Mesh(std::vector<Axis> axes) : axes(std::move(axes)) {}

  std::vector<Axis> axes;
};

/// How a tensor is spread over a mesh, in canonical form: `partial` is sorted
/// in mesh order, while the order of axes within a dim is meaningful (major to
/// minor) and kept. Two layouts of the same mesh are equal exactly when they
/// place every element on the same devices.
///
/// A layout does not hold its mesh: functions that need axis sizes or the
/// mesh order take it as an argument, and a layout must only be used with the
/// mesh it was built against.
class Layout {
public:
  using AxisList = std::vector<std::string>;

  /// Builds a layout of a tensor of rank `dims.size()`, checking that every
  /// axis exists in `mesh` and is used at most once across dims and partial.
  /// `partial` may be in any order; it is stored in mesh order.
  static ValueOrError<Layout> get(const Mesh &mesh, std::vector<AxisList> dims,
                                  AxisList partial = {});

  /// The fully replicated layout of a rank-`rank` tensor.
  static Layout getReplicated(size_t rank);

  /// Parses what `toString` prints (`[["dp"], [], ["tp"]]`, with an optional
  /// `, partial = [...]`) or the whole attribute `#dist.layout<@m, ...>`,
  /// then checks it against `mesh` as `get`. For programs that read layouts
  /// from text without an MLIR context (the runtime's specs, checkpoints).
  static ValueOrError<Layout> parse(const Mesh &mesh, std::string_view text);

  size_t getRank() const { return dims.size(); }
  const std::vector<AxisList> &getDims() const { return dims; }
  const AxisList &getDimAxes(size_t dim) const { return dims[dim]; }
  const AxisList &getPartialAxes() const { return partial; }

  /// Whether `axis` splits some dim or is partial.
  bool uses(std::string_view axis) const;

  /// The dim `axis` splits, if any.
  std::optional<size_t> findSplitDim(std::string_view axis) const;

  /// Whether every device holds the whole value (no split, no partial).
  bool isReplicated() const;

  /// The axes of `mesh` this layout does not use, in mesh order: devices that
  /// differ only in them hold the same block (replicas).
  AxisList getReplicatedAxes(const Mesh &mesh) const;

  /// The number of blocks dim `dim` is cut into: the product of its axes.
  int64_t getNumBlocks(const Mesh &mesh, size_t dim) const;

  /// Checks that this layout fits a global tensor of shape `globalShape`:
  /// the ranks agree and every dim's axes divide its size.
  std::optional<std::string>
  verifyShape(const Mesh &mesh, const std::vector<int64_t> &globalShape) const;

  /// verifyShape without the message: whether the layout fits. For the
  /// redistribution planner's search, which discards most of the layouts it
  /// tries and would otherwise build a message for each.
  bool fitsShape(const Mesh &mesh,
                 const std::vector<int64_t> &globalShape) const;

  /// The shape every device holds.
  ValueOrError<std::vector<int64_t>>
  getLocalShape(const Mesh &mesh,
                const std::vector<int64_t> &globalShape) const;

  /// The global shape whose local shape is `localShape`.
  std::vector<int64_t>
  getGlobalShape(const Mesh &mesh,
                 const std::vector<int64_t> &localShape) const;

  /// For each dim, the index of the block `rank` holds: the mixed-radix number
  /// formed by the rank's coordinates on that dim's axes (major first). On
  /// {dp:2, tp:4}, a dim split [dp, tp] gives block dp * 4 + tp.
  std::vector<int64_t> getBlockIndex(const Mesh &mesh, int64_t rank) const;

  /// For each dim, the global element offset of the block `rank` holds.
  ValueOrError<std::vector<int64_t>>
  getBlockOffset(const Mesh &mesh, const std::vector<int64_t> &globalShape,
                 int64_t rank) const;

  //===--------------------------------------------------------------------===//
  // Effects of the collectives. Each returns the layout of the result of the
  // collective applied to every device's local tensor, or why the collective
  // does not apply. `axes` orders the group (see Mesh::getGroup).
  //===--------------------------------------------------------------------===//

  /// [.., d: P ++ axes, ..] -> [.., d: P, ..]: concatenates the group's
  /// blocks along `dim`; `axes` must be the minor end of dim's list.
  ValueOrError<Layout> allGather(const Mesh &mesh, size_t dim,
                                 const AxisList &axes) const;

  /// [.., d: P, ..] -> [.., d: P ++ axes, ..]: each device keeps its piece of
  /// its block (no traffic); `axes` must be unused.
  ValueOrError<Layout> allSlice(const Mesh &mesh, size_t dim,
                                const AxisList &axes) const;

  /// partial S + axes -> partial S: sums over the group; `axes` must be
  /// partial.
  ValueOrError<Layout> allReduce(const Mesh &mesh, const AxisList &axes) const;

  /// [.., d: P, ..] partial S + axes -> [.., d: P ++ axes, ..] partial S:
  /// sums over the group and keeps each device's piece.
  ValueOrError<Layout> reduceScatter(const Mesh &mesh, size_t dim,
                                     const AxisList &axes) const;

  /// [s: Q, c: P ++ axes] -> [s: Q ++ axes, c: P]: each device cuts its block
  /// along `splitDim` into one piece per group member and concatenates the
  /// pieces it receives along `concatDim`, so the axes move from the minor
  /// end of `concatDim` to the minor end of `splitDim`.
  ValueOrError<Layout> allToAll(const Mesh &mesh, size_t splitDim,
                                size_t concatDim, const AxisList &axes) const;

  /// Unchanged: a shift over the group moves data only between replicas, so
  /// the layout must be replicated over `axes` (unused). Shifting split data,
  /// as ring attention does, leaves the layout algebra: the program then
  /// tracks which block it holds itself.
  ValueOrError<Layout> collectivePermute(const Mesh &mesh,
                                         const AxisList &axes) const;

  /// Unchanged: every group member receives the root's data, which equals its
  /// own only if the layout is replicated over `axes` (unused). This is how
  /// replicas are made consistent (e.g. initial weights).
  ValueOrError<Layout> broadcast(const Mesh &mesh, const AxisList &axes) const;

  bool operator==(const Layout &other) const {
    return dims == other.dims && partial == other.partial;
  }
  bool operator!=(const Layout &other) const { return !(*this == other); }

  /// A hash consistent with `==`.
  size_t hash() const;

  /// The attribute's body: `[["dp"], [], ["tp"]], partial = ["x"]`, where the
  /// partial clause is omitted when empty.
  std::string toString() const;

private:
  Layout(std::vector<AxisList> dims, AxisList partial)
      : dims(std::move(dims)), partial(std::move(partial)) {}

  /// Checks that `dim` is a dim of this layout.
  std::optional<std::string> checkDim(size_t dim, const char *role) const;

  std::vector<AxisList> dims;
  AxisList partial;
};

} // namespace mlir::loom::dist

template <> struct std::hash<mlir::loom::dist::Layout> {
  size_t operator()(const mlir::loom::dist::Layout &layout) const {
    return layout.hash();
  }
};

#endif // LOOM_ANALYSIS_LAYOUT_LAYOUT_H

//===- Layout.cpp - Device meshes and tensor layouts ----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Implements meshes, layouts and the effect of each collective on a layout.
// test/Unit/Analysis/LayoutTest.cpp checks every effect against the data
// semantics of the collective, materialized device by device.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Layout/Layout.h"
#include "loom/Support/InputLimits.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <sstream>

using namespace mlir::loom::dist;

/// `tp` with backquotes, the way messages quote axis names.
static std::string quote(std::string_view name) {
  return "`" + std::string(name) + "`";
}

/// `[`dp`, `tp`]`, for messages about several axes.
static std::string quoteList(const std::vector<std::string> &names) {
  std::string result = "[";
  for (size_t i = 0; i < names.size(); ++i)
    result += (i ? ", " : "") + quote(names[i]);
  return result + "]";
}

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

/// Why `text` is not UTF-8 ("byte 0xFF at byte 1"), or nullopt when it is.
/// Axis names are written to plan JSON and messages, which must be UTF-8;
/// the message cannot quote the name itself.
static std::optional<std::string> describeNonUTF8(std::string_view text) {
  std::optional<size_t> bad = loom::support::findInvalidUTF8(text);
  if (!bad)
    return std::nullopt;
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02X",
                static_cast<unsigned char>(text[*bad]));
  return "byte " + std::string(hex) + " at byte " + std::to_string(*bad);
}

ValueOrError<Mesh> Mesh::get(std::vector<Axis> axes) {
  int64_t devices = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].name.empty())
      return ValueOrError<Mesh>::failure("mesh axis " + std::to_string(i) +
                                         " has an empty name");
    if (std::optional<std::string> bad = describeNonUTF8(axes[i].name))
      return ValueOrError<Mesh>::failure("mesh axis " + std::to_string(i) +
                                         " has a name that is not UTF-8 (" +
                                         *bad + " of the name)");
    if (axes[i].size < 1)
      return ValueOrError<Mesh>::failure(
          "mesh axis " + quote(axes[i].name) + " has size " +
          std::to_string(axes[i].size) + "; sizes must be at least 1");
    for (size_t j = 0; j < i; ++j)
      if (axes[j].name == axes[i].name)
        return ValueOrError<Mesh>::failure("mesh axis " + quote(axes[i].name) +
                                           " is declared twice");
    // Every device count, group size and rank below fits in int64_t (and a
    // rank in int32, as MPI and NCCL need) once the mesh itself does.
    if (axes[i].size > kMaxDevices / devices)
      return ValueOrError<Mesh>::failure(
          "mesh has more than " + std::to_string(kMaxDevices) +
          " devices (at axis " + quote(axes[i].name) + " of size " +
          std::to_string(axes[i].size) + ")");
    devices *= axes[i].size;
  }
  return Mesh(std::move(axes));
}

ValueOrError<Mesh> Mesh::parse(std::string_view text) {
  // Every message below quotes the text.
  if (std::optional<std::string> bad = describeNonUTF8(text))
    return ValueOrError<Mesh>::failure("mesh: the text is not UTF-8 (" + *bad +
                                       "); axis names must be UTF-8");
  std::vector<Axis> axes;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    size_t equals = item.find('=');
    if (equals == std::string_view::npos)
      return ValueOrError<Mesh>::failure("mesh `" + std::string(text) +
                                         "`: expected NAME=SIZE, got `" +
                                         std::string(item) + "`");
    std::string_view digits = item.substr(equals + 1);
    int64_t size = 0;
    auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), size);
    if (error != std::errc() || end != digits.data() + digits.size())
      return ValueOrError<Mesh>::failure(
          "mesh `" + std::string(text) + "`: axis " +
          quote(item.substr(0, equals)) + " has size `" + std::string(digits) +
          "`, expected an integer");
    axes.push_back({std::string(item.substr(0, equals)), size});
  }
  return get(std::move(axes));
}

std::optional<size_t> Mesh::findAxis(std::string_view name) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name)
      return i;
  return std::nullopt;
}

std::optional<std::string> Mesh::verifyAxis(std::string_view name) const {
  if (findAxis(name))
    return std::nullopt;
  return quote(name) + " is not an axis of mesh " + toString();
}

std::optional<std::string>
Mesh::verifyGroupAxes(const std::vector<std::string> &axisNames) const {
  if (axisNames.empty())
    return std::string("a collective needs at least one mesh axis");
  for (size_t i = 0; i < axisNames.size(); ++i) {
    if (std::optional<std::string> error = verifyAxis(axisNames[i]))
      return error;
    for (size_t j = 0; j < i; ++j)
      if (axisNames[j] == axisNames[i])
        return "mesh axis " + quote(axisNames[i]) + " is named twice";
  }
  return std::nullopt;
}

int64_t Mesh::getNumDevices() const {
  int64_t count = 1;
  for (const Axis &axis : axes)
    count *= axis.size;
  return count;
}

int64_t Mesh::getGroupSize(const std::vector<std::string> &axisNames) const {
  int64_t size = 1;
  for (const std::string &name : axisNames)
    size *= axes[*findAxis(name)].size;
  return size;
}

std::vector<int64_t> Mesh::getCoordinates(int64_t rank) const {
  std::vector<int64_t> coordinates(axes.size());
  for (size_t i = axes.size(); i-- > 0;) {
    coordinates[i] = rank % axes[i].size;
    rank /= axes[i].size;
  }
  return coordinates;
}

int64_t Mesh::getRank(const std::vector<int64_t> &coordinates) const {
  int64_t rank = 0;
  for (size_t i = 0; i < axes.size(); ++i)
    rank = rank * axes[i].size + coordinates[i];
  return rank;
}

int64_t Mesh::getGroupIndex(int64_t rank,
                            const std::vector<std::string> &axisNames) const {
  std::vector<int64_t> coordinates = getCoordinates(rank);
  int64_t index = 0;
  for (const std::string &name : axisNames) {
    size_t axis = *findAxis(name);
    index = index * axes[axis].size + coordinates[axis];
  }
  return index;
}

int64_t Mesh::getPeer(int64_t rank, size_t axis, int64_t coordinate) const {
  std::vector<int64_t> coordinates = getCoordinates(rank);
  coordinates[axis] = coordinate;
  return getRank(coordinates);
}

std::vector<int64_t>
Mesh::getGroup(int64_t rank, const std::vector<std::string> &axisNames) const {
  std::vector<size_t> positions;
  for (const std::string &name : axisNames)
    positions.push_back(*findAxis(name));
  int64_t size = getGroupSize(axisNames);
  std::vector<int64_t> coordinates = getCoordinates(rank);
  std::vector<int64_t> group;
  group.reserve(size);
  // Count through the group indices, decoding each into coordinates on the
  // named axes, minor axis last.
  for (int64_t index = 0; index < size; ++index) {
    int64_t rest = index;
    for (size_t i = positions.size(); i-- > 0;) {
      coordinates[positions[i]] = rest % axes[positions[i]].size;
      rest /= axes[positions[i]].size;
    }
    group.push_back(getRank(coordinates));
  }
  return group;
}

std::vector<std::vector<int64_t>>
Mesh::getGroups(const std::vector<std::string> &axisNames) const {
  std::vector<std::vector<int64_t>> groups;
  std::vector<bool> seen(getNumDevices(), false);
  for (int64_t rank = 0; rank < getNumDevices(); ++rank) {
    if (seen[rank])
      continue;
    groups.push_back(getGroup(rank, axisNames));
    for (int64_t member : groups.back())
      seen[member] = true;
  }
  return groups;
}

std::string Mesh::toString() const {
  std::string result = "{";
  for (size_t i = 0; i < axes.size(); ++i)
    result +=
        (i ? ", " : "") + axes[i].name + ":" + std::to_string(axes[i].size);
  return result + "}";
}

//===----------------------------------------------------------------------===//
// Layout: construction and queries
//===----------------------------------------------------------------------===//

ValueOrError<Layout> Layout::get(const Mesh &mesh, std::vector<AxisList> dims,
                                 AxisList partial) {
  std::vector<std::string> seen;
  auto check = [&](const std::string &axis) -> std::optional<std::string> {
    if (!mesh.findAxis(axis))
      return "layout names " + quote(axis) + ", which is not an axis of mesh " +
             mesh.toString();
    if (std::find(seen.begin(), seen.end(), axis) != seen.end())
      return "mesh axis " + quote(axis) + " is used twice in the layout";
    seen.push_back(axis);
    return std::nullopt;
  };
  for (const AxisList &axes : dims)
    for (const std::string &axis : axes)
      if (std::optional<std::string> error = check(axis))
        return ValueOrError<Layout>::failure(*error);
  for (const std::string &axis : partial)
    if (std::optional<std::string> error = check(axis))
      return ValueOrError<Layout>::failure(*error);

  // Canonical form: a pending sum does not depend on the order of its axes.
  std::sort(partial.begin(), partial.end(),
            [&](const std::string &a, const std::string &b) {
              return *mesh.findAxis(a) < *mesh.findAxis(b);
            });
  return Layout(std::move(dims), std::move(partial));
}

Layout Layout::getReplicated(size_t rank) {
  return Layout(std::vector<AxisList>(rank), {});
}

namespace {
/// A recursive-descent reader of the spelling `Layout::toString` prints.
class LayoutReader {
public:
  explicit LayoutReader(std::string_view text) : text(text) {}

  bool consume(std::string_view token) {
    skipSpace();
    if (text.substr(pos, token.size()) != token)
      return false;
    pos += token.size();
    return true;
  }
  bool atEnd() {
    skipSpace();
    return pos == text.size();
  }
  /// A non-empty axis name in double quotes.
  bool readName(std::string &out) {
    if (!consume("\""))
      return false;
    size_t end = text.find('"', pos);
    if (end == std::string_view::npos)
      return false;
    out = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return !out.empty();
  }
  bool readAxisList(Layout::AxisList &out) {
    if (!consume("["))
      return false;
    if (consume("]"))
      return true;
    do {
      std::string axis;
      if (!readName(axis))
        return false;
      out.push_back(std::move(axis));
    } while (consume(","));
    return consume("]");
  }
  /// `@name,` of the whole attribute: the mesh is the caller's.
  bool skipMeshReference() {
    if (!consume("@"))
      return false;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) ||
            text[pos] == '_' || text[pos] == '.'))
      ++pos;
    return consume(",");
  }
  size_t position() const { return pos; }

private:
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }

  std::string_view text;
  size_t pos = 0;
};
} // namespace

ValueOrError<Layout> Layout::parse(const Mesh &mesh, std::string_view text) {
  LayoutReader reader(text);
  auto fail = [&]() {
    return ValueOrError<Layout>::failure(
        "cannot parse layout `" + std::string(text) + "` at character " +
        std::to_string(reader.position()) +
        ": expected [[\"axis\", ...], ...] with an optional "
        "`, partial = [...]`");
  };
  bool wrapped = reader.consume("#dist.layout<");
  if (wrapped && !reader.skipMeshReference())
    return fail();
  std::vector<AxisList> dims;
  if (!reader.consume("["))
    return fail();
  if (!reader.consume("]")) {
    do {
      AxisList axes;
      if (!reader.readAxisList(axes))
        return fail();
      dims.push_back(std::move(axes));
    } while (reader.consume(","));
    if (!reader.consume("]"))
      return fail();
  }
  AxisList partial;
  if (reader.consume(",") &&
      (!reader.consume("partial") || !reader.consume("=") ||
       !reader.readAxisList(partial)))
    return fail();
  if ((wrapped && !reader.consume(">")) || !reader.atEnd())
    return fail();
  return get(mesh, std::move(dims), std::move(partial));
}

bool Layout::uses(std::string_view axis) const {
  if (findSplitDim(axis))
    return true;
  return std::find(partial.begin(), partial.end(), axis) != partial.end();
}

std::optional<size_t> Layout::findSplitDim(std::string_view axis) const {
  for (size_t dim = 0; dim < dims.size(); ++dim)
    if (std::find(dims[dim].begin(), dims[dim].end(), axis) != dims[dim].end())
      return dim;
  return std::nullopt;
}

bool Layout::isReplicated() const {
  if (!partial.empty())
    return false;
  return std::all_of(dims.begin(), dims.end(),
                     [](const AxisList &axes) { return axes.empty(); });
}

Layout::AxisList Layout::getReplicatedAxes(const Mesh &mesh) const {
  AxisList replicated;
  for (const Mesh::Axis &axis : mesh.getAxes())
    if (!uses(axis.name))
      replicated.push_back(axis.name);
  return replicated;
}

int64_t Layout::getNumBlocks(const Mesh &mesh, size_t dim) const {
  return mesh.getGroupSize(dims[dim]);
}

std::optional<std::string>
Layout::verifyShape(const Mesh &mesh,
                    const std::vector<int64_t> &globalShape) const {
  if (globalShape.size() != dims.size())
    return "layout of rank " + std::to_string(dims.size()) +
           " does not fit a tensor of rank " +
           std::to_string(globalShape.size());
  for (size_t dim = 0; dim < dims.size(); ++dim) {
    int64_t blocks = getNumBlocks(mesh, dim);
    if (globalShape[dim] % blocks == 0)
      continue;
    std::string what = dims[dim].size() == 1
                           ? "mesh axis " + quote(dims[dim][0]) + " (size " +
                                 std::to_string(blocks) + ") does not"
                           : "mesh axes " + quoteList(dims[dim]) + " (" +
                                 std::to_string(blocks) + " blocks) do not";
    return what + " divide dim " + std::to_string(dim) + " (size " +
           std::to_string(globalShape[dim]) + ")";
  }
  return std::nullopt;
}

bool Layout::fitsShape(const Mesh &mesh,
                       const std::vector<int64_t> &globalShape) const {
  if (globalShape.size() != dims.size())
    return false;
  for (size_t dim = 0; dim < dims.size(); ++dim)
    if (globalShape[dim] % getNumBlocks(mesh, dim) != 0)
      return false;
  return true;
}

ValueOrError<std::vector<int64_t>>
Layout::getLocalShape(const Mesh &mesh,
                      const std::vector<int64_t> &globalShape) const {
  if (std::optional<std::string> error = verifyShape(mesh, globalShape))
    return ValueOrError<std::vector<int64_t>>::failure(*error);
  std::vector<int64_t> local = globalShape;
  for (size_t dim = 0; dim < dims.size(); ++dim)
    local[dim] /= getNumBlocks(mesh, dim);
  return local;
}

std::vector<int64_t>
Layout::getGlobalShape(const Mesh &mesh,
                       const std::vector<int64_t> &localShape) const {
  std::vector<int64_t> global = localShape;
  for (size_t dim = 0; dim < dims.size() && dim < global.size(); ++dim)
    global[dim] *= getNumBlocks(mesh, dim);
  return global;
}

std::vector<int64_t> Layout::getBlockIndex(const Mesh &mesh,
                                           int64_t rank) const {
  std::vector<int64_t> index;
  index.reserve(dims.size());
  for (const AxisList &axes : dims)
    index.push_back(mesh.getGroupIndex(rank, axes));
  return index;
}

ValueOrError<std::vector<int64_t>>
Layout::getBlockOffset(const Mesh &mesh,
                       const std::vector<int64_t> &globalShape,
                       int64_t rank) const {
  ValueOrError<std::vector<int64_t>> local = getLocalShape(mesh, globalShape);
  if (!local)
    return local;
  if (rank < 0 || rank >= mesh.getNumDevices())
    return ValueOrError<std::vector<int64_t>>::failure(
        "rank " + std::to_string(rank) + " is not on mesh " + mesh.toString());
  std::vector<int64_t> offset = getBlockIndex(mesh, rank);
  for (size_t dim = 0; dim < offset.size(); ++dim)
    offset[dim] *= (*local)[dim];
  return offset;
}

//===----------------------------------------------------------------------===//
// Layout: effects of the collectives
//===----------------------------------------------------------------------===//

std::optional<std::string> Layout::checkDim(size_t dim,
                                            const char *role) const {
  if (dim < dims.size())
    return std::nullopt;
  return std::string(role) + " " + std::to_string(dim) +
         " is out of range for a layout of rank " + std::to_string(dims.size());
}

/// Whether `axes` is the minor end of `list`, in the same order.
static bool isMinorSuffix(const std::vector<std::string> &list,
                          const std::vector<std::string> &axes) {
  return axes.size() <= list.size() &&
         std::equal(axes.begin(), axes.end(), list.end() - axes.size());
}

/// The message for a collective that must take `axes` off the minor end of
/// `dim`'s list but cannot.
static std::string notMinorSuffix(const std::vector<std::string> &list,
                                  size_t dim,
                                  const std::vector<std::string> &axes) {
  return "mesh axes " + quoteList(axes) + " are not the minor end of dim " +
         std::to_string(dim) + "'s axes " + quoteList(list);
}

ValueOrError<Layout> Layout::allGather(const Mesh &mesh, size_t dim,
                                       const AxisList &axes) const {
  if (std::optional<std::string> error = mesh.verifyGroupAxes(axes))
    return ValueOrError<Layout>::failure(*error);
  if (std::optional<std::string> error = checkDim(dim, "gather dim"))
    return ValueOrError<Layout>::failure(*error);
  // The group's blocks are consecutive, in group order, only when the axes
  // are the minor end of the dim's list.
  if (!isMinorSuffix(dims[dim], axes))
    return ValueOrError<Layout>::failure(notMinorSuffix(dims[dim], dim, axes));
  Layout result = *this;
  result.dims[dim].resize(dims[dim].size() - axes.size());
  return result;
}

ValueOrError<Layout> Layout::allSlice(const Mesh &mesh, size_t dim,
                                      const AxisList &axes) const {
  if (std::optional<std::string> error = mesh.verifyGroupAxes(axes))
    return ValueOrError<Layout>::failure(*error);
  if (std::optional<std::string> error = checkDim(dim, "slice dim"))
    return ValueOrError<Layout>::failure(*error);
  // Slicing is only a layout when the group members hold the same data.
  for (const std::string &axis : axes)
    if (uses(axis))
      return ValueOrError<Layout>::failure(
          "mesh axis " + quote(axis) +
          " is already used by the layout; only a replicated axis can slice");
  Layout result = *this;
  result.dims[dim].insert(result.dims[dim].end(), axes.begin(), axes.end());
  return result;
}

/// Removes `axes` from `partial`, or says which axis is not partial.
static std::optional<std::string>
removePartial(std::vector<std::string> &partial,
              const std::vector<std::string> &axes, const char *collective) {
  for (const std::string &axis : axes) {
    auto it = std::find(partial.begin(), partial.end(), axis);
    if (it == partial.end())
      return std::string(collective) + " over mesh axis " + quote(axis) +
             " needs a value that is partial over it";
    partial.erase(it);
  }
  return std::nullopt;
}

ValueOrError<Layout> Layout::allReduce(const Mesh &mesh,
                                       const AxisList &axes) const {
  if (std::optional<std::string> error = mesh.verifyGroupAxes(axes))
    return ValueOrError<Layout>::failure(*error);
  // Summing replicas would multiply the value by the group size, and summing
  // blocks of a split dim would add unrelated elements.
  Layout result = *this;
  if (std::optional<std::string> error =
          removePartial(result.partial, axes, "all_reduce"))
    return ValueOrError<Layout>::failure(*error);
  return result;
}

ValueOrError<Layout> Layout::reduceScatter(const Mesh &mesh, size_t dim,
                                           const AxisList &axes) const {
  if (std::optional<std::string> error = mesh.verifyGroupAxes(axes))
    return ValueOrError<Layout>::failure(*error);
  if (std::optional<std::string> error = checkDim(dim, "scatter dim"))
    return ValueOrError<Layout>::failure(*error);
  Layout result = *this;
  if (std::optional<std::string> error =
          removePartial(result.partial, axes, "reduce_scatter"))
    return ValueOrError<Layout>::failure(*error);
  result.dims[dim].insert(result.dims[dim].end(), axes.begin(), axes.end());
  return result;
}

ValueOrError<Layout> Layout::allToAll(const Mesh &mesh, size_t splitDim,
                                      size_t concatDim,
                                      const AxisList &axes) const {
  if (std::optional<std::string> error = mesh.verifyGroupAxes(axes))
    return ValueOrError<Layout>::failure(*error);
  if (std::optional<std::string> error = checkDim(splitDim, "split dim"))
    return ValueOrError<Layout>::failure(*error);
  if (std::optional<std::string> error = checkDim(concatDim, "concat dim"))
    return ValueOrError<Layout>::failure(*error);
  // Within one dim the received pieces would interleave, not form a block.
  if (splitDim == concatDim)
    return ValueOrError<Layout>::failure(
        "all_to_all needs distinct split and concat dims, got " +
        std::to_string(splitDim) + " twice");
  if (!isMinorSuffix(dims[concatDim], axes))
    return ValueOrError<Layout>::failure(
        notMinorSuffix(dims[concatDim], concatDim, axes));
  Layout result = *this;
  result.dims[concatDim].resize(dims[concatDim].size() - axes.size());
  result.dims[splitDim].insert(result.dims[splitDim].end(), axes.begin(),
                               axes.end());
  return result;
}

/// Checks that `layout` is replicated over `axes`, for collectives that only
/// move data between replicas.
static std::optional<std::string>
checkReplicatedOver(const Layout &layout, const std::vector<std::string> &axes,
                    const char *collective) {
  for (const std::string &axis : axes) {
    if (std::optional<size_t> dim = layout.findSplitDim(axis))
      return std::string(collective) + " over mesh axis " + quote(axis) +
             " would move blocks of dim " + std::to_string(*dim) +
             ", which it splits";
    if (layout.uses(axis))
      return std::string(collective) + " over mesh axis " + quote(axis) +
             " would move partial sums over it";
  }
  return std::nullopt;
}

ValueOrError<Layout> Layout::collectivePermute(const Mesh &mesh,
                                               const AxisList &axes) const {
  if (std::optional<std::string> error = mesh.verifyGroupAxes(axes))
    return ValueOrError<Layout>::failure(*error);
  if (std::optional<std::string> error =
          checkReplicatedOver(*this, axes, "collective_permute"))
    return ValueOrError<Layout>::failure(*error);
  return *this;
}

ValueOrError<Layout> Layout::broadcast(const Mesh &mesh,
                                       const AxisList &axes) const {
  if (std::optional<std::string> error = mesh.verifyGroupAxes(axes))
    return ValueOrError<Layout>::failure(*error);
  if (std::optional<std::string> error =
          checkReplicatedOver(*this, axes, "broadcast"))
    return ValueOrError<Layout>::failure(*error);
  return *this;
}

//===----------------------------------------------------------------------===//
// Layout: hashing and printing
//===----------------------------------------------------------------------===//

/// Mixes `value` into `seed` (the boost::hash_combine recipe).
static void combine(size_t &seed, size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

size_t Layout::hash() const {
  size_t seed = dims.size();
  std::hash<std::string> hashString;
  for (const AxisList &axes : dims) {
    // The list length separates [[a, b], []] from [[a], [b]].
    combine(seed, axes.size());
    for (const std::string &axis : axes)
      combine(seed, hashString(axis));
  }
  combine(seed, partial.size());
  for (const std::string &axis : partial)
    combine(seed, hashString(axis));
  return seed;
}

/// `["dp", "tp"]`.
static void printList(std::ostream &os, const std::vector<std::string> &list) {
  os << '[';
  for (size_t i = 0; i < list.size(); ++i)
    os << (i ? ", " : "") << '"' << list[i] << '"';
  os << ']';
}

std::string Layout::toString() const {
  std::ostringstream os;
  os << '[';
  for (size_t dim = 0; dim < dims.size(); ++dim) {
    os << (dim ? ", " : "");
    printList(os, dims[dim]);
  }
  os << ']';
  if (!partial.empty()) {
    os << ", partial = ";
    printList(os, partial);
  }
  return os.str();
}

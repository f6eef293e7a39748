//===- LayoutSemanticsTest.cpp - Collective effects checked on data -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The layout library predicts the layout each collective produces. These tests
// check every prediction against the data: for small meshes and shapes they
// enumerate every layout and every applicable collective, materialize each
// device's local tensor from a global iota, run the collective by hand (gather,
// slice, sum, exchange over the groups `Mesh::getGroup` names) and check that
// the results are exactly the local tensors of the predicted layout:
// replicas hold identical data, and placing every block at its offset (summing
// over partial axes) rebuilds the iota.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Layout/Layout.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <functional>

using namespace mlir::loom::dist;

namespace {

using Shape = std::vector<int64_t>;
using Axes = Layout::AxisList;

//===----------------------------------------------------------------------===//
// A tiny dense tensor
//===----------------------------------------------------------------------===//

/// A row-major tensor of int64 (exact sums, so comparisons are exact).
struct Tensor {
  Shape shape;
  std::vector<int64_t> data;

  explicit Tensor(Shape shape) : shape(std::move(shape)) {
    int64_t count = 1;
    for (int64_t size : this->shape)
      count *= size;
    data.assign(count, 0);
  }

  int64_t linear(const Shape &index) const {
    int64_t result = 0;
    for (size_t dim = 0; dim < shape.size(); ++dim)
      result = result * shape[dim] + index[dim];
    return result;
  }
  int64_t &at(const Shape &index) { return data[linear(index)]; }
  int64_t at(const Shape &index) const { return data[linear(index)]; }

  bool operator==(const Tensor &other) const {
    return shape == other.shape && data == other.data;
  }
};

/// Calls `fn` on every index of `shape`, in row-major order.
void forEachIndex(const Shape &shape,
                  const std::function<void(const Shape &)> &fn) {
  for (int64_t size : shape)
    if (size == 0)
      return;
  Shape index(shape.size(), 0);
  while (true) {
    fn(index);
    size_t dim = shape.size();
    while (dim > 0 && ++index[dim - 1] == shape[dim - 1])
      index[--dim] = 0;
    if (dim == 0)
      return;
  }
}

Tensor iota(const Shape &shape) {
  Tensor result(shape);
  for (size_t i = 0; i < result.data.size(); ++i)
    result.data[i] = static_cast<int64_t>(i);
  return result;
}

/// The sub-tensor of `size` at `offset`.
Tensor extract(const Tensor &source, const Shape &offset, const Shape &size) {
  Tensor result(size);
  forEachIndex(size, [&](const Shape &index) {
    Shape at = index;
    for (size_t dim = 0; dim < at.size(); ++dim)
      at[dim] += offset[dim];
    result.at(index) = source.at(at);
  });
  return result;
}

/// Piece `i` of `n` equal pieces of `source` along `dim`.
Tensor piece(const Tensor &source, size_t dim, int64_t n, int64_t i) {
  Shape size = source.shape, offset(size.size(), 0);
  size[dim] /= n;
  offset[dim] = i * size[dim];
  return extract(source, offset, size);
}

Tensor concat(const std::vector<Tensor> &parts, size_t dim) {
  Shape shape = parts.front().shape;
  shape[dim] *= static_cast<int64_t>(parts.size());
  Tensor result(shape);
  for (size_t p = 0; p < parts.size(); ++p)
    forEachIndex(parts[p].shape, [&](const Shape &index) {
      Shape at = index;
      at[dim] += static_cast<int64_t>(p) * parts[p].shape[dim];
      result.at(at) = parts[p].at(index);
    });
  return result;
}

Tensor sum(const std::vector<Tensor> &parts) {
  Tensor result = parts.front();
  for (size_t p = 1; p < parts.size(); ++p)
    for (size_t i = 0; i < result.data.size(); ++i)
      result.data[i] += parts[p].data[i];
  return result;
}

//===----------------------------------------------------------------------===//
// Distributing and reassembling a global tensor
//===----------------------------------------------------------------------===//

/// The mesh axes a layout leaves replicated.
Axes replicatedAxes(const Mesh &mesh, const Layout &layout) {
  Axes result;
  for (const Mesh::Axis &axis : mesh.getAxes())
    if (!layout.uses(axis.name))
      result.push_back(axis.name);
  return result;
}

/// Every device's local tensor of `global` under `layout`. A partial value is
/// split into contributions that differ per device (so summing over the wrong
/// group shows) and add up to the block over the partial axes.
std::vector<Tensor> distribute(const Mesh &mesh, const Layout &layout,
                               const Tensor &global) {
  const Axes &partial = layout.getPartialAxes();
  int64_t contributors = mesh.getGroupSize(partial);
  Shape local = *layout.getLocalShape(mesh, global.shape);
  std::vector<Tensor> locals;
  for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank) {
    Tensor block = extract(
        global, *layout.getBlockOffset(mesh, global.shape, rank), local);
    // Contributor 0 holds the block plus -(n - 1) times a noise pattern, the
    // others the noise pattern alone.
    int64_t p = mesh.getGroupIndex(rank, partial);
    int64_t weight = p == 0 ? -(contributors - 1) : 1;
    for (size_t i = 0; i < block.data.size(); ++i)
      block.data[i] = (p == 0 ? block.data[i] : 0) +
                      weight * (1000 + 7 * static_cast<int64_t>(i));
    locals.push_back(std::move(block));
  }
  return locals;
}

/// Checks that `locals` are exactly the local tensors of `global` under
/// `layout`; returns what is wrong, or an empty string.
std::string checkHolds(const Mesh &mesh, const Layout &layout,
                       const std::vector<Tensor> &locals,
                       const Tensor &global) {
  Shape local = *layout.getLocalShape(mesh, global.shape);
  Axes replicated = replicatedAxes(mesh, layout);
  Tensor rebuilt(global.shape);
  for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank) {
    if (locals[rank].shape != local)
      return "rank " + std::to_string(rank) + " has the wrong local shape";
    // Replicas of a block hold the same data; the first one contributes it.
    int64_t first = mesh.getGroup(rank, replicated).front();
    if (!(locals[rank] == locals[first]))
      return "rank " + std::to_string(rank) + " differs from its replica " +
             std::to_string(first);
    if (first != rank)
      continue;
    Shape offset = *layout.getBlockOffset(mesh, global.shape, rank);
    forEachIndex(local, [&](const Shape &index) {
      Shape at = index;
      for (size_t dim = 0; dim < at.size(); ++dim)
        at[dim] += offset[dim];
      rebuilt.at(at) += locals[rank].at(index);
    });
  }
  if (!(rebuilt == global))
    return "the blocks do not rebuild the global tensor";
  return "";
}

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

/// Every layout of a rank-`rank` tensor on `mesh`: each axis unused, partial,
/// or splitting some dim, in every order within a dim.
std::vector<Layout> allLayouts(const Mesh &mesh, size_t rank) {
  std::vector<Layout> result;
  size_t numAxes = mesh.getNumAxes(), slots = rank + 2;
  size_t assignments = 1;
  for (size_t i = 0; i < numAxes; ++i)
    assignments *= slots;
  for (size_t code = 0; code < assignments; ++code) {
    std::vector<Axes> dims(rank);
    Axes partial;
    size_t rest = code;
    for (size_t axis = 0; axis < numAxes; ++axis, rest /= slots) {
      size_t slot = rest % slots;
      const std::string &name = mesh.getAxis(axis).name;
      if (slot == rank)
        partial.push_back(name);
      else if (slot < rank)
        dims[slot].push_back(name);
    }
    // Every order of every dim's axes: odometer over per-dim permutations.
    std::function<void(size_t)> permute = [&](size_t dim) {
      if (dim == rank) {
        result.push_back(*Layout::get(mesh, dims, partial));
        return;
      }
      std::sort(dims[dim].begin(), dims[dim].end());
      do
        permute(dim + 1);
      while (std::next_permutation(dims[dim].begin(), dims[dim].end()));
    };
    permute(0);
  }
  return result;
}

/// Every non-empty sequence of distinct mesh axes.
std::vector<Axes> allAxisSequences(const Mesh &mesh) {
  std::vector<Axes> result;
  std::function<void(Axes &)> extend = [&](Axes &prefix) {
    for (const Mesh::Axis &axis : mesh.getAxes()) {
      if (std::find(prefix.begin(), prefix.end(), axis.name) != prefix.end())
        continue;
      prefix.push_back(axis.name);
      result.push_back(prefix);
      extend(prefix);
      prefix.pop_back();
    }
  };
  Axes prefix;
  extend(prefix);
  return result;
}

/// One collective to try: its name, the library's prediction, and its data
/// semantics on every device's local tensor.
struct Collective {
  std::string name;
  size_t numAxes;
  std::function<ValueOrError<Layout>(const Layout &)> predict;
  std::function<std::vector<Tensor>(const std::vector<Tensor> &)> run;
};

/// Every instance of the collective `kind` on `mesh` for rank-`rank` tensors.
std::vector<Collective> allCollectives(const Mesh &mesh, size_t rank,
                                       const std::string &kind) {
  std::vector<Collective> result;
  const Mesh *m = &mesh;
  for (const Axes &axes : allAxisSequences(mesh)) {
    int64_t n = mesh.getGroupSize(axes);
    auto group = [m, axes](int64_t r) { return m->getGroup(r, axes); };
    auto index = [m, axes](int64_t r) { return m->getGroupIndex(r, axes); };
    auto each = [m](std::function<Tensor(int64_t)> fn) {
      std::vector<Tensor> out;
      for (int64_t r = 0; r < m->getNumDevices(); ++r)
        out.push_back(fn(r));
      return out;
    };
    auto gatherOf = [group](const std::vector<Tensor> &in, int64_t r) {
      std::vector<Tensor> parts;
      for (int64_t member : group(r))
        parts.push_back(in[member]);
      return parts;
    };

    if (kind == "all_reduce")
      result.push_back(
          {kind, axes.size(),
           [m, axes](const Layout &l) { return l.allReduce(*m, axes); },
           [=](const std::vector<Tensor> &in) {
             return each([&](int64_t r) { return sum(gatherOf(in, r)); });
           }});
    if (kind == "collective_permute")
      // Shift by one: member i receives from member i - 1.
      result.push_back(
          {kind, axes.size(),
           [m, axes](const Layout &l) { return l.collectivePermute(*m, axes); },
           [=](const std::vector<Tensor> &in) {
             return each([&](int64_t r) {
               return in[group(r)[(index(r) + n - 1) % n]];
             });
           }});
    if (kind == "broadcast")
      // The last member is the root, so a no-op would not pass by accident.
      result.push_back(
          {kind, axes.size(),
           [m, axes](const Layout &l) { return l.broadcast(*m, axes); },
           [=](const std::vector<Tensor> &in) {
             return each([&](int64_t r) { return in[group(r)[n - 1]]; });
           }});

    for (size_t dim = 0; dim < rank; ++dim) {
      if (kind == "all_gather")
        result.push_back({kind, axes.size(),
                          [m, axes, dim](const Layout &l) {
                            return l.allGather(*m, dim, axes);
                          },
                          [=](const std::vector<Tensor> &in) {
                            return each([&](int64_t r) {
                              return concat(gatherOf(in, r), dim);
                            });
                          }});
      if (kind == "all_slice")
        result.push_back({kind, axes.size(),
                          [m, axes, dim](const Layout &l) {
                            return l.allSlice(*m, dim, axes);
                          },
                          [=](const std::vector<Tensor> &in) {
                            return each([&](int64_t r) {
                              return piece(in[r], dim, n, index(r));
                            });
                          }});
      if (kind == "reduce_scatter")
        result.push_back({kind, axes.size(),
                          [m, axes, dim](const Layout &l) {
                            return l.reduceScatter(*m, dim, axes);
                          },
                          [=](const std::vector<Tensor> &in) {
                            return each([&](int64_t r) {
                              return piece(sum(gatherOf(in, r)), dim, n,
                                           index(r));
                            });
                          }});
      if (kind != "all_to_all")
        continue;
      for (size_t concatDim = 0; concatDim < rank; ++concatDim) {
        if (concatDim == dim)
          continue;
        size_t splitDim = dim;
        // Member j receives piece j of every member's tensor, cut along the
        // split dim, and concatenates them along the concat dim in order.
        result.push_back({kind, axes.size(),
                          [m, axes, splitDim, concatDim](const Layout &l) {
                            return l.allToAll(*m, splitDim, concatDim, axes);
                          },
                          [=](const std::vector<Tensor> &in) {
                            return each([&](int64_t r) {
                              std::vector<Tensor> parts;
                              for (int64_t member : group(r))
                                parts.push_back(
                                    piece(in[member], splitDim, n, index(r)));
                              return concat(parts, concatDim);
                            });
                          }});
      }
    }
  }
  return result;
}

/// Counts of what an exhaustive run did.
struct Coverage {
  int64_t checked = 0;   // predictions checked against data
  int64_t multiAxis = 0; // ... of which over two or more axes
  int64_t rejected = 0;  // requests the library refused
};

/// Checks every prediction of `kind` on `mesh` for tensors of `globalShape`;
/// returns the coverage, reporting each wrong prediction as a test failure.
Coverage checkExhaustively(const Mesh &mesh, const Shape &globalShape,
                           const std::string &kind) {
  Coverage coverage;
  Tensor global = iota(globalShape);
  std::vector<Collective> collectives =
      allCollectives(mesh, globalShape.size(), kind);
  for (const Layout &layout : allLayouts(mesh, globalShape.size())) {
    if (layout.verifyShape(mesh, globalShape))
      continue;
    std::vector<Tensor> locals = distribute(mesh, layout, global);
    for (const Collective &collective : collectives) {
      ValueOrError<Layout> predicted = collective.predict(layout);
      if (!predicted) {
        ++coverage.rejected;
        continue;
      }
      // A prediction the shape cannot take (a slice that does not divide)
      // is for the verifiers to reject, not a wrong prediction.
      if (predicted->verifyShape(mesh, globalShape))
        continue;
      std::string wrong =
          checkHolds(mesh, *predicted, collective.run(locals), global);
      EXPECT_EQ(wrong, "") << kind << " on " << mesh.toString() << " from "
                           << layout.toString() << " predicted "
                           << predicted->toString();
      ++coverage.checked;
      if (collective.numAxes > 1)
        ++coverage.multiAxis;
    }
  }
  return coverage;
}

/// The meshes and shapes every collective is checked on: uneven axis sizes,
/// three axes, and tensors of rank 1 to 3.
std::vector<std::pair<Mesh, Shape>> cases() {
  return {
      {*Mesh::get({{"a", 2}, {"b", 3}}), {6, 6}},
      {*Mesh::get({{"a", 2}, {"b", 3}}), {12}},
      {*Mesh::get({{"a", 3}, {"b", 2}}), {6, 2, 6}},
      {*Mesh::get({{"a", 2}, {"b", 2}, {"c", 2}}), {8, 4}},
  };
}

/// Runs `kind` over every case and checks it was exercised in earnest.
void checkCollective(const std::string &kind) {
  Coverage total;
  for (const auto &[mesh, shape] : cases()) {
    Coverage coverage = checkExhaustively(mesh, shape, kind);
    total.checked += coverage.checked;
    total.multiAxis += coverage.multiAxis;
    total.rejected += coverage.rejected;
  }
  EXPECT_GT(total.checked, 20) << kind;
  EXPECT_GT(total.multiAxis, 0) << kind;
  EXPECT_GT(total.rejected, 0) << kind;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

TEST(LayoutSemanticsTest, CheckerRejectsWrongLayouts) {
  // The checks below are only as good as checkHolds: it must notice a block
  // order swap, a forgotten pending sum, and a spurious one.
  Mesh mesh = *Mesh::get({{"a", 2}, {"b", 2}});
  Tensor global = iota({4, 2});
  Layout ab = *Layout::get(mesh, {{"a", "b"}, {}});
  Layout ba = *Layout::get(mesh, {{"b", "a"}, {}});
  Layout partial = *Layout::get(mesh, {{"a"}, {}}, {"b"});
  Layout split = *Layout::get(mesh, {{"a"}, {}});
  EXPECT_EQ(checkHolds(mesh, ab, distribute(mesh, ab, global), global), "");
  EXPECT_NE(checkHolds(mesh, ba, distribute(mesh, ab, global), global), "");
  EXPECT_NE(checkHolds(mesh, split, distribute(mesh, partial, global), global),
            "");
  EXPECT_NE(checkHolds(mesh, partial, distribute(mesh, split, global), global),
            "");
}

TEST(LayoutSemanticsTest, AllGatherMatchesData) {
  checkCollective("all_gather");
}
TEST(LayoutSemanticsTest, AllSliceMatchesData) { checkCollective("all_slice"); }
TEST(LayoutSemanticsTest, AllReduceMatchesData) {
  checkCollective("all_reduce");
}
TEST(LayoutSemanticsTest, ReduceScatterMatchesData) {
  checkCollective("reduce_scatter");
}
TEST(LayoutSemanticsTest, AllToAllMatchesData) {
  checkCollective("all_to_all");
}
TEST(LayoutSemanticsTest, CollectivePermuteMatchesData) {
  checkCollective("collective_permute");
}
TEST(LayoutSemanticsTest, BroadcastMatchesData) {
  checkCollective("broadcast");
}

} // namespace

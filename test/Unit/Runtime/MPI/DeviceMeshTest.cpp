//===- DeviceMeshTest.cpp - The runtime's mesh agrees with dist::Mesh -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The MPI runtime restates the mesh definitions so that emitted programs do
// not link the compiler. These tests pin the restatement to the reference,
// `mlir::loom::dist::Mesh`: for several meshes, every rank and every ordered
// axis list, coordinates, ranks, group sizes, group indices and groups agree.
// They also check the runtime mesh's own validation messages.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/MPI/DeviceMesh.h"
#include "loom/Analysis/Layout/Layout.h"

#include "gtest/gtest.h"

#include <algorithm>

using loom::runtime::mpi::AxisList;
using loom::runtime::mpi::DeviceMesh;
using loom::runtime::mpi::Status;
using mlir::loom::dist::Mesh;

namespace {

/// Every ordered list of distinct axes of `names`, the empty one included.
std::vector<AxisList> orderedAxisLists(const std::vector<std::string> &names) {
  std::vector<AxisList> lists{{}};
  for (size_t length = 1; length <= names.size(); ++length) {
    std::vector<bool> chosen(names.size(), false);
    std::fill(chosen.begin(), chosen.begin() + length, true);
    do {
      AxisList subset;
      for (size_t i = 0; i < names.size(); ++i)
        if (chosen[i])
          subset.push_back(names[i]);
      std::sort(subset.begin(), subset.end());
      do
        lists.push_back(subset);
      while (std::next_permutation(subset.begin(), subset.end()));
    } while (std::prev_permutation(chosen.begin(), chosen.end()));
  }
  return lists;
}

void expectSameAsReference(const std::vector<Mesh::Axis> &axes) {
  auto reference = Mesh::get(axes);
  ASSERT_TRUE(reference.ok()) << reference.error();
  std::vector<DeviceMesh::Axis> runtimeAxes;
  std::vector<std::string> names;
  for (const Mesh::Axis &axis : axes) {
    runtimeAxes.push_back({axis.name, axis.size});
    names.push_back(axis.name);
  }
  DeviceMesh mesh;
  Status status = DeviceMesh::create(runtimeAxes, mesh);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(mesh.toString(), reference->toString());
  ASSERT_EQ(mesh.getNumDevices(), reference->getNumDevices());
  std::vector<AxisList> lists = orderedAxisLists(names);
  // 1 + n + n(n-1) + ... ordered lists: all of them were enumerated.
  size_t expectedLists = 1, term = 1;
  for (size_t k = 0; k < names.size(); ++k) {
    term *= names.size() - k;
    expectedLists += term;
  }
  EXPECT_EQ(lists.size(), expectedLists);
  for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank) {
    std::vector<int64_t> coordinates = mesh.getCoordinates(rank);
    EXPECT_EQ(coordinates, reference->getCoordinates(rank));
    EXPECT_EQ(mesh.getRank(coordinates), rank);
    for (const AxisList &list : lists) {
      SCOPED_TRACE("rank " + std::to_string(rank) + " axes " +
                   loom::runtime::mpi::formatAxes(list));
      EXPECT_TRUE(mesh.checkAxes(list).ok());
      EXPECT_EQ(mesh.getGroupSize(list), reference->getGroupSize(list));
      EXPECT_EQ(mesh.getGroupIndex(rank, list),
                reference->getGroupIndex(rank, list));
      EXPECT_EQ(mesh.getGroup(rank, list), reference->getGroup(rank, list));
    }
    for (size_t axis = 0; axis < axes.size(); ++axis)
      for (int64_t c = 0; c < axes[axis].size; ++c) {
        std::vector<int64_t> expected = coordinates;
        expected[axis] = c;
        EXPECT_EQ(mesh.getPeer(rank, axis, c), reference->getRank(expected));
      }
  }
}

TEST(DeviceMeshTest, OneAxisMatchesReference) {
  expectSameAsReference({{"a", 4}});
}

TEST(DeviceMeshTest, TwoByTwoMatchesReference) {
  expectSameAsReference({{"dp", 2}, {"tp", 2}});
}

TEST(DeviceMeshTest, TwoByThreeMatchesReference) {
  expectSameAsReference({{"a", 2}, {"b", 3}});
}

TEST(DeviceMeshTest, ThreeAxesMatchReference) {
  expectSameAsReference({{"pp", 2}, {"dp", 2}, {"tp", 2}});
}

TEST(DeviceMeshTest, UnevenAxesWithASizeOneAxisMatchReference) {
  expectSameAsReference({{"x", 3}, {"y", 1}, {"z", 2}, {"w", 2}});
}

TEST(DeviceMeshTest, ParsesTheDriverSpelling) {
  DeviceMesh mesh;
  Status status = DeviceMesh::parse("dp=2,tp=4", mesh);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(mesh.toString(), "{dp:2, tp:4}");
  EXPECT_EQ(mesh.getNumDevices(), 8);
  EXPECT_EQ(mesh.findAxis("tp"), std::optional<size_t>(1));
  EXPECT_EQ(mesh.findAxis("pp"), std::nullopt);
}

TEST(DeviceMeshTest, RejectsBadMeshesWithTheirValues) {
  DeviceMesh mesh;
  EXPECT_EQ(DeviceMesh::parse("dp=2,tp", mesh).message(),
            "mesh `dp=2,tp`: expected NAME=SIZE, got `tp`");
  EXPECT_EQ(DeviceMesh::parse("dp=x", mesh).message(),
            "mesh `dp=x`: axis `dp` has size `x`, expected an integer");
  EXPECT_EQ(DeviceMesh::parse("dp=0", mesh).message(),
            "mesh axis `dp` has size 0, expected a positive size");
  EXPECT_EQ(DeviceMesh::parse("dp=2,dp=2", mesh).message(),
            "mesh axis `dp` is named twice");
  EXPECT_EQ(DeviceMesh::parse("=2", mesh).message(),
            "mesh axis #0 has an empty name");
  EXPECT_EQ(DeviceMesh::parse("a=65536,b=65536", mesh).message(),
            "mesh has more than 1073741824 devices");
}

TEST(DeviceMeshTest, CheckAxesNamesTheOffendingAxis) {
  DeviceMesh mesh;
  ASSERT_TRUE(DeviceMesh::parse("dp=2,tp=2", mesh).ok());
  EXPECT_EQ(mesh.checkAxes({"tp", "sp"}).message(),
            "axis `sp` is not an axis of mesh {dp:2, tp:2}");
  EXPECT_EQ(mesh.checkAxes({"tp", "dp", "tp"}).message(),
            "axis `tp` is listed twice in [\"tp\", \"dp\", \"tp\"]");
}

} // namespace

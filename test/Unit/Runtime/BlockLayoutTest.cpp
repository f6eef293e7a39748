//===- BlockLayoutTest.cpp - Runtime blocks agree with dist::Layout -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's BlockLayout wraps `mlir::loom::dist::Layout`. These tests
// pin the wrapper to it: for several meshes and layouts (multi-axis dims,
// axis order, replicated axes), every rank's local shape and block offset
// are the reference's, the spelling round-trips through dist::Layout's, and
// failures carry dist::Layout's messages. Extracting every rank's block and
// inserting them back rebuilds the tensor exactly.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Layout/BlockLayout.h"
#include "loom/Analysis/Layout/Layout.h"

#include "gtest/gtest.h"

#include <numeric>

using loom::runtime::layout::AxisList;
using loom::runtime::layout::BlockLayout;
using loom::runtime::layout::DeviceMesh;
using loom::runtime::layout::Status;
namespace rt = loom::runtime::layout;
namespace dist = mlir::loom::dist;

namespace {

struct Case {
  std::vector<dist::Mesh::Axis> mesh;
  std::vector<AxisList> dims;
  AxisList partial;
  std::vector<int64_t> shape;
};

DeviceMesh runtimeMesh(const std::vector<dist::Mesh::Axis> &axes) {
  std::vector<DeviceMesh::Axis> runtimeAxes;
  for (const dist::Mesh::Axis &axis : axes)
    runtimeAxes.push_back({axis.name, axis.size});
  DeviceMesh mesh;
  Status status = DeviceMesh::create(runtimeAxes, mesh);
  EXPECT_TRUE(status.ok()) << status.message();
  return mesh;
}

TEST(BlockLayout, AgreesWithDistLayoutOnEveryRank) {
  std::vector<Case> cases = {
      {{{"dp", 2}, {"tp", 2}}, {{"dp"}, {"tp"}}, {}, {8, 4}},
      {{{"dp", 2}, {"tp", 2}}, {{"tp", "dp"}, {}}, {}, {8, 3}},
      {{{"dp", 2}, {"tp", 2}}, {{}, {"dp", "tp"}}, {}, {5, 8}},
      {{{"dp", 2}, {"tp", 2}}, {{"tp"}, {}}, {"dp"}, {4, 2}},
      {{{"pp", 2}, {"dp", 3}, {"tp", 2}},
       {{"dp"}, {"pp"}, {"tp"}},
       {},
       {3, 4, 2}},
      {{{"pp", 2}, {"dp", 3}, {"tp", 2}}, {{"tp", "pp"}, {}}, {}, {8, 1}},
      {{{"x", 4}}, {{}}, {}, {6}},
      {{{"x", 4}}, {}, {}, {}},
  };
  for (const Case &c : cases) {
    auto referenceMesh = dist::Mesh::get(c.mesh);
    ASSERT_TRUE(referenceMesh.ok()) << referenceMesh.error();
    auto reference = dist::Layout::get(*referenceMesh, c.dims, c.partial);
    ASSERT_TRUE(reference.ok()) << reference.error();
    DeviceMesh mesh = runtimeMesh(c.mesh);

    BlockLayout layout;
    Status status = BlockLayout::parse(reference->toString(), mesh, layout);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(layout.toString(), reference->toString());
    ASSERT_TRUE(layout.verifyShape(mesh, c.shape).ok());

    auto referenceLocal = reference->getLocalShape(*referenceMesh, c.shape);
    ASSERT_TRUE(referenceLocal.ok());
    EXPECT_EQ(layout.getLocalShape(mesh, c.shape), *referenceLocal);
    for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank) {
      auto offset = reference->getBlockOffset(*referenceMesh, c.shape, rank);
      ASSERT_TRUE(offset.ok());
      EXPECT_EQ(layout.getBlockOffset(mesh, c.shape, rank), *offset)
          << "layout " << layout.toString() << " rank " << rank;
    }
  }
}

TEST(BlockLayout, ParsesTheAttributeSpellingAndCanonicalizesPartial) {
  DeviceMesh mesh = runtimeMesh({{"dp", 2}, {"sp", 2}, {"tp", 2}});
  BlockLayout layout;
  ASSERT_TRUE(
      BlockLayout::parse(
          "#dist.layout<@m, [[\"dp\"], []], partial = [\"tp\", \"sp\"]>", mesh,
          layout)
          .ok());
  EXPECT_EQ(layout.toString(), "[[\"dp\"], []], partial = [\"sp\", \"tp\"]");
  EXPECT_TRUE(layout.isPartial());
  EXPECT_EQ(layout.getReplicatedAxes(mesh), AxisList{});
  ASSERT_TRUE(BlockLayout::parse("[[], [\"sp\"]]", mesh, layout).ok());
  EXPECT_EQ(layout.getReplicatedAxes(mesh), (AxisList{"dp", "tp"}));
}

TEST(BlockLayout, RejectsBadLayoutsWithTheirReason) {
  DeviceMesh mesh = runtimeMesh({{"dp", 2}, {"tp", 4}});
  BlockLayout layout;
  Status status = BlockLayout::parse("[[\"dp\"], [\"pp\"]]", mesh, layout);
  EXPECT_EQ(status.message(), "layout names `pp`, which is not an axis "
                              "of mesh {dp:2, tp:4}");
  status = BlockLayout::parse("[[\"dp\"], [\"dp\"]]", mesh, layout);
  EXPECT_EQ(status.message(), "mesh axis `dp` is used twice in the layout");
  status = BlockLayout::parse("[[\"dp\"], [\"tp\"]", mesh, layout);
  EXPECT_NE(status.message().find("cannot parse layout"), std::string::npos);
  ASSERT_TRUE(BlockLayout::parse("[[], [\"tp\"]]", mesh, layout).ok());
  status = layout.verifyShape(mesh, {4, 6});
  EXPECT_EQ(status.message(),
            "mesh axis `tp` (size 4) does not divide dim 1 (size 6)");
  status = layout.verifyShape(mesh, {4});
  EXPECT_EQ(status.message(),
            "layout of rank 2 does not fit a tensor of rank 1");
  // A layout checked against another mesh (a checkpoint's) names the axis
  // that mesh lacks.
  DeviceMesh other = runtimeMesh({{"dp", 2}});
  status = layout.verifyShape(other, {4, 8});
  EXPECT_EQ(status.message(),
            "layout names `tp`, which is not an axis of mesh {dp:2}");
}

TEST(BlockLayout, ExtractThenInsertEveryBlockRebuildsTheTensor) {
  DeviceMesh mesh = runtimeMesh({{"dp", 2}, {"tp", 3}});
  BlockLayout layout;
  ASSERT_TRUE(
      BlockLayout::parse("[[\"tp\"], [], [\"dp\"]]", mesh, layout).ok());
  std::vector<int64_t> shape = {6, 5, 4};
  std::vector<int32_t> global(6 * 5 * 4);
  std::iota(global.begin(), global.end(), 0);
  std::vector<int32_t> rebuilt(global.size(), -1);
  std::vector<int64_t> local = layout.getLocalShape(mesh, shape);
  ASSERT_EQ(local, (std::vector<int64_t>{2, 5, 2}));
  for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank) {
    std::vector<int64_t> offset = layout.getBlockOffset(mesh, shape, rank);
    std::vector<int32_t> block(2 * 5 * 2);
    rt::extractBlock(reinterpret_cast<const uint8_t *>(global.data()), shape,
                     offset, local, 4,
                     reinterpret_cast<uint8_t *>(block.data()));
    // Element (i, j, k) of the block is element offset + (i, j, k).
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 5; ++j)
        for (int64_t k = 0; k < 2; ++k)
          EXPECT_EQ(block[(i * 5 + j) * 2 + k],
                    global[((offset[0] + i) * 5 + offset[1] + j) * 4 +
                           offset[2] + k]);
    rt::insertBlock(reinterpret_cast<const uint8_t *>(block.data()), local,
                    offset, shape, 4,
                    reinterpret_cast<uint8_t *>(rebuilt.data()));
  }
  EXPECT_EQ(rebuilt, global);
}

} // namespace

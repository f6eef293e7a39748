//===- LayoutTest.cpp - Meshes, layouts and collective effects ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Pins down the layout library case by case: rank numbering, groups, local
// shapes and block offsets, canonical form and hashing, validation messages,
// and the effect of every collective on a layout including its error cases.
// LayoutSemanticsTest.cpp checks the same effects against data, exhaustively.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Layout/Layout.h"

#include "gtest/gtest.h"

#include <unordered_set>

using namespace mlir::loom::dist;

namespace {

using Shape = std::vector<int64_t>;
using Axes = Layout::AxisList;

Mesh makeMesh(std::vector<Mesh::Axis> axes) {
  ValueOrError<Mesh> mesh = Mesh::get(std::move(axes));
  EXPECT_TRUE(mesh.ok()) << mesh.error();
  return *mesh;
}

Layout makeLayout(const Mesh &mesh, std::vector<Axes> dims, Axes partial = {}) {
  ValueOrError<Layout> layout =
      Layout::get(mesh, std::move(dims), std::move(partial));
  EXPECT_TRUE(layout.ok()) << layout.error();
  return *layout;
}

/// The mesh most examples use: 2-way data and 4-way tensor parallelism.
Mesh dpTp() { return makeMesh({{"dp", 2}, {"tp", 4}}); }

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

TEST(MeshTest, RanksAreRowMajorWithTheLastAxisFastest) {
  Mesh mesh = dpTp();
  EXPECT_EQ(mesh.getNumDevices(), 8);
  EXPECT_EQ(mesh.getCoordinates(0), Shape({0, 0}));
  EXPECT_EQ(mesh.getCoordinates(1), Shape({0, 1}));
  EXPECT_EQ(mesh.getCoordinates(5), Shape({1, 1}));
  EXPECT_EQ(mesh.getRank({1, 3}), 7);
}

TEST(MeshTest, CoordinatesRoundTripForEveryRank) {
  Mesh mesh = makeMesh({{"pp", 3}, {"dp", 2}, {"tp", 2}});
  for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank)
    EXPECT_EQ(mesh.getRank(mesh.getCoordinates(rank)), rank);
}

TEST(MeshTest, GroupsVaryOnlyTheNamedAxesInTheirOrder) {
  Mesh mesh = makeMesh({{"a", 2}, {"b", 3}, {"c", 2}});
  // Rank 7 = (1, 0, 1). Over [b]: (1, *, 1).
  EXPECT_EQ(mesh.getGroup(7, {"b"}), Shape({7, 9, 11}));
  // Over [a, c], a major: (0,0,0) (0,0,1) (1,0,0) (1,0,1).
  EXPECT_EQ(mesh.getGroup(7, {"a", "c"}), Shape({0, 1, 6, 7}));
  // Over [c, a], c major: the same ranks, another order.
  EXPECT_EQ(mesh.getGroup(7, {"c", "a"}), Shape({0, 6, 1, 7}));
  EXPECT_EQ(mesh.getGroupIndex(7, {"a", "c"}), 3);
  EXPECT_EQ(mesh.getGroupIndex(1, {"c", "a"}), 2);
  EXPECT_EQ(mesh.getGroupSize({"a", "b"}), 6);
}

TEST(MeshTest, GroupsPartitionTheDevices) {
  Mesh mesh = dpTp();
  std::vector<std::vector<int64_t>> groups = mesh.getGroups({"dp"});
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0], Shape({0, 4}));
  EXPECT_EQ(groups[3], Shape({3, 7}));
  EXPECT_EQ(mesh.getGroups({"dp", "tp"}).size(), 1u);
}

TEST(MeshTest, RejectsBadAxes) {
  EXPECT_EQ(Mesh::get({{"dp", 2}, {"dp", 4}}).error(),
            "mesh axis `dp` is declared twice");
  EXPECT_EQ(Mesh::get({{"dp", 0}}).error(),
            "mesh axis `dp` has size 0; sizes must be at least 1");
  EXPECT_EQ(Mesh::get({{"dp", 2}, {"", 2}}).error(),
            "mesh axis 1 has an empty name");
  // Names reach plan JSON and messages; the message leaves the bytes out.
  EXPECT_EQ(Mesh::get({{"dp", 2}, {"t\xC3", 2}}).error(),
            "mesh axis 1 has a name that is not UTF-8 (byte 0xC3 at byte 1 of "
            "the name)");
  EXPECT_TRUE(Mesh::get({{"d\xC3\xA9", 2}}).ok());
  EXPECT_EQ(dpTp().toString(), "{dp:2, tp:4}");
}

TEST(MeshTest, ParsesTheDriverSpelling) {
  ValueOrError<Mesh> mesh = Mesh::parse("dp=2,tp=4");
  ASSERT_TRUE(mesh.ok()) << mesh.error();
  EXPECT_EQ(*mesh, dpTp());
  // No axes: the one-device mesh of a program compiled without --mesh.
  ValueOrError<Mesh> single = Mesh::parse("");
  ASSERT_TRUE(single.ok()) << single.error();
  EXPECT_EQ(single->getNumAxes(), 0u);
  EXPECT_EQ(single->getNumDevices(), 1);
}

TEST(MeshTest, ParseRejectsBadSpellingsWithTheirText) {
  // Every message below quotes the text, so bytes that are not UTF-8 are
  // refused first, without it.
  EXPECT_EQ(Mesh::parse("dp=2,\xFF=x").error(),
            "mesh: the text is not UTF-8 (byte 0xFF at byte 5); axis names "
            "must be UTF-8");
  EXPECT_EQ(Mesh::parse("dp=2,tp").error(),
            "mesh `dp=2,tp`: expected NAME=SIZE, got `tp`");
  EXPECT_EQ(Mesh::parse("dp=x").error(),
            "mesh `dp=x`: axis `dp` has size `x`, expected an integer");
  EXPECT_EQ(Mesh::parse("dp=").error(),
            "mesh `dp=`: axis `dp` has size ``, expected an integer");
  // What parses is then checked as Mesh::get.
  EXPECT_EQ(Mesh::parse("dp=0").error(),
            "mesh axis `dp` has size 0; sizes must be at least 1");
  EXPECT_EQ(Mesh::parse("dp=2,dp=2").error(),
            "mesh axis `dp` is declared twice");
  EXPECT_EQ(Mesh::parse("=2").error(), "mesh axis 0 has an empty name");
  EXPECT_FALSE(Mesh::parse("a=65536,b=65536").ok());
}

TEST(MeshTest, PeerChangesOneCoordinate) {
  Mesh mesh = makeMesh({{"pp", 3}, {"dp", 2}, {"tp", 2}});
  for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank)
    for (size_t axis = 0; axis < mesh.getNumAxes(); ++axis)
      for (int64_t c = 0; c < mesh.getAxis(axis).size; ++c) {
        Shape expected = mesh.getCoordinates(rank);
        expected[axis] = c;
        EXPECT_EQ(mesh.getPeer(rank, axis, c), mesh.getRank(expected));
      }
  // Rank 5 = (1, 0, 1); stage 2 along pp is (2, 0, 1) = 9.
  EXPECT_EQ(mesh.getPeer(5, 0, 2), 9);
}

//===----------------------------------------------------------------------===//
// Layout: construction, canonical form, validation
//===----------------------------------------------------------------------===//

TEST(LayoutTest, ParseRoundTripsToString) {
  Mesh mesh = makeMesh({{"dp", 2}, {"sp", 2}, {"tp", 2}});
  for (const Layout &layout :
       {makeLayout(mesh, {{"dp"}, {}, {"tp", "sp"}}),
        makeLayout(mesh, {{}, {"tp"}}, {"dp", "sp"}), Layout::getReplicated(0),
        Layout::getReplicated(2)}) {
    ValueOrError<Layout> parsed = Layout::parse(mesh, layout.toString());
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    EXPECT_EQ(*parsed, layout) << layout.toString();
  }
}

TEST(LayoutTest, ParseTakesTheAttributeAndCanonicalizesPartial) {
  Mesh mesh = makeMesh({{"dp", 2}, {"sp", 2}, {"tp", 2}});
  ValueOrError<Layout> layout = Layout::parse(
      mesh, "#dist.layout<@m, [[\"dp\"], []], partial = [\"tp\", \"sp\"]>");
  ASSERT_TRUE(layout.ok()) << layout.error();
  EXPECT_EQ(*layout, makeLayout(mesh, {{"dp"}, {}}, {"sp", "tp"}));
}

TEST(LayoutTest, ParseRejectsBadTextAndBadAxes) {
  Mesh mesh = dpTp();
  EXPECT_EQ(Layout::parse(mesh, "[[\"dp\"], [\"tp\"]").error(),
            "cannot parse layout `[[\"dp\"], [\"tp\"]` at character 15: "
            "expected [[\"axis\", ...], ...] with an optional "
            "`, partial = [...]`");
  EXPECT_FALSE(Layout::parse(mesh, "[[\"\"]]").ok());
  EXPECT_FALSE(Layout::parse(mesh, "[[\"dp\"]], partial = ").ok());
  EXPECT_FALSE(Layout::parse(mesh, "#dist.layout<[[\"dp\"]]>").ok());
  // Axes are checked as Layout::get.
  EXPECT_EQ(Layout::parse(mesh, "[[\"dp\"], [\"pp\"]]").error(),
            "layout names `pp`, which is not an axis of mesh {dp:2, tp:4}");
  EXPECT_EQ(Layout::parse(mesh, "[[\"dp\"], [\"dp\"]]").error(),
            "mesh axis `dp` is used twice in the layout");
}

TEST(LayoutTest, ReplicatedAxesAreTheUnusedOnesInMeshOrder) {
  Mesh mesh = makeMesh({{"dp", 2}, {"sp", 2}, {"tp", 2}});
  EXPECT_EQ(makeLayout(mesh, {{}, {"sp"}}).getReplicatedAxes(mesh),
            Axes({"dp", "tp"}));
  EXPECT_EQ(makeLayout(mesh, {{"dp"}}, {"tp", "sp"}).getReplicatedAxes(mesh),
            Axes({}));
  EXPECT_EQ(Layout::getReplicated(1).getReplicatedAxes(mesh),
            Axes({"dp", "sp", "tp"}));
}

TEST(LayoutTest, PartialAxesAreKeptInMeshOrder) {
  Mesh mesh = makeMesh({{"x", 2}, {"y", 2}, {"z", 2}});
  Layout a = makeLayout(mesh, {{}, {}}, {"z", "x"});
  Layout b = makeLayout(mesh, {{}, {}}, {"x", "z"});
  EXPECT_EQ(a.getPartialAxes(), Axes({"x", "z"}));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.toString(), R"([[], []], partial = ["x", "z"])");
}

TEST(LayoutTest, AxisOrderWithinADimIsMeaningful) {
  Mesh mesh = dpTp();
  Layout a = makeLayout(mesh, {{"dp", "tp"}});
  Layout b = makeLayout(mesh, {{"tp", "dp"}});
  EXPECT_NE(a, b);
  EXPECT_EQ(a.toString(), R"([["dp", "tp"]])");
}

TEST(LayoutTest, HashDistinguishesWhereAnAxisSits) {
  Mesh mesh = dpTp();
  std::unordered_set<Layout> set = {
      makeLayout(mesh, {{"dp", "tp"}, {}}), makeLayout(mesh, {{"dp"}, {"tp"}}),
      makeLayout(mesh, {{}, {"dp", "tp"}}),
      makeLayout(mesh, {{"dp"}, {}}, {"tp"}), Layout::getReplicated(2)};
  EXPECT_EQ(set.size(), 5u);
  EXPECT_EQ(set.count(makeLayout(mesh, {{"dp"}, {"tp"}})), 1u);
  EXPECT_EQ(set.count(makeLayout(mesh, {{"tp"}, {"dp"}})), 0u);
}

TEST(LayoutTest, RejectsUnknownAndRepeatedAxes) {
  Mesh mesh = dpTp();
  EXPECT_EQ(Layout::get(mesh, {{"sp"}}).error(),
            "layout names `sp`, which is not an axis of mesh {dp:2, tp:4}");
  EXPECT_EQ(Layout::get(mesh, {{"tp"}, {"tp"}}).error(),
            "mesh axis `tp` is used twice in the layout");
  EXPECT_EQ(Layout::get(mesh, {{"tp"}}, {"tp"}).error(),
            "mesh axis `tp` is used twice in the layout");
}

TEST(LayoutTest, ShapeValidationNamesDimAxisAndSizes) {
  Mesh mesh = dpTp();
  Layout layout = makeLayout(mesh, {{"dp"}, {"tp"}});
  EXPECT_EQ(layout.verifyShape(mesh, {4, 6}),
            "mesh axis `tp` (size 4) does not divide dim 1 (size 6)");
  EXPECT_EQ(makeLayout(mesh, {{"dp", "tp"}}).verifyShape(mesh, {12}),
            "mesh axes [`dp`, `tp`] (8 blocks) do not divide dim 0 (size 12)");
  EXPECT_EQ(layout.verifyShape(mesh, {4}),
            "layout of rank 2 does not fit a tensor of rank 1");
  EXPECT_EQ(layout.verifyShape(mesh, {4, 8}), std::nullopt);
}

// fitsShape (the planner's check without a message) accepts exactly what
// verifyShape accepts.
TEST(LayoutTest, FitsShapeAgreesWithVerifyShape) {
  Mesh mesh = dpTp();
  std::vector<Layout> layouts = {makeLayout(mesh, {{"dp"}, {"tp"}}),
                                 makeLayout(mesh, {{"dp", "tp"}, {}}),
                                 makeLayout(mesh, {{}, {}})};
  std::vector<std::vector<int64_t>> shapes = {{4, 6},  {4, 8}, {8, 3},
                                              {12, 4}, {4},    {2, 4, 4}};
  for (const Layout &layout : layouts)
    for (const std::vector<int64_t> &shape : shapes)
      EXPECT_EQ(layout.fitsShape(mesh, shape),
                !layout.verifyShape(mesh, shape).has_value())
          << layout.toString();
}

//===----------------------------------------------------------------------===//
// Layout: local shapes and blocks
//===----------------------------------------------------------------------===//

TEST(LayoutTest, LocalShapeDividesEachDimByItsAxes) {
  Mesh mesh = dpTp();
  Layout layout = makeLayout(mesh, {{"dp"}, {}, {"tp"}}, {});
  EXPECT_EQ(*layout.getLocalShape(mesh, {8, 3, 16}), Shape({4, 3, 4}));
  EXPECT_EQ(layout.getGlobalShape(mesh, {4, 3, 4}), Shape({8, 3, 16}));
  EXPECT_EQ(*makeLayout(mesh, {{"dp", "tp"}}).getLocalShape(mesh, {16}),
            Shape({2}));
  // Partial axes do not split anything.
  EXPECT_EQ(*makeLayout(mesh, {{}}, {"tp"}).getLocalShape(mesh, {16}),
            Shape({16}));
  EXPECT_FALSE(layout.getLocalShape(mesh, {8, 3, 6}).ok());
}

TEST(LayoutTest, BlockIndexIsMixedRadixMajorFirst) {
  Mesh mesh = dpTp();
  Layout dpThenTp = makeLayout(mesh, {{"dp", "tp"}});
  Layout tpThenDp = makeLayout(mesh, {{"tp", "dp"}});
  for (int64_t rank = 0; rank < mesh.getNumDevices(); ++rank) {
    int64_t dp = rank / 4, tp = rank % 4;
    EXPECT_EQ(dpThenTp.getBlockIndex(mesh, rank), Shape({dp * 4 + tp}));
    EXPECT_EQ(tpThenDp.getBlockIndex(mesh, rank), Shape({tp * 2 + dp}));
  }
}

TEST(LayoutTest, BlockOffsetsTileTheGlobalTensor) {
  // A 4x8 tensor on {dp:2, tp:2} split [[dp], [tp]]: rank 3 = (1, 1) holds
  // rows 2..3, columns 4..7.
  Mesh mesh = makeMesh({{"dp", 2}, {"tp", 2}});
  Layout layout = makeLayout(mesh, {{"dp"}, {"tp"}});
  EXPECT_EQ(*layout.getBlockOffset(mesh, {4, 8}, 0), Shape({0, 0}));
  EXPECT_EQ(*layout.getBlockOffset(mesh, {4, 8}, 1), Shape({0, 4}));
  EXPECT_EQ(*layout.getBlockOffset(mesh, {4, 8}, 2), Shape({2, 0}));
  EXPECT_EQ(*layout.getBlockOffset(mesh, {4, 8}, 3), Shape({2, 4}));
  EXPECT_EQ(layout.getBlockOffset(mesh, {4, 8}, 4).error(),
            "rank 4 is not on mesh {dp:2, tp:2}");
  EXPECT_FALSE(layout.getBlockOffset(mesh, {3, 8}, 0).ok());
}

TEST(LayoutTest, ReplicatedAxesGiveEveryReplicaTheSameBlock) {
  Mesh mesh = dpTp();
  Layout layout = makeLayout(mesh, {{}, {"tp"}});
  EXPECT_EQ(*layout.getBlockOffset(mesh, {4, 8}, 1),
            *layout.getBlockOffset(mesh, {4, 8}, 5));
  EXPECT_TRUE(Layout::getReplicated(2).isReplicated());
  EXPECT_FALSE(makeLayout(mesh, {{}, {}}, {"dp"}).isReplicated());
}

//===----------------------------------------------------------------------===//
// Effects of the collectives
//===----------------------------------------------------------------------===//

TEST(CollectiveEffectTest, AllGatherRemovesTheMinorEndOfADim) {
  Mesh mesh = makeMesh({{"a", 2}, {"b", 2}, {"c", 2}});
  Layout layout = makeLayout(mesh, {{"a", "b", "c"}, {}}, {});
  EXPECT_EQ(*layout.allGather(mesh, 0, {"c"}),
            makeLayout(mesh, {{"a", "b"}, {}}));
  EXPECT_EQ(*layout.allGather(mesh, 0, {"b", "c"}),
            makeLayout(mesh, {{"a"}, {}}));
  EXPECT_EQ(layout.allGather(mesh, 0, {"c", "b"}).error(),
            "mesh axes [`c`, `b`] are not the minor end of dim 0's axes "
            "[`a`, `b`, `c`]");
  EXPECT_EQ(layout.allGather(mesh, 0, {"a"}).error(),
            "mesh axes [`a`] are not the minor end of dim 0's axes "
            "[`a`, `b`, `c`]");
  EXPECT_EQ(layout.allGather(mesh, 1, {"c"}).error(),
            "mesh axes [`c`] are not the minor end of dim 1's axes []");
  EXPECT_EQ(layout.allGather(mesh, 2, {"c"}).error(),
            "gather dim 2 is out of range for a layout of rank 2");
}

TEST(CollectiveEffectTest, AllGatherKeepsPartialAxes) {
  Mesh mesh = dpTp();
  Layout layout = makeLayout(mesh, {{"tp"}}, {"dp"});
  EXPECT_EQ(*layout.allGather(mesh, 0, {"tp"}), makeLayout(mesh, {{}}, {"dp"}));
}

TEST(CollectiveEffectTest, AllSliceAppendsUnusedAxes) {
  Mesh mesh = makeMesh({{"a", 2}, {"b", 2}, {"c", 2}});
  Layout layout = makeLayout(mesh, {{"a"}, {}}, {"b"});
  EXPECT_EQ(*layout.allSlice(mesh, 0, {"c"}),
            makeLayout(mesh, {{"a", "c"}, {}}, {"b"}));
  EXPECT_EQ(*layout.allSlice(mesh, 1, {"c"}),
            makeLayout(mesh, {{"a"}, {"c"}}, {"b"}));
  EXPECT_EQ(layout.allSlice(mesh, 1, {"a"}).error(),
            "mesh axis `a` is already used by the layout; only a replicated "
            "axis can slice");
  EXPECT_EQ(layout.allSlice(mesh, 1, {"b"}).error(),
            "mesh axis `b` is already used by the layout; only a replicated "
            "axis can slice");
}

TEST(CollectiveEffectTest, AllReduceClearsPartialAxesOnly) {
  Mesh mesh = makeMesh({{"a", 2}, {"b", 2}, {"c", 2}});
  Layout layout = makeLayout(mesh, {{"c"}}, {"a", "b"});
  EXPECT_EQ(*layout.allReduce(mesh, {"b"}), makeLayout(mesh, {{"c"}}, {"a"}));
  EXPECT_EQ(*layout.allReduce(mesh, {"b", "a"}), makeLayout(mesh, {{"c"}}));
  EXPECT_EQ(layout.allReduce(mesh, {"c"}).error(),
            "all_reduce over mesh axis `c` needs a value that is partial over "
            "it");
  EXPECT_EQ(Layout::getReplicated(1).allReduce(mesh, {"a"}).error(),
            "all_reduce over mesh axis `a` needs a value that is partial over "
            "it");
}

TEST(CollectiveEffectTest, ReduceScatterMovesPartialAxesToADim) {
  Mesh mesh = makeMesh({{"a", 2}, {"b", 2}, {"c", 2}});
  Layout layout = makeLayout(mesh, {{"c"}, {}}, {"a", "b"});
  EXPECT_EQ(*layout.reduceScatter(mesh, 0, {"b", "a"}),
            makeLayout(mesh, {{"c", "b", "a"}, {}}));
  EXPECT_EQ(*layout.reduceScatter(mesh, 1, {"a"}),
            makeLayout(mesh, {{"c"}, {"a"}}, {"b"}));
  EXPECT_EQ(layout.reduceScatter(mesh, 1, {"c"}).error(),
            "reduce_scatter over mesh axis `c` needs a value that is partial "
            "over it");
  EXPECT_EQ(layout.reduceScatter(mesh, 3, {"a"}).error(),
            "scatter dim 3 is out of range for a layout of rank 2");
}

TEST(CollectiveEffectTest, AllToAllMovesAxesFromConcatDimToSplitDim) {
  Mesh mesh = makeMesh({{"a", 2}, {"b", 2}, {"c", 2}});
  Layout layout = makeLayout(mesh, {{"a"}, {"b", "c"}});
  EXPECT_EQ(*layout.allToAll(mesh, 0, 1, {"c"}),
            makeLayout(mesh, {{"a", "c"}, {"b"}}));
  EXPECT_EQ(*layout.allToAll(mesh, 0, 1, {"b", "c"}),
            makeLayout(mesh, {{"a", "b", "c"}, {}}));
  EXPECT_EQ(layout.allToAll(mesh, 1, 0, {"b"}).error(),
            "mesh axes [`b`] are not the minor end of dim 0's axes [`a`]");
  EXPECT_EQ(layout.allToAll(mesh, 1, 1, {"c"}).error(),
            "all_to_all needs distinct split and concat dims, got 1 twice");
  EXPECT_EQ(layout.allToAll(mesh, 2, 1, {"c"}).error(),
            "split dim 2 is out of range for a layout of rank 2");
}

TEST(CollectiveEffectTest, PermuteAndBroadcastKeepALayoutReplicatedOverThem) {
  Mesh mesh = dpTp();
  Layout layout = makeLayout(mesh, {{"dp"}, {}});
  EXPECT_EQ(*layout.collectivePermute(mesh, {"tp"}), layout);
  EXPECT_EQ(*layout.broadcast(mesh, {"tp"}), layout);
  EXPECT_EQ(layout.collectivePermute(mesh, {"dp"}).error(),
            "collective_permute over mesh axis `dp` would move blocks of dim "
            "0, which it splits");
  EXPECT_EQ(makeLayout(mesh, {{}, {}}, {"tp"}).broadcast(mesh, {"tp"}).error(),
            "broadcast over mesh axis `tp` would move partial sums over it");
}

TEST(CollectiveEffectTest, GroupAxesMustBeNamedDistinctAxes) {
  Mesh mesh = dpTp();
  Layout layout = makeLayout(mesh, {{}}, {"dp", "tp"});
  EXPECT_EQ(layout.allReduce(mesh, {}).error(),
            "a collective needs at least one mesh axis");
  EXPECT_EQ(layout.allReduce(mesh, {"sp"}).error(),
            "`sp` is not an axis of mesh {dp:2, tp:4}");
  EXPECT_EQ(layout.allReduce(mesh, {"tp", "tp"}).error(),
            "mesh axis `tp` is named twice");
}

TEST(CollectiveEffectTest, ChainsComposeIntoAReshard) {
  // [[dp], []] partial [tp] -> [[dp, tp], []] -> [[dp], [tp]]: a partial
  // matmul output resharded to column-split by reduce_scatter + all_to_all.
  Mesh mesh = dpTp();
  Layout start = makeLayout(mesh, {{"dp"}, {}}, {"tp"});
  ValueOrError<Layout> scattered = start.reduceScatter(mesh, 0, {"tp"});
  ASSERT_TRUE(scattered.ok());
  ValueOrError<Layout> moved = scattered->allToAll(mesh, 1, 0, {"tp"});
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, makeLayout(mesh, {{"dp"}, {"tp"}}));
}

} // namespace

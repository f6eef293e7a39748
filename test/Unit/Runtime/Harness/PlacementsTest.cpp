//===- PlacementsTest.cpp - Each rank's blocks from the layouts -----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The harness computes every rank's block from the spec's layouts at run
// time (the emitted program holds no per-rank table). These cases pin the
// values the compiler used to print per rank (the same programs as
// test/Target/Host/emit-host.mlir and emit-host-pipeline.test): block
// offsets, the holder of a pending sum, the canonical replica of a
// replicated result, and the results of another pipeline stage.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Harness/Placements.h"
#include "loom/Runtime/Harness/Harness.h"

#include "gtest/gtest.h"

using namespace loom::runtime;
using harness::Placement;
using harness::Placements;
using harness::ProgramSpec;
using harness::TensorSpec;

namespace {

TensorSpec tensor(const std::string &name, harness::Shape global,
                  harness::Shape local, const std::string &layout,
                  int64_t stage = -1) {
  TensorSpec t;
  t.name = name;
  t.globalShape = std::move(global);
  t.localShape = std::move(local);
  t.layout = layout;
  t.stage = stage;
  return t;
}

mpi::DeviceMesh meshOf(const ProgramSpec &spec) {
  std::vector<mpi::DeviceMesh::Axis> axes;
  for (const auto &[name, size] : spec.mesh)
    axes.push_back({name, size});
  mpi::DeviceMesh mesh;
  host::Status status = mpi::DeviceMesh::create(axes, mesh);
  EXPECT_TRUE(status.ok()) << status.message();
  return mesh;
}

TEST(PlacementsTest, BlockOffsetsAndReplicasOfADpTpStep) {
  ProgramSpec spec;
  spec.mesh = {{"dp", 2}, {"tp", 2}};
  spec.arguments = {tensor("x", {4, 8}, {2, 8}, R"([["dp"], []])"),
                    tensor("w", {8, 8}, {8, 4}, R"([[], ["tp"]])"),
                    tensor("table", {32, 8}, {16, 8}, R"([["tp"], []])"),
                    tensor("partial", {3}, {3}, "[[]], partial = [\"tp\"]")};
  spec.results = {tensor("y", {4, 8}, {2, 8}, R"([["dp"], []])"),
                  tensor("s", {3, 8}, {3, 8}, "[[], []]")};
  mpi::DeviceMesh mesh = meshOf(spec);
  Placements placements;
  host::Status status = Placements::create(spec, mesh, placements);
  ASSERT_TRUE(status.ok()) << status.message();

  // x over dp: rows 0 and 2; w over tp: columns 0 and 4; the table's rows
  // over tp: 0 and 16.
  EXPECT_EQ(placements.argument(2, 0).offset, (harness::Shape{2, 0}));
  EXPECT_EQ(placements.argument(1, 0).offset, (harness::Shape{0, 0}));
  EXPECT_EQ(placements.argument(1, 1).offset, (harness::Shape{0, 4}));
  EXPECT_EQ(placements.argument(1, 2).offset, (harness::Shape{16, 0}));
  // A sum pending over tp: the first member of each tp group holds it.
  EXPECT_TRUE(placements.argument(0, 3).holds);
  EXPECT_FALSE(placements.argument(1, 3).holds);
  EXPECT_TRUE(placements.argument(2, 3).holds);
  EXPECT_FALSE(placements.argument(3, 3).holds);

  // y is replicated over tp: ranks 1 and 3 are replicas of ranks 0 and 2.
  Placement y3 = placements.result(3, 0);
  EXPECT_EQ(y3.offset, (harness::Shape{2, 0}));
  EXPECT_FALSE(y3.holds);
  EXPECT_EQ(y3.canonicalRank, 2);
  EXPECT_TRUE(placements.result(2, 0).holds);
  // s is replicated everywhere: rank 0 is the canonical replica.
  for (int64_t r = 0; r < 4; ++r) {
    Placement s = placements.result(r, 1);
    EXPECT_EQ(s.holds, r == 0);
    EXPECT_EQ(s.canonicalRank, 0);
  }
}

TEST(PlacementsTest, ResultsOfAnotherStageAreNotComputed) {
  // pp=2 x dp=2: `out` is stage 1's (split over dp), `w0` stage 0's
  // (replicated); a stage's results are not replicated over the pipeline
  // axis.
  ProgramSpec spec;
  spec.mesh = {{"pp", 2}, {"dp", 2}};
  spec.pipelineAxis = "pp";
  spec.numStages = 2;
  spec.results = {tensor("out", {4, 8}, {2, 8}, R"([["dp"], []])", 1),
                  tensor("w0", {8, 8}, {8, 8}, "[[], []]", 0)};
  mpi::DeviceMesh mesh = meshOf(spec);
  Placements placements;
  host::Status status = Placements::create(spec, mesh, placements);
  ASSERT_TRUE(status.ok()) << status.message();
  // Rank r: {out, w0} as {offset, holds, canonical}.
  struct Row {
    harness::Shape outOffset;
    bool outHolds;
    int64_t outCanonical;
    bool w0Holds;
    int64_t w0Canonical;
  };
  std::vector<Row> expected = {{{0, 0}, false, -1, true, 0},
                               {{2, 0}, false, -1, false, 0},
                               {{0, 0}, true, 2, false, -1},
                               {{2, 0}, true, 3, false, -1}};
  for (int64_t r = 0; r < 4; ++r) {
    Placement out = placements.result(r, 0), w0 = placements.result(r, 1);
    EXPECT_EQ(out.offset, expected[r].outOffset) << "rank " << r;
    EXPECT_EQ(out.holds, expected[r].outHolds) << "rank " << r;
    EXPECT_EQ(out.canonicalRank, expected[r].outCanonical) << "rank " << r;
    EXPECT_EQ(w0.holds, expected[r].w0Holds) << "rank " << r;
    EXPECT_EQ(w0.canonicalRank, expected[r].w0Canonical) << "rank " << r;
  }
}

TEST(PlacementsTest, ALayoutThatDoesNotFitIsAnErrorNamingTheTensor) {
  ProgramSpec spec;
  spec.mesh = {{"dp", 2}};
  spec.arguments = {tensor("x", {3, 8}, {1, 8}, R"([["dp"], []])")};
  Placements placements;
  host::Status status = Placements::create(spec, meshOf(spec), placements);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("`x`"), std::string::npos)
      << status.message();
  spec.arguments = {tensor("y", {4, 8}, {2, 8}, R"([["ep"], []])")};
  status = Placements::create(spec, meshOf(spec), placements);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("`y`"), std::string::npos)
      << status.message();
}

TEST(PlacementsTest, BlockOffsetOfADropoutInput) {
  mpi::DeviceMesh mesh;
  ASSERT_TRUE(mpi::DeviceMesh::create({{"tp", 2}}, mesh).ok());
  harness::Shape offset;
  host::Status status =
      harness::blockOffset(mesh, 1, R"([[], ["tp"]])", {4, 6}, offset);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(offset, (harness::Shape{0, 3}));
  EXPECT_FALSE(
      harness::blockOffset(mesh, 1, R"([[], ["tp"]])", {4, 5}, offset).ok());
}

} // namespace

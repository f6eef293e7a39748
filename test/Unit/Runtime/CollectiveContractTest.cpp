//===- CollectiveContractTest.cpp - The communicators' one contract -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Both communicators (MPI and NCCL) validate their calls with
// CollectiveContract before moving data. These cases pin each check and its
// message, and in particular the checks that became stricter when the two
// communicators' validations were merged: shapes, peers and tags of NCCL's
// send/recv, tags above the dialect's bound on MPI, empty axis lists on both,
// and the element type of a received message.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Layout/CollectiveContract.h"

#include "gtest/gtest.h"

using loom::runtime::CollectiveContract;
using loom::runtime::DeviceMesh;
using loom::runtime::kMaxTag;
using loom::runtime::ReduceKind;
using loom::runtime::Shape;
using loom::runtime::Status;

namespace {

DeviceMesh dpTp() {
  DeviceMesh mesh;
  Status status = DeviceMesh::parse("dp=2,tp=4", mesh);
  EXPECT_TRUE(status.ok()) << status.message();
  return mesh;
}

/// Rank 5 of {dp:2, tp:4}; counts as large as MPI's int.
struct ContractTest : ::testing::Test {
  DeviceMesh mesh = dpTp();
  CollectiveContract contract{mesh, 5, 2147483647};
};

TEST_F(ContractTest, ValidCallsPass) {
  Shape shape{4, 8};
  EXPECT_TRUE(contract.allGather(shape, {"tp"}, 1).ok());
  EXPECT_TRUE(contract.allSlice(shape, {"dp", "tp"}, 1).ok());
  EXPECT_TRUE(contract.allReduce(shape, {"tp", "dp"}, ReduceKind::Max).ok());
  EXPECT_TRUE(contract.reduceScatter(shape, {"tp"}, 0).ok());
  EXPECT_TRUE(contract.allToAll(shape, {"tp"}, 1, 0).ok());
  EXPECT_TRUE(contract.collectivePermute(shape, {"tp"}).ok());
  EXPECT_TRUE(contract.collectivePermute(shape, {"tp"}, {{0, 1}, {1, 0}}).ok());
  EXPECT_TRUE(contract.broadcast(shape, {"dp"}, 1).ok());
  EXPECT_TRUE(contract.send(shape, 7, 0).ok());
  EXPECT_TRUE(contract.recv(Shape{}, 0, kMaxTag).ok());
  EXPECT_TRUE(contract.send(Shape{0, 3}, 1, 1).ok());
}

TEST_F(ContractTest, DescribesCallsAsMessagesNameThem) {
  EXPECT_EQ(CollectiveContract::describe("all_gather", {"dp", "tp"}),
            "all_gather over [\"dp\", \"tp\"]");
  EXPECT_EQ(CollectiveContract::describe(ReduceKind::Sum, {"tp"}),
            "all_reduce sum over [\"tp\"]");
  EXPECT_EQ(CollectiveContract::describeSend(3, 7), "send to rank 3 (tag 7)");
  EXPECT_EQ(CollectiveContract::describeRecv(3, 7), "recv from rank 3 (tag 7)");
}

TEST_F(ContractTest, ShapesHaveNoNegativeDimAndFitACount) {
  EXPECT_EQ(contract.allReduce({2, -1}, {"tp"}, ReduceKind::Sum).message(),
            "all_reduce sum over [\"tp\"]: shape [2, -1] has a negative dim 1");
  CollectiveContract small(mesh, 5, 100);
  EXPECT_EQ(small.broadcast({11, 10}, {"tp"}, 0).message(),
            "broadcast over [\"tp\"]: shape [11, 10] has more elements than "
            "a count holds (100)");
  // An all_gather's result is n operands: it must fit as well.
  EXPECT_TRUE(small.allReduce({25}, {"tp"}, ReduceKind::Sum).ok());
  EXPECT_EQ(small.allGather({26}, {"tp"}, 0).message(),
            "all_gather over [\"tp\"]: the gathered tensor has more elements "
            "than a count holds (100)");
  // Products that overflow int64_t are caught, not wrapped.
  EXPECT_FALSE(
      contract.collectivePermute({int64_t(1) << 40, int64_t(1) << 40}, {"tp"})
          .ok());
}

TEST_F(ContractTest, DimsAreInRangeAndNamedByRole) {
  EXPECT_EQ(contract.reduceScatter({4, 8}, {"tp"}, 2).message(),
            "reduce_scatter over [\"tp\"]: dim 2 is out of range for shape "
            "[4, 8]");
  EXPECT_EQ(contract.allToAll({4, 8}, {"tp"}, 0, -1).message(),
            "all_to_all over [\"tp\"]: concat dim -1 is out of range for "
            "shape [4, 8]");
  EXPECT_EQ(contract.allToAll({4, 8}, {"tp"}, 5, 0).message(),
            "all_to_all over [\"tp\"]: split dim 5 is out of range for shape "
            "[4, 8]");
  EXPECT_FALSE(contract.allGather({}, {"tp"}, 0).ok());
  EXPECT_FALSE(contract.allSlice({4}, {"tp"}, 1).ok());
}

TEST_F(ContractTest, AxesAreTheDialectsGroupAxes) {
  // Stricter than both communicators were: an empty list was a group of one.
  EXPECT_EQ(contract.allReduce({4}, {}, ReduceKind::Sum).message(),
            "all_reduce sum over []: a collective needs at least one mesh "
            "axis");
  EXPECT_FALSE(contract.broadcast({4}, {}, 0).ok());
  EXPECT_EQ(contract.allGather({4}, {"sp"}, 0).message(),
            "all_gather over [\"sp\"]: `sp` is not an axis of mesh "
            "{dp:2, tp:4}");
  EXPECT_EQ(contract.allSlice({4}, {"tp", "tp"}, 0).message(),
            "all_slice over [\"tp\", \"tp\"]: mesh axis `tp` is named twice");
}

TEST_F(ContractTest, CutDimsAreDivisibleByTheGroup) {
  EXPECT_EQ(contract.reduceScatter({4, 6}, {"tp"}, 1).message(),
            "reduce_scatter over [\"tp\"]: the group size 4 does not divide "
            "dim 1 (size 6) of shape [4, 6]");
  EXPECT_EQ(contract.allSlice({4, 6}, {"dp", "tp"}, 0).message(),
            "all_slice over [\"dp\", \"tp\"]: the group size 8 does not "
            "divide dim 0 (size 4) of shape [4, 6]");
  // Only the split dim is cut; the concat dim grows.
  EXPECT_TRUE(contract.allToAll({4, 6}, {"tp"}, 0, 1).ok());
  EXPECT_FALSE(contract.allToAll({4, 6}, {"tp"}, 1, 0).ok());
}

TEST_F(ContractTest, RootsAndPairsAreInTheGroup) {
  EXPECT_EQ(contract.broadcast({4}, {"tp"}, 4).message(),
            "broadcast over [\"tp\"]: root 4 is outside the group of 4");
  EXPECT_FALSE(contract.broadcast({4}, {"tp"}, -1).ok());
  EXPECT_EQ(contract.collectivePermute({4}, {"dp"}, {{0, 2}}).message(),
            "collective_permute over [\"dp\"]: pair (0, 2) is outside the "
            "group of 2");
  EXPECT_EQ(contract.collectivePermute({4}, {"tp"}, {{0, 0}, {0, 1}}).message(),
            "collective_permute over [\"tp\"]: member 0 is the source of two "
            "pairs");
  EXPECT_EQ(contract.collectivePermute({4}, {"tp"}, {{0, 1}, {2, 1}}).message(),
            "collective_permute over [\"tp\"]: member 1 is the target of two "
            "pairs");
}

TEST_F(ContractTest, PeersAndTagsOfSendAndRecv) {
  EXPECT_EQ(contract.send({4}, 8, 0).message(),
            "send to rank 8 (tag 0): rank 8 is outside the 8 ranks of mesh "
            "{dp:2, tp:4}");
  EXPECT_FALSE(contract.recv({4}, -1, 0).ok());
  // Stricter for NCCL (which checked no shape and no tag) and for MPI
  // (which allowed tags up to its MPI_TAG_UB): the dialect's C4 bound.
  EXPECT_EQ(contract.recv({4}, 0, -1).message(),
            "recv from rank 0 (tag -1): tag -1 is outside [0, 32767]");
  EXPECT_EQ(contract.send({4}, 0, kMaxTag + 1).message(),
            "send to rank 0 (tag 32768): tag 32768 is outside [0, 32767]");
  EXPECT_EQ(contract.send({-4}, 0, 0).message(),
            "send to rank 0 (tag 0): shape [-4] has a negative dim 0");
}

TEST_F(ContractTest, ReceivedMessagesMatchInSizeAndWhereKnownInType) {
  std::string what = CollectiveContract::describeRecv(1, 11);
  // MPI knows only the size of a probed message.
  EXPECT_TRUE(contract.received(what, {4}, "f64", 8, {32}).ok());
  EXPECT_EQ(contract.received(what, {4}, "f64", 8, {24}).message(),
            "rank 5: recv from rank 1 (tag 11): expects shape [4] (4 f64 "
            "elements, 32 bytes) but the message holds 24 bytes");
  // NCCL's step table knows type and count: same bytes are not enough.
  EXPECT_TRUE(contract.received(what, {2, 2}, "f32", 4, {16, "f32", 4}).ok());
  EXPECT_EQ(contract.received(what, {4}, "f32", 4, {16, "i64", 2}).message(),
            "rank 5: recv from rank 1 (tag 11): expects shape [4] (4 f32 "
            "elements, 16 bytes) but the message holds 2 i64 elements (16 "
            "bytes)");
}

} // namespace

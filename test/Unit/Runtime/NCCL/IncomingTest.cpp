//===- IncomingTest.cpp - Each rank's beginStep() table from the sends ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// An emitted CUDA program lists its sends once and each rank derives the
// messages it receives at run time (nccl::incomingMessages). The reference
// here is what the compiler printed per rank before: run every rank's
// program (the sites of its stage, in order), deliver each send to its peer,
// and list a receiver's messages by sender in rank order, each sender's in
// its program order.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/NCCL/Incoming.h"

#include "gtest/gtest.h"

#include <map>

using namespace loom::runtime;
using nccl::Message;
using nccl::SendSite;

namespace {

std::vector<std::vector<Message>>
referenceTables(const mpi::DeviceMesh &mesh, int64_t pipelineAxis,
                const std::vector<SendSite> &sites) {
  int64_t n = mesh.getNumDevices();
  std::map<std::pair<int64_t, int64_t>, std::vector<Message>> sent;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<int64_t> coordinates = mesh.getCoordinates(r);
    for (const SendSite &site : sites) {
      if (site.stage >= 0 &&
          coordinates[static_cast<size_t>(pipelineAxis)] != site.stage)
        continue;
      int64_t to = mesh.getPeer(r, static_cast<size_t>(site.axis), site.to);
      if (to == r)
        continue;
      sent[{r, to}].push_back(
          {r, site.tag, site.count, site.isInteger ? ncclInt64 : ncclFloat32});
    }
  }
  std::vector<std::vector<Message>> tables(n);
  for (const auto &[pair, messages] : sent) // by sender, then receiver
    for (const Message &m : messages)
      tables[pair.second].push_back(m);
  return tables;
}

void expectTablesMatch(const mpi::DeviceMesh &mesh, int64_t pipelineAxis,
                       const std::vector<SendSite> &sites) {
  std::vector<std::vector<Message>> expected =
      referenceTables(mesh, pipelineAxis, sites);
  for (int64_t r = 0; r < mesh.getNumDevices(); ++r) {
    std::vector<Message> got = nccl::incomingMessages<float>(
        mesh, r, pipelineAxis, sites.data(), sites.size());
    ASSERT_EQ(got.size(), expected[r].size()) << "rank " << r;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].peer, expected[r][i].peer) << "rank " << r << " #" << i;
      EXPECT_EQ(got[i].tag, expected[r][i].tag) << "rank " << r << " #" << i;
      EXPECT_EQ(got[i].count, expected[r][i].count) << "rank " << r;
      EXPECT_EQ(got[i].type, expected[r][i].type) << "rank " << r;
    }
  }
}

TEST(IncomingTest, PipelineStagesOnAPpDpMesh) {
  // pp=3 x dp=2, 2 micro-batches: activations forward, gradients back
  // (stage 2 sends its gradients in the reverse order), and an integer
  // message from stage 0 to stage 2.
  mpi::DeviceMesh mesh;
  ASSERT_TRUE(mpi::DeviceMesh::create({{"pp", 3}, {"dp", 2}}, mesh).ok());
  std::vector<SendSite> sites = {
      {0, 0, 1, 1, 16, false}, {0, 0, 1, 2, 16, false},
      {0, 0, 2, 9, 4, true},   {1, 0, 2, 1, 16, false},
      {1, 0, 2, 2, 16, false}, {2, 0, 1, 4, 16, false},
      {2, 0, 1, 3, 16, false}, {1, 0, 0, 3, 16, false},
      {1, 0, 0, 4, 16, false}};
  expectTablesMatch(mesh, 0, sites);
  // Rank 4 (pp 2, dp 0) hears from rank 0 (the integer) before rank 2.
  std::vector<Message> got =
      nccl::incomingMessages<float>(mesh, 4, 0, sites.data(), sites.size());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].peer, 0);
  EXPECT_EQ(got[0].type, ncclInt64);
  EXPECT_EQ(got[1].peer, 2);
  EXPECT_EQ(got[1].tag, 1);
}

TEST(IncomingTest, UnstagedSendsToOneCoordinateAndToOneself) {
  // Every rank of dp=4 sends to coordinate 0 (rank 0 sends to itself: no
  // message); an unstaged program has no pipeline axis.
  mpi::DeviceMesh mesh;
  ASSERT_TRUE(mpi::DeviceMesh::create({{"tp", 2}, {"dp", 4}}, mesh).ok());
  std::vector<SendSite> sites = {{-1, 1, 0, 7, 8, false},
                                 {-1, 0, 1, 5, 2, true}};
  expectTablesMatch(mesh, -1, sites);
  EXPECT_EQ(
      nccl::incomingMessages<double>(mesh, 0, -1, sites.data(), sites.size())
          .size(),
      3u);
}

} // namespace

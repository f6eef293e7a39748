//===- DeviceMeshTest.cpp - The runtime's mesh is dist::Mesh --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's DeviceMesh is the compiler's dist::Mesh (the rank and group
// arithmetic is tested in test/Unit/Analysis/LayoutTest.cpp); these tests
// pin what the wrapper adds: a one-device default, and construction that
// reports dist::Mesh's own messages through the runtime's Status.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/MPI/DeviceMesh.h"

#include "gtest/gtest.h"

using loom::runtime::mpi::DeviceMesh;
using loom::runtime::mpi::Status;
using mlir::loom::dist::Mesh;

namespace {

TEST(DeviceMeshTest, DefaultIsOneDevice) {
  DeviceMesh mesh;
  EXPECT_EQ(mesh.getNumAxes(), 0u);
  EXPECT_EQ(mesh.getNumDevices(), 1);
  EXPECT_EQ(mesh.toString(), "{}");
}

TEST(DeviceMeshTest, CreateAndParseGiveTheReferenceMesh) {
  DeviceMesh created, parsed;
  Status status = DeviceMesh::create({{"dp", 2}, {"tp", 4}}, created);
  ASSERT_TRUE(status.ok()) << status.message();
  status = DeviceMesh::parse("dp=2,tp=4", parsed);
  ASSERT_TRUE(status.ok()) << status.message();
  auto reference = Mesh::get({{"dp", 2}, {"tp", 4}});
  ASSERT_TRUE(reference.ok()) << reference.error();
  EXPECT_EQ(static_cast<const Mesh &>(created), *reference);
  EXPECT_EQ(static_cast<const Mesh &>(parsed), *reference);
  // The runtime asks the same questions of it as the partitioner.
  EXPECT_EQ(parsed.getGroup(5, {"dp"}), reference->getGroup(5, {"dp"}));
  EXPECT_EQ(parsed.getPeer(5, 0, 0), 1);
}

TEST(DeviceMeshTest, FailuresCarryTheReferenceMessages) {
  DeviceMesh mesh;
  EXPECT_EQ(DeviceMesh::parse("dp=2,tp", mesh).message(),
            Mesh::parse("dp=2,tp").error());
  EXPECT_EQ(DeviceMesh::parse("dp=2,dp=2", mesh).message(),
            "mesh axis `dp` is declared twice");
  EXPECT_EQ(DeviceMesh::create({{"dp", 0}}, mesh).message(),
            "mesh axis `dp` has size 0; sizes must be at least 1");
  // A failure leaves the output as it was.
  EXPECT_EQ(mesh.getNumDevices(), 1);
}

} // namespace

//===- WorkspaceTest.cpp - The host step's arena -------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// host::Workspace, the memory of an emitted host step (docs/Codegen.md,
// "Memory"): buffers at planned offsets are zeroed views of one aligned
// block the process keeps across steps; results are written into the
// caller's buffers; what a step held is recorded for --report-memory.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Host/Workspace.h"
#include "loom/Runtime/Support/StepMemory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace loom::runtime::host {
namespace {

struct Buffer {
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

TEST(HostWorkspaceTest, ArenaSlicesAreZeroedViewsOfOneAlignedBlock) {
  Workspace ws(256, 1000);
  float *a = ws.at<float>(0, 16);
  double *b = ws.at<double>(64, 8);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<char *>(b) - reinterpret_cast<char *>(a), 64);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(a[i], 0.0f);
  // A later buffer at the same offset (the plan reuses dead bytes) starts
  // from zeros, not from the previous value.
  a[3] = 7;
  float *again = ws.at<float>(0, 16);
  EXPECT_EQ(again, a);
  EXPECT_EQ(again[3], 0.0f);
}

TEST(HostWorkspaceTest, EveryStepReusesTheProcesssArena) {
  char *first = nullptr;
  {
    Workspace ws(1 << 20, 0);
    first = ws.at<char>(0, 1);
  }
  {
    // A smaller or equal arena is the same block: nothing is allocated.
    Workspace ws(4096, 0);
    EXPECT_EQ(ws.at<char>(0, 1), first);
  }
}

TEST(HostWorkspaceTest, RecordsTheArenaAndTheOtherBuffers) {
  stepMemory() = StepMemory();
  std::vector<Buffer> args(2);
  args[0].floats.assign(10, 1.0f); // 40 B
  args[1].ints.assign(3, 1);       // 24 B
  std::vector<float> result(2, 5.0f);
  const std::vector<float> constant(4, 2.0f); // 16 B
  {
    Workspace ws(512, 900);
    ws.countArguments(args);
    // A result is the caller's buffer, resized and zeroed.
    float *out = ws.result(result, 6); // 24 B
    EXPECT_EQ(out, result.data());
    EXPECT_EQ(result, std::vector<float>(6, 0.0f));
    EXPECT_EQ(ws.constant(constant), constant.data());
    // A negative offset is a zeroed block of its own (8 B).
    int64_t *own = ws.at<int64_t>(-1, 1);
    EXPECT_EQ(own[0], 0);
    EXPECT_EQ(ws.getOtherBytes(), 40 + 24 + 24 + 16 + 8);
  }
  EXPECT_EQ(stepMemory().arenaBytes, 512);
  EXPECT_EQ(stepMemory().otherBytes, 40 + 24 + 24 + 16 + 8);
  EXPECT_EQ(stepMemory().predictedPeakBytes, 900);
}

} // namespace
} // namespace loom::runtime::host

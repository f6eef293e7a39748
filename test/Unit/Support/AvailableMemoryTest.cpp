//===- AvailableMemoryTest.cpp - What the machine can still give ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The readers of /proc/meminfo and of the memory cgroups' limit files: the
// right line, malformed and overflowing numbers refused rather than read as
// something else, no limit, and usage above the limit.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/AvailableMemory.h"

#include "gtest/gtest.h"

using namespace loom::support;

namespace {

TEST(AvailableMemoryTest, ReadsMemAvailableInBytes) {
  EXPECT_EQ(parseMemAvailable("MemTotal:       24575340 kB\n"
                              "MemFree:         1234567 kB\n"
                              "MemAvailable:   23858584 kB\n"
                              "Buffers:          123456 kB\n"),
            std::optional<int64_t>(23858584LL * 1024));
}

TEST(AvailableMemoryTest, RefusesWhatIsNotItsLine) {
  // Missing, not at a line start, no unit, not a number, too large.
  EXPECT_EQ(parseMemAvailable("MemTotal: 100 kB\nMemFree: 50 kB\n"),
            std::nullopt);
  EXPECT_EQ(parseMemAvailable("XMemAvailable: 100 kB\n"), std::nullopt);
  EXPECT_EQ(parseMemAvailable("MemAvailable: 100\n"), std::nullopt);
  EXPECT_EQ(parseMemAvailable("MemAvailable: lots kB\n"), std::nullopt);
  EXPECT_EQ(parseMemAvailable("MemAvailable: 99999999999999999999 kB\n"),
            std::nullopt);
  EXPECT_EQ(parseMemAvailable("MemAvailable: 9007199254740993 kB\n"),
            std::nullopt); // fits in int64_t as KiB, not as bytes
  // The line may come after one that merely contains the key.
  EXPECT_EQ(parseMemAvailable("XMemAvailable: 1 kB\nMemAvailable: 2 kB\n"),
            std::optional<int64_t>(2048));
}

TEST(AvailableMemoryTest, CgroupHeadroom) {
  EXPECT_EQ(parseCgroupHeadroom("8589934592\n", "1073741824\n"),
            std::optional<int64_t>(7516192768));
  // cgroup v2 without a limit.
  EXPECT_EQ(parseCgroupHeadroom("max\n", "1073741824\n"), std::nullopt);
  // Usage above the limit (reclaim pending): nothing left, not negative.
  EXPECT_EQ(parseCgroupHeadroom("100\n", "200\n"), std::optional<int64_t>(0));
  EXPECT_EQ(parseCgroupHeadroom("", "200\n"), std::nullopt);
}

TEST(AvailableMemoryTest, TheMachineReportsSomething) {
  // Where /proc/meminfo exists, the process's own estimate is a positive
  // number of bytes with its source named.
  std::optional<AvailableMemory> available = availableHostMemory();
#if defined(__linux__)
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(available->bytes, 0);
  EXPECT_FALSE(available->source.empty());
#endif
}

} // namespace

//===- MemoryTest.cpp - Freed step buffers stay resident ------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// keepFreedMemoryResident() must make a large block that was freed come back
// without page faults: the trainer relies on it so that each step reuses the
// previous step's pages instead of faulting (and the kernel zeroing) them
// again. Measured with the process's minor fault count.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/Memory.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>

#include <sys/resource.h>

namespace {

long minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/// Allocates `bytes`, writes every byte, frees it; returns the minor page
/// faults that took.
long faultsOfOneBuffer(size_t bytes) {
  long before = minorFaults();
  auto *block = static_cast<unsigned char *>(std::malloc(bytes));
  if (!block)
    return -1;
  std::memset(block, 0x5A, bytes);
  // Keep the allocation and the writes: the pointer escapes to an empty
  // asm statement that may read all memory, so neither can be elided.
  asm volatile("" : : "r"(block) : "memory");
  std::free(block);
  return minorFaults() - before;
}

#if defined(__GLIBC__)
TEST(Memory, AFreedLargeBufferComesBackWithoutPageFaults) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  // AddressSanitizer's allocator replaces glibc's, whose setting this is.
  GTEST_SKIP() << "glibc's malloc is replaced by AddressSanitizer's";
#endif
#endif
  constexpr size_t kBytes = 256u << 20; // above any mmap threshold
  constexpr long kPages = static_cast<long>(kBytes / 4096);
  // Without the setting glibc maps and unmaps the block each time: every
  // allocation faults in all its pages.
  ASSERT_GT(faultsOfOneBuffer(kBytes), kPages / 2);
  ASSERT_GT(faultsOfOneBuffer(kBytes), kPages / 2);

  loom::runtime::keepFreedMemoryResident();
  faultsOfOneBuffer(kBytes); // the heap grows to hold it once
  EXPECT_LT(faultsOfOneBuffer(kBytes), kPages / 100);
  EXPECT_LT(faultsOfOneBuffer(kBytes), kPages / 100);
}
#endif

} // namespace

//===- Memory.cpp - Keep the step's memory resident between steps ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// glibc's knobs, see Memory.h for why. M_MMAP_MAX = 0 serves every block
// from the heap; M_TRIM_THRESHOLD = -1 never gives the top of the heap back
// (INT_MAX would not do: a step frees more than 2 GiB at once).
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/Memory.h"

#include <cstdlib> // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace loom::runtime {

void keepFreedMemoryResident() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
#endif
}

} // namespace loom::runtime

//===- StepMemory.cpp - The memory a step used ----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Support/StepMemory.h"

#include <cstdio>

namespace loom::runtime {

StepMemory &stepMemory() {
  static StepMemory record;
  return record;
}

ResidentSet residentSet() {
  ResidentSet set;
  std::FILE *status = std::fopen("/proc/self/status", "r");
  if (!status)
    return set;
  char line[256];
  while (std::fgets(line, sizeof line, status)) {
    long long kib = 0;
    if (std::sscanf(line, "VmRSS: %lld kB", &kib) == 1)
      set.current = kib * 1024;
    else if (std::sscanf(line, "VmHWM: %lld kB", &kib) == 1)
      set.peak = kib * 1024;
  }
  std::fclose(status);
  return set;
}

bool resetResidentSetPeak() {
  std::FILE *refs = std::fopen("/proc/self/clear_refs", "w");
  if (!refs)
    return false;
  bool written = std::fputs("5", refs) >= 0;
  return std::fclose(refs) == 0 && written;
}

} // namespace loom::runtime

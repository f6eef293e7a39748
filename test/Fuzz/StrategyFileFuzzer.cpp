//===- StrategyFileFuzzer.cpp - libFuzzer target: strategy files ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to `parseStrategyFile`: no crash, no hang, no
// sanitizer report, and a refused file says why. tools/fuzz.sh runs it.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Strategy/ShardingSpec.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir::loom::dist;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  ShardingSpec spec;
  std::string error = parseStrategyFile(text, spec);
  (void)error;
  return 0;
}

//===- ParallelConfigFuzzer.cpp - libFuzzer target: parallel configs ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to `parseParallelConfig` and, for every config it
// accepts, expands it into a sharding spec (the next thing the passes do).
// Beyond "no crash, no hang, no sanitizer report": an accepted config has
// positive degrees. tools/fuzz.sh runs it.
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
  ValueOrError<ParallelConfig> config = parseParallelConfig(text);
  if (!config)
    return 0;
  if (config->dataParallel < 1 || config->modelParallel < 1 ||
      config->pipelineStages < 1 || config->microBatches < 1 ||
      config->contextParallel < 1) {
    fprintf(stderr, "accepted a config with a degree below 1\n");
    abort();
  }
  ShardingSpec spec;
  expandParallelConfig(*config, spec);
  return 0;
}

//===- ManifestFuzzer.cpp - libFuzzer target: checkpoint manifests --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Writes arbitrary bytes as a checkpoint's manifest.json and reads it as
// `--resume` and `loom-ckpt` do (`readCheckpointManifest`: the schema and
// verifyManifest): no crash, no hang, no sanitizer report, and an accepted
// manifest passes verifyManifest again. tools/fuzz.sh runs it.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/Checkpoint.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace loom::runtime::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string dir =
      "/tmp/loom-manifest-fuzz-" + std::to_string(getpid());
  static bool made = [] {
    std::error_code ignored;
    std::filesystem::create_directories(dir, ignored);
    return true;
  }();
  (void)made;
  {
    std::ofstream out(dir + "/manifest.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data),
              static_cast<std::streamsize>(size));
  }
  CheckpointManifest manifest;
  if (!readCheckpointManifest(dir, manifest))
    return 0;
  if (Status status = verifyManifest(manifest); !status) {
    fprintf(stderr, "an accepted manifest fails verifyManifest: %s\n",
            status.message().c_str());
    abort();
  }
  return 0;
}

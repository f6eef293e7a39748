//===- SafeTensorsFuzzer.cpp - libFuzzer target: safetensors files --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to `parseSafeTensors` (the reader behind every
// batch, checkpoint and --inputs file). Beyond "no crash, no hang, no
// sanitizer report", every accepted file round-trips: serialized, parsed
// again and serialized again, it gives the same bytes. tools/fuzz.sh runs
// it.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/SafeTensors.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace loom::runtime::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string contents(reinterpret_cast<const char *>(data), size);
  TensorMap tensors;
  std::map<std::string, std::string> metadata;
  if (parseSafeTensors("fuzz.safetensors", contents, tensors, &metadata))
    return 0;
  std::string first = serializeSafeTensors(tensors, metadata);
  TensorMap again;
  std::map<std::string, std::string> againMetadata;
  if (std::optional<std::string> error = parseSafeTensors(
          "serialized.safetensors", first, again, &againMetadata)) {
    fprintf(stderr, "round trip: the serialized file is refused: %s\n",
            error->c_str());
    abort();
  }
  if (serializeSafeTensors(again, againMetadata) != first) {
    fprintf(stderr, "round trip: serializing again changes the bytes\n");
    abort();
  }
  return 0;
}

//===- ClusterSpecFuzzer.cpp - libFuzzer target: cluster specs ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to `parseClusterSpec`. Beyond "no crash, no hang,
// no sanitizer report", every accepted spec round-trips: printed, parsed
// again and printed again, it gives the same text. tools/fuzz.sh runs it.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/Cost/ClusterSpec.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir::loom::dist;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  ValueOrError<ClusterSpec> spec = parseClusterSpec(text, "fuzz.json");
  if (!spec)
    return 0;
  std::string printed = printClusterSpec(*spec);
  ValueOrError<ClusterSpec> again = parseClusterSpec(printed, "printed.json");
  if (!again) {
    fprintf(stderr, "round trip: the printed spec is refused: %s\n%s\n",
            again.error().c_str(), printed.c_str());
    abort();
  }
  if (printClusterSpec(*again) != printed) {
    fprintf(stderr, "round trip: printing again changes the spec\n");
    abort();
  }
  return 0;
}

//===- TokenFileFuzzer.cpp - libFuzzer target: token files ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Writes arbitrary bytes to a file and opens it as a token file (format
// detected, GPT-2's vocabulary), then reads every token: no crash, no hang,
// no sanitizer report, and an opened file reads whole or says why.
// tools/fuzz.sh runs it.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/IO/TokenFile.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace loom::runtime::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path =
      "/tmp/loom-token-fuzz-" + std::to_string(getpid()) + ".bin";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data),
              static_cast<std::streamsize>(size));
  }
  TokenFile file;
  if (!TokenFile::open(path, TokenFormat::Auto, /*vocabSize=*/50257, file))
    return 0;
  std::vector<int32_t> tokens(1024);
  for (int64_t at = 0; at < file.getNumTokens(); at += 1024) {
    int64_t count = std::min<int64_t>(1024, file.getNumTokens() - at);
    if (!file.read(at, count, tokens.data()))
      break;
  }
  return 0;
}

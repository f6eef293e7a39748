//===- ModelReaderUnavailable.cpp - ONNX reading in a build without it ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Built instead of ModelReader.cpp when CMake did not find libonnx-dev and
// protobuf: the rest of Loom builds and runs, and `.onnx` input is refused
// with a message that says why.
//
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"

using namespace mlir::loom::onnx_import;

bool mlir::loom::onnx_import::haveOnnxSupport() { return false; }

bool mlir::loom::onnx_import::readModel(const char *, size_t, Model &,
                                        std::string &error) {
  error = "this build of Loom has no ONNX support: it was configured "
          "without libonnx-dev and libprotobuf-dev (or with "
          "-DLOOM_ENABLE_ONNX=OFF); install them, e.g. with "
          "tools/install-deps.sh, and reconfigure";
  return false;
}

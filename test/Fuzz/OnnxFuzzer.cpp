//===- OnnxFuzzer.cpp - libFuzzer target for the ONNX importer ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to `importOnnx`: the protobuf reader, constant
// folding, the operator mappings and the patterns. Beyond "no crash, no
// hang, no sanitizer report", every module it accepts must export as graph
// JSON (the importer builds it through graph JSON, so anything else is a
// bug). Built only with -DLOOM_ENABLE_FUZZERS=ON in a build that found
// libonnx-dev; docs/Testing.md says how to run it.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/Target/GraphJSON/GraphJSON.h"
#include "loom/Target/ONNX/ONNX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per few hundred inputs, as the graph JSON target does.
  static std::unique_ptr<MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % 512 == 0) {
    DialectRegistry registry;
    loom::registerAllDialects(registry);
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
  }
  ScopedDiagnosticHandler silence(context.get(),
                                  [](Diagnostic &) { return success(); });
  StringRef bytes(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      loom::importOnnx(bytes, "fuzz.onnx", context.get());
  if (!module)
    return 0;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(loom::exportGraphJson(*module, os))) {
    fprintf(stderr, "an imported ONNX model does not export as graph JSON\n");
    abort();
  }
  return 0;
}

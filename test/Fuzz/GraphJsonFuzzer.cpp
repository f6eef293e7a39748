//===- GraphJsonFuzzer.cpp - libFuzzer target for the graph JSON importer -===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to `importGraphJson`. Beyond "no crash, no hang, no
// sanitizer report", it checks the round-trip property on every input the
// importer accepts: the module exports, the export imports again, and
// exporting that gives the same text. Built only with -DLOOM_ENABLE_FUZZERS=ON
// (clang's -fsanitize=fuzzer,address); docs/Testing.md says how to run it.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/Target/GraphJSON/GraphJSON.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace mlir;

static std::string exportOrDie(ModuleOp module, const char *what) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(loom::exportGraphJson(module, os))) {
    fprintf(stderr, "round trip: export of %s failed\n", what);
    abort();
  }
  return text;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per few hundred inputs: reusing one is fast, but it keeps
  // every uniqued string and type the inputs invent.
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
  StringRef text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      loom::importGraphJson(text, "fuzz.json", context.get());
  if (!module)
    return 0;
  std::string first = exportOrDie(*module, "an imported module");
  OwningOpRef<ModuleOp> again =
      loom::importGraphJson(first, "fuzz-export.json", context.get());
  if (!again) {
    fprintf(stderr, "round trip: the export does not import:\n%s\n",
            first.c_str());
    abort();
  }
  if (exportOrDie(*again, "a re-imported module") != first) {
    fprintf(stderr, "round trip: export differs after re-import\n");
    abort();
  }
  return 0;
}

//===- IrParserFuzzer.cpp - libFuzzer target for textual IR input ---------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to `loadInputBuffer` as textual IR: the nesting
// limit, then MLIR's parser with every dialect Loom reads (Loom's own
// attribute and type parsers, `#loom.param`'s and `#dist.*`'s verifiers)
// and the verifier. That is the path of loomc, the C API, Python, loom-opt
// and loom-run for a `.mlir` file. Beyond "no crash, no hang, no sanitizer
// report", every module it accepts must print as text that parses again
// and prints the same: a custom printer whose output its own parser
// refuses is a bug a user meets on the first `--compile-to` dump. Built
// only with -DLOOM_ENABLE_FUZZERS=ON; docs/Testing.md says how to run it.
//
//===----------------------------------------------------------------------===//

#include "loom/Driver/Driver.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace mlir;

static std::string print(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

static OwningOpRef<ModuleOp> load(StringRef text, StringRef name,
                                  MLIRContext *context) {
  llvm::SourceMgr sourceMgr;
  return loom::loadInputBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                               loom::InputFormat::MLIR, context, sourceMgr);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per few hundred inputs, as the graph JSON target does.
  static std::unique_ptr<MLIRContext> context;
  static unsigned uses = 0;
  if (!context || ++uses % 512 == 0) {
    context = std::make_unique<MLIRContext>(MLIRContext::Threading::DISABLED);
    loom::prepareContext(context.get());
  }
  ScopedDiagnosticHandler silence(context.get(),
                                  [](Diagnostic &) { return success(); });
  StringRef text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module = load(text, "fuzz.mlir", context.get());
  if (!module)
    return 0;
  std::string first = print(*module);
  OwningOpRef<ModuleOp> again = load(first, "fuzz-printed.mlir", context.get());
  if (!again) {
    fprintf(stderr, "round trip: the printed module does not parse:\n%s\n",
            first.c_str());
    abort();
  }
  if (print(*again) != first) {
    fprintf(stderr, "round trip: printing differs after parsing:\n%s\n",
            first.c_str());
    abort();
  }
  return 0;
}

//===- InitAllTranslations.cpp - Register loom-translate's modes ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllTranslations.h"

#include "loom/InitAllDialects.h"
#include "loom/Target/OpCensus/OpCensus.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

void mlir::loom::registerAllTranslations() {
  // Function-local statics: registering twice would be a duplicate-flag error.
  static TranslateFromMLIRRegistration opCensus(
      "op-census", "Write a JSON count of the ops in each function",
      [](ModuleOp module, raw_ostream &os) {
        return writeOpCensus(module, os);
      },
      [](DialectRegistry &registry) { registerAllDialects(registry); });
}

//===- loom-translate.cpp - Loom's importers, exporters and emitters ------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// mlir-translate for Loom: converts between Loom IR and the formats outside
// MLIR (graph JSON, generated host and CUDA code, reports). Run with --help
// for the registered translations.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::loom::registerAllTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Loom translation driver"));
}

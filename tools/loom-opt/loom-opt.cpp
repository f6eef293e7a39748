//===- loom-opt.cpp - The Loom optimizer driver ---------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt for Loom: parses IR in Loom's dialects and the upstream ones it
// uses, runs any Loom pass or phase pipeline, and prints the result. Tests
// drive every pass through this tool, including the test-only passes of
// test/lib that print analyses (-test-print-sharding-rules, ...).
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/InitAllPasses.h"
#include "TestPasses.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::loom::registerAllPasses();
  mlir::loom::test::registerTestPasses();
  mlir::DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Loom optimizer driver\n", registry));
}

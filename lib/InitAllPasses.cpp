//===- InitAllPasses.cpp - Register every pass Loom provides --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllPasses.h"

#include "loom/Dialect/Dist/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

void mlir::loom::registerAllPasses() {
  // Upstream passes Loom's pipelines and tests use.
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();

  // Loom's passes, then the phase pipelines built from them.
  registerLoomPasses();
  registerLoomPipelines();
  dist::registerDistPasses();
  dist::registerDistPipelines();
}

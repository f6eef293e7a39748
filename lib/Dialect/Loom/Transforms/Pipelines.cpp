//===- Pipelines.cpp - Phase pipelines of the loom dialect ----------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Each phase of Loom is a named pass pipeline that ends in a contract-verifier
// pass; `loom-opt -loom-<phase>-pipeline` and the driver run the same list.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::loom;

void mlir::loom::buildImportPipeline(OpPassManager &pm) {
  // The importers build the graph directly; all that is left is to check it
  // satisfies the contract every later phase assumes.
  pm.addPass(createVerifyImportPass());
}

void mlir::loom::registerLoomPipelines() {
  PassPipelineRegistration<>(
      "loom-import-pipeline",
      "Check a freshly imported model graph (ends the import phase)",
      buildImportPipeline);
}

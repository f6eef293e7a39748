//===- Models.cpp - Dispatch to the family builders -----------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The family-independent entry points: configuration checks reported as
// diagnostics, and the dispatch on the family.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/Models.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace mlir::loom::models;

LogicalResult mlir::loom::models::checkConfig(const ModelConfig &config,
                                              ModelFamily family,
                                              MLIRContext &context) {
  if (config.family != family) {
    emitError(UnknownLoc::get(&context))
        << "expected a " << getFamilyName(family) << " configuration, found "
        << getFamilyName(config.family);
    return failure();
  }
  if (llvm::Error error = validateConfig(config)) {
    emitError(UnknownLoc::get(&context)) << llvm::toString(std::move(error));
    return failure();
  }
  return success();
}

OwningOpRef<ModuleOp> mlir::loom::models::buildModel(const ModelConfig &config,
                                                     MLIRContext &context) {
  switch (config.family) {
  case ModelFamily::GPT2:
    return buildGPT2(config, context);
  case ModelFamily::Llama:
    return buildLlama(config, context);
  case ModelFamily::Transformer:
    return buildEncoderDecoder(config, context);
  case ModelFamily::TransformerLM:
    return buildTransformerLM(config, context);
  }
  llvm_unreachable("unknown model family");
}

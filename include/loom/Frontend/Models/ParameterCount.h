//===- ParameterCount.h - Parameter counts of the model families -*- C++
//-*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Two ways to count a model's trainable parameters: the closed-form formula
// of each family (what the papers and model cards quote, checked against
// their numbers in the unit tests) and a count of the `loom.param` arguments
// of a built graph (what the tool prints). The tests hold the two equal, so
// a builder that forgets or duplicates a parameter is caught.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_FRONTEND_MODELS_PARAMETERCOUNT_H
#define LOOM_FRONTEND_MODELS_PARAMETERCOUNT_H

#include "loom/Frontend/Models/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>

namespace mlir {
namespace loom {
namespace models {

/// The number of trainable parameters of `config` by its family's formula,
/// tied weights counted once (GPT-2's `lm_head` is `transformer.wte`).
/// `config` must pass validateConfig, which bounds the result.
int64_t countParameters(const ModelConfig &config);

/// The number of elements of the arguments of `@<entry>` in `module` that
/// carry `loom.param`, each distinct parameter name counted once; 0 if there
/// is no such function.
int64_t countModuleParameters(ModuleOp module,
                              llvm::StringRef entry = "forward");

} // namespace models
} // namespace loom
} // namespace mlir

#endif // LOOM_FRONTEND_MODELS_PARAMETERCOUNT_H

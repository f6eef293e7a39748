//===- Models.h - Model builders: configuration in, loss graph out -*- C++
//-*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// One builder per model family. Each takes a ModelConfig and a context and
// returns a module holding `func.func @forward(params..., input_ids, labels
// [, decoder_input_ids]) -> tensor<T>` (the mean cross-entropy loss), built
// from `loom` ops (and `arith.constant` tables), with every parameter
// carrying `#loom.param<"<ecosystem name>", init = ..., decay = ...>` and
// every data input `#loom.input<role>`. The result passes
// `loom-verify-import`. docs/Models.md describes each architecture.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_FRONTEND_MODELS_MODELS_H
#define LOOM_FRONTEND_MODELS_MODELS_H

#include "loom/Frontend/Models/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
namespace loom {
namespace models {

/// nanoGPT's GPT: pre-LN blocks, learned positions, GELU MLP, lm_head tied
/// to `transformer.wte.weight`.
OwningOpRef<ModuleOp> buildGPT2(const ModelConfig &config,
                                MLIRContext &context);

/// Hugging Face's LlamaForCausalLM: RMSNorm, RoPE, grouped-query attention,
/// SwiGLU MLP, no biases, untied lm_head.
OwningOpRef<ModuleOp> buildLlama(const ModelConfig &config,
                                 MLIRContext &context);

/// The MindSpore seed's encoder-decoder Transformer: word and position
/// embeddings for source and target, pre-LN encoder and decoder layers
/// (decoder: causal self-attention, cross-attention), a Linear head.
OwningOpRef<ModuleOp> buildEncoderDecoder(const ModelConfig &config,
                                          MLIRContext &context);

/// The PyTorch seed's TransformerEncoder LM: scaled embedding plus a
/// sinusoidal table, post-LN ReLU encoder layers with a causal mask, a
/// Linear decoder.
OwningOpRef<ModuleOp> buildTransformerLM(const ModelConfig &config,
                                         MLIRContext &context);

/// Builds `config.family`'s model. Every builder first checks `config` with
/// validateConfig and, if it is invalid, emits the error on `context` and
/// returns null.
OwningOpRef<ModuleOp> buildModel(const ModelConfig &config,
                                 MLIRContext &context);

/// Emits validateConfig's error for `config` on `context` (unknown
/// location) if there is one, and says whether `config` of `family` is
/// buildable.
LogicalResult checkConfig(const ModelConfig &config, ModelFamily family,
                          MLIRContext &context);

} // namespace models
} // namespace loom
} // namespace mlir

#endif // LOOM_FRONTEND_MODELS_MODELS_H

//===- ParameterCount.cpp - Parameter counts of the model families --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The formulas follow the module structure of each reference model, one
// term per parameter tensor, so each line can be read against the names in
// docs/Models.md.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/ParameterCount.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Dialect/Loom/IR/LoomAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

using ::mlir::loom::kParamAttrName;

using namespace mlir;
using namespace mlir::loom::models;

/// Parameters of a LayerNorm with weight and bias over `h` features.
static int64_t layerNorm(int64_t h) { return 2 * h; }

/// Parameters of a Linear `in -> out` with an optional bias.
static int64_t linear(int64_t in, int64_t out, bool bias) {
  return in * out + (bias ? out : 0);
}

/// Multi-head attention with separate or fused q/k/v projections of width
/// `h` and an output projection, all with biases (GPT-2, both seeds).
static int64_t attentionWithBiases(int64_t h) {
  return linear(h, 3 * h, true) + linear(h, h, true);
}

/// A two-layer MLP `h -> f -> h` with biases.
static int64_t mlpWithBiases(int64_t h, int64_t f) {
  return linear(h, f, true) + linear(f, h, true);
}

int64_t mlir::loom::models::countParameters(const ModelConfig &c) {
  int64_t h = c.hidden, f = c.ffn, v = c.vocab;
  switch (c.family) {
  case ModelFamily::GPT2: {
    // wte (shared with lm_head unless untied) + wpe + blocks + ln_f; without
    // biases (nanoGPT's bias=False) no Linear or LayerNorm has one.
    bool b = c.bias;
    int64_t norm = b ? layerNorm(h) : h;
    int64_t block = norm + linear(h, 3 * h, b) + linear(h, h, b) + norm +
                    linear(h, f, b) + linear(f, h, b);
    int64_t head = c.tieEmbeddings ? 0 : linear(h, v, false);
    return v * h + c.seq * h + c.layers * block + norm + head;
  }
  case ModelFamily::Llama: {
    int64_t headSize = h / c.heads;
    int64_t qWidth = c.heads * headSize, kvWidth = c.kvHeads * headSize;
    // input_layernorm, q/k/v/o, post_attention_layernorm, gate/up/down.
    int64_t layer = h + linear(h, qWidth, false) +
                    2 * linear(h, kvWidth, false) + linear(qWidth, h, false) +
                    h + 3 * linear(h, f, false);
    // embed_tokens + layers + norm + lm_head (untied).
    return v * h + c.layers * layer + h + linear(h, v, false);
  }
  case ModelFamily::Transformer: {
    int64_t encoder = layerNorm(h) + attentionWithBiases(h) + layerNorm(h) +
                      mlpWithBiases(h, f);
    // The decoder layer adds a cross-attention and its LayerNorm.
    int64_t decoder = encoder + layerNorm(h) + attentionWithBiases(h);
    // Word and position tables of source and target, layers, the head.
    return v * h + c.seq * h + v * h + c.tgtSeq * h + c.layers * encoder +
           c.decoderLayers * decoder + linear(h, v, false);
  }
  case ModelFamily::TransformerLM: {
    int64_t layer =
        attentionWithBiases(h) + mlpWithBiases(h, f) + 2 * layerNorm(h);
    // encoder (embedding) + layers + decoder (Linear with bias).
    return v * h + c.layers * layer + linear(h, v, true);
  }
  }
  llvm_unreachable("unknown model family");
}

int64_t mlir::loom::models::countModuleParameters(ModuleOp module,
                                                  llvm::StringRef entry) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return 0;
  llvm::StringSet<> seen;
  int64_t total = 0;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto param = func.getArgAttrOfType<ParamAttr>(i, kParamAttrName);
    if (!param || !seen.insert(param.getName()).second)
      continue;
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (type && type.hasStaticShape())
      total += type.getNumElements();
  }
  return total;
}

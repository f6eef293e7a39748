//===- Llama.cpp - Hugging Face's LlamaForCausalLM as a loss graph --------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// transformers' modeling_llama.py, LlamaForCausalLM.forward with labels:
//
//   x = embed_tokens(input_ids)
//   for layer: x = x + o_proj(attn(rope(q_proj(n)), rope(k_proj(n)),
//                                  v_proj(n)))      n = input_layernorm(x)
//              x = x + down_proj(silu(gate_proj(n)) * up_proj(n))
//                                                   n =
//                                                   post_attention_layernorm(x)
//   logits = lm_head(norm(x));  loss = cross_entropy(logits, labels, -100)
//
// Labels are taken as already shifted (the `labels` input holds the next
// token of each position), as for every family here; Hugging Face shifts
// inside the loss instead.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/GraphBuilder.h"
#include "loom/Frontend/Models/Models.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::models;

OwningOpRef<ModuleOp> mlir::loom::models::buildLlama(const ModelConfig &c,
                                                     MLIRContext &context) {
  if (failed(checkConfig(c, ModelFamily::Llama, context)))
    return nullptr;
  GraphBuilder g(context, c.elementType);
  OpBuilder &b = g.getBuilder();
  int64_t hidden = c.hidden;
  int64_t headSize = hidden / c.heads;
  int64_t qWidth = c.heads * headSize, kvWidth = c.kvHeads * headSize;

  // LlamaPreTrainedModel._init_weights: N(0, initializer_range = 0.02) for
  // Linear and Embedding weights; RMSNorm weights start at one.
  InitializerAttr weightInit = g.normal(0.02);

  Value ids = g.addInput(InputRole::InputIds, {c.batch, c.seq});
  Value labels = g.addInput(InputRole::Labels, {c.batch, c.seq});

  g.setScope("model.embed_tokens");
  Value table = g.addParameter("model.embed_tokens.weight", {c.vocab, hidden},
                               weightInit);
  Value x = EmbeddingOp::create(b, g.getLoc(), table, ids, Value());

  for (int64_t i = 0; i < c.layers; ++i) {
    std::string layer = "model.layers." + std::to_string(i);

    g.setScope(layer + ".self_attn");
    Value h = g.rmsNorm(x, layer + ".input_layernorm", c.normEps);
    std::string attn = layer + ".self_attn";
    Value q = g.linearLayer(h, attn + ".q_proj", hidden, qWidth, weightInit,
                            /*biasInit=*/nullptr);
    Value k = g.linearLayer(h, attn + ".k_proj", hidden, kvWidth, weightInit,
                            /*biasInit=*/nullptr);
    Value v = g.linearLayer(h, attn + ".v_proj", hidden, kvWidth, weightInit,
                            /*biasInit=*/nullptr);
    Value y = g.multiHeadAttention(q, k, v, c.heads, c.kvHeads,
                                   /*causal=*/true, c.ropeTheta);
    y = g.linearLayer(y, attn + ".o_proj", qWidth, hidden, weightInit,
                      /*biasInit=*/nullptr);
    x = g.add(x, y);

    g.setScope(layer + ".mlp");
    h = g.rmsNorm(x, layer + ".post_attention_layernorm", c.normEps);
    std::string mlp = layer + ".mlp";
    Value gate = g.linearLayer(h, mlp + ".gate_proj", hidden, c.ffn, weightInit,
                               /*biasInit=*/nullptr);
    Value up = g.linearLayer(h, mlp + ".up_proj", hidden, c.ffn, weightInit,
                             /*biasInit=*/nullptr);
    h = MulOp::create(b, g.getLoc(), SiluOp::create(b, g.getLoc(), gate), up);
    h = g.linearLayer(h, mlp + ".down_proj", c.ffn, hidden, weightInit,
                      /*biasInit=*/nullptr);
    x = g.add(x, h);
  }

  g.setScope("lm_head");
  x = g.rmsNorm(x, "model.norm", c.normEps);
  Value logits = g.linearLayer(x, "lm_head", hidden, c.vocab, weightInit,
                               /*biasInit=*/nullptr);
  Value loss = CrossEntropyOp::create(b, g.getLoc(), logits, labels,
                                      /*offset=*/Value());
  return g.finish(loss);
}

//===- GPT2.cpp - nanoGPT's GPT as a loss graph ---------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// karpathy/nanoGPT model.py, GPT.forward with targets, block by block:
//
//   x = drop(wte(idx) + wpe(pos))
//   for block: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
//   logits = ln_f(x) @ wte^T;  loss = cross_entropy(logits, targets, -100)
//
// The sequence length is the block size, so the positions 0..S-1 select
// every row of wpe in order and `wpe(pos)` is wpe itself: it is added whole
// (broadcast over the batch) rather than looked up.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/GraphBuilder.h"
#include "loom/Frontend/Models/Models.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::models;

OwningOpRef<ModuleOp> mlir::loom::models::buildGPT2(const ModelConfig &c,
                                                    MLIRContext &context) {
  if (failed(checkConfig(c, ModelFamily::GPT2, context)))
    return nullptr;
  GraphBuilder g(context, c.elementType);
  OpBuilder &b = g.getBuilder();
  int64_t batch = c.batch, seq = c.seq, hidden = c.hidden;

  // nanoGPT's _init_weights: N(0, 0.02) for Linear and Embedding weights,
  // zero biases; the residual projections (`c_proj.weight`) get
  // 0.02 / sqrt(2 * n_layer).
  InitializerAttr weightInit = g.normal(0.02);
  InitializerAttr residualInit = g.scaledNormal(0.02, 2.0 * c.layers);
  InitializerAttr biasInit = g.zeros();
  GeluApproximation gelu =
      c.geluTanh ? GeluApproximation::Tanh : GeluApproximation::None;

  Value ids = g.addInput(InputRole::InputIds, {batch, seq});
  Value labels = g.addInput(InputRole::Labels, {batch, seq});

  g.setScope("transformer");
  Value wte =
      g.addParameter("transformer.wte.weight", {c.vocab, hidden}, weightInit);
  Value wpe =
      g.addParameter("transformer.wpe.weight", {seq, hidden}, weightInit);
  Value x = g.add(EmbeddingOp::create(b, g.getLoc(), wte, ids, Value()), wpe);
  x = g.dropout(x, c.dropout);

  for (int64_t i = 0; i < c.layers; ++i) {
    std::string block = "transformer.h." + std::to_string(i);

    g.setScope(block + ".attn");
    Value h = g.layerNorm(x, block + ".ln_1", c.normEps);
    Value qkv = g.linearLayer(h, block + ".attn.c_attn", hidden, 3 * hidden,
                              weightInit, biasInit);
    auto split = SplitOp::create(b, g.getLoc(), qkv, /*axis=*/2,
                                 ArrayRef<int64_t>{hidden, hidden, hidden});
    Value y = g.multiHeadAttention(split.getResult(0), split.getResult(1),
                                   split.getResult(2), c.heads, c.heads,
                                   /*causal=*/true);
    y = g.linearLayer(y, block + ".attn.c_proj", hidden, hidden, residualInit,
                      biasInit);
    x = g.add(x, g.dropout(y, c.dropout));

    g.setScope(block + ".mlp");
    h = g.layerNorm(x, block + ".ln_2", c.normEps);
    h = g.linearLayer(h, block + ".mlp.c_fc", hidden, c.ffn, weightInit,
                      biasInit);
    h = GeluOp::create(b, g.getLoc(), h, gelu);
    h = g.linearLayer(h, block + ".mlp.c_proj", c.ffn, hidden, residualInit,
                      biasInit);
    x = g.add(x, g.dropout(h, c.dropout));
  }

  g.setScope("lm_head");
  x = g.layerNorm(x, "transformer.ln_f", c.normEps);
  // Weight tying: lm_head.weight is transformer.wte.weight.
  Value logits = g.linear(x, wte, /*bias=*/Value());
  Value loss = CrossEntropyOp::create(b, g.getLoc(), logits, labels,
                                      /*offset=*/Value());
  return g.finish(loss);
}

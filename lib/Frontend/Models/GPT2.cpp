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
// nanoGPT's `bias` flag: false drops the bias of every Linear and LayerNorm
// (a LayerNorm keeps its weight). `tieEmbeddings` false gives the lm_head
// its own `lm_head.weight` [V, H] (nn.Linear(n_embd, vocab, bias=False)).
//
// The sequence length is the block size, so the positions 0..S-1 select
// every row of wpe in order and `wpe(pos)` is wpe itself: it is added whole
// (broadcast over the batch) rather than looked up.
//
// The fused `c_attn` projection's output rows are *head-major*, as
// Megatron-LM stores them: row `(h * 3 + j) * head_size + d` is element d of
// head h of q (j = 0), k (1) or v (2). nanoGPT's order is q, k, v blocks of
// `hidden` rows each; converting a Hugging Face checkpoint permutes the rows
// of `c_attn.weight` and `c_attn.bias` (docs/Models.md).
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
  // Without biases, linearLayer creates none (a null initializer).
  InitializerAttr biasInit = c.bias ? g.zeros() : InitializerAttr();
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
    Value h = g.layerNorm(x, block + ".ln_1", c.normEps, c.bias);
    Value qkv = g.linearLayer(h, block + ".attn.c_attn", hidden, 3 * hidden,
                              weightInit, biasInit);
    // Head-major fused QKV (Megatron's order, see the file comment): the
    // heads dim comes out of the projection whole, so splitting the heads
    // over devices needs no gather before the q/k/v split.
    int64_t headSize = hidden / c.heads;
    Value perHead = ReshapeOp::create(
        b, g.getLoc(), g.getFloatType({batch, seq, c.heads, 3 * headSize}),
        qkv);
    auto split = SplitOp::create(b, g.getLoc(), perHead, /*axis=*/3,
                                 ArrayRef<int64_t>{headSize, headSize,
                                                   headSize});
    auto toHeads = [&](Value t) -> Value {
      return TransposeOp::create(b, g.getLoc(), t,
                                 ArrayRef<int64_t>{0, 2, 1, 3});
    };
    Value attn = AttentionOp::create(
        b, g.getLoc(), toHeads(split.getResult(0)), toHeads(split.getResult(1)),
        toHeads(split.getResult(2)), /*mask=*/Value(), /*causal=*/true,
        /*scale=*/FloatAttr());
    Value y = g.mergeHeads(attn);
    y = g.linearLayer(y, block + ".attn.c_proj", hidden, hidden, residualInit,
                      biasInit);
    x = g.add(x, g.dropout(y, c.dropout));

    g.setScope(block + ".mlp");
    h = g.layerNorm(x, block + ".ln_2", c.normEps, c.bias);
    h = g.linearLayer(h, block + ".mlp.c_fc", hidden, c.ffn, weightInit,
                      biasInit);
    h = GeluOp::create(b, g.getLoc(), h, gelu);
    h = g.linearLayer(h, block + ".mlp.c_proj", c.ffn, hidden, residualInit,
                      biasInit);
    x = g.add(x, g.dropout(h, c.dropout));
  }

  g.setScope("lm_head");
  x = g.layerNorm(x, "transformer.ln_f", c.normEps, c.bias);
  // Weight tying: lm_head.weight is transformer.wte.weight; untied, it is a
  // parameter of its own (nanoGPT's _init_weights: normal(0.02)).
  Value head = c.tieEmbeddings
                   ? wte
                   : g.addParameter("lm_head.weight", {c.vocab, hidden},
                                    weightInit);
  Value logits = g.linear(x, head, /*bias=*/Value());
  Value loss = CrossEntropyOp::create(b, g.getLoc(), logits, labels,
                                      /*offset=*/Value());
  return g.finish(loss);
}

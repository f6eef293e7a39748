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
// The fused `c_attn` projection is nanoGPT's: its [3H, H] weight and [3H]
// bias hold the rows of q, then k, then v, each head after head. The graph
// holds them as row-major views [3, 1, H, H] and [3, 1, 1, H]
// (`loom.file_shape` keeps the file shapes), so q, k and v are a dim of
// their own and the heads lead the output features of each: a
// tensor-parallel plan splits dim 2 of the weight, i.e. the heads of q, k
// and v alike, as a plain block layout (docs/Models.md, "Fused QKV
// projection").
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/GraphBuilder.h"
#include "loom/Frontend/Models/Models.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::models;

/// nanoGPT's `q, k, v = c_attn(x).split(n_embd, dim=2)`, each viewed as
/// [B, heads, S, D], on the [3, 1, H, H] view of the weight. One batched
/// matmul applies the three [H, H] matrices to x [B, S, H]: the unit dim
/// lets the activations' batch dim broadcast against the weight's q/k/v dim
/// (matmul broadcasts numpy-style), so the product is [3, B, S, H] and the
/// batch and sequence dims of x pass through as they are (data and sequence
/// splits with them). The bias, viewed [3, 1, 1, H], adds to it. A split
/// of dim 0 then gives q, k and v.
static SmallVector<Value, 3> fusedQkv(GraphBuilder &g, Value x,
                                      const std::string &prefix,
                                      int64_t heads,
                                      InitializerAttr weightInit,
                                      InitializerAttr biasInit) {
  OpBuilder &b = g.getBuilder();
  Location loc = g.getLoc();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t batch = shape[0], seq = shape[1], hidden = shape[2];
  int64_t headSize = hidden / heads;
  Value weight = g.addParameter(prefix + ".weight", {3, 1, hidden, hidden},
                                weightInit,
                                /*fileShape=*/{3 * hidden, hidden});
  Value qkv = MatmulOp::create(b, loc, x, weight, /*transpose_lhs=*/false,
                               /*transpose_rhs=*/true);
  if (biasInit)
    qkv = g.add(qkv, g.addParameter(prefix + ".bias", {3, 1, 1, hidden},
                                    biasInit, /*fileShape=*/{3 * hidden}));
  auto parts = SplitOp::create(b, loc, qkv, /*axis=*/0,
                               ArrayRef<int64_t>{1, 1, 1});
  SmallVector<Value, 3> perHead;
  for (Value part : parts.getResults()) {
    Value view = ReshapeOp::create(
        b, loc, g.getFloatType({batch, seq, heads, headSize}), part);
    perHead.push_back(TransposeOp::create(b, loc, view,
                                          ArrayRef<int64_t>{0, 2, 1, 3}));
  }
  return perHead;
}

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
    SmallVector<Value, 3> qkv = fusedQkv(g, h, block + ".attn.c_attn",
                                         c.heads, weightInit, biasInit);
    Value attn = AttentionOp::create(
        b, g.getLoc(), qkv[0], qkv[1], qkv[2],
        /*mask=*/Value(), /*causal=*/true,
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

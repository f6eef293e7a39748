//===- EncoderDecoder.cpp - The MindSpore seed's Transformer --------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The `Net` of the MindSpore distributed-training tutorial (seed 000):
//
//   src = dropout(word(input_ids) + position(0..S-1))          EmbeddingLayer
//   tgt = dropout(word(decoder_input_ids) + position(0..T-1))  EmbeddingLayer
//   enc = encoder layers (pre-LN: x + attn(ln1(x)); x + ffn(ln2(x)))
//   dec = decoder layers (pre-LN: x + causal attn(ln1(x));
//                         x + cross attn(cross_ln(x), enc); x + ffn(ln2(x)))
//   loss = cross_entropy(head(dec), labels) over labels != 0
//
// mindspore.nn.transformer's blocks (MultiHeadAttention with separate query,
// key and value Dense layers, FeedForward with a GELU), with MindSpore's
// parameter names and layouts: `_Linear(transpose_b=True)` stores `[out,
// in]` (query/key/value), `_Linear(transpose_b=False)` `[in, out]` (the
// attention projection and both FeedForward layers). The seed's loss masks
// padding with NotEqual(labels, 0): here ignore_index = 0.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/GraphBuilder.h"
#include "loom/Frontend/Models/Models.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::models;

namespace {
/// The mindspore.nn.transformer blocks over a GraphBuilder.
class MindSporeBlocks {
public:
  MindSporeBlocks(GraphBuilder &g, const ModelConfig &c)
      : g(g), c(c), weightInit(g.normal(0.01)), biasInit(g.zeros()) {}

  /// `_LayerNorm`: `<prefix>.gamma` (ones), `<prefix>.beta` (zeros).
  Value layerNorm(Value x, const std::string &prefix) {
    Value gamma = g.addParameter(prefix + ".gamma", {c.hidden}, g.ones());
    Value beta = g.addParameter(prefix + ".beta", {c.hidden}, g.zeros());
    return g.layerNorm(x, gamma, beta, c.normEps);
  }

  /// `_Linear` with a bias; `[out, in]` with `transposeB`, else `[in, out]`.
  Value linear(Value x, const std::string &prefix, int64_t in, int64_t out,
               bool transposeB) {
    SmallVector<int64_t> shape = transposeB ? SmallVector<int64_t>{out, in}
                                            : SmallVector<int64_t>{in, out};
    Value weight = g.addParameter(prefix + ".weight", shape, weightInit);
    Value bias = g.addParameter(prefix + ".bias", {out}, biasInit);
    return g.linear(x, weight, bias, transposeB);
  }

  /// `MultiHeadAttention`: dense1/2/3 project query, key and value,
  /// `projection` maps the merged heads back.
  Value attention(Value query, Value memory, const std::string &prefix,
                  bool causal) {
    int64_t h = c.hidden;
    Value q = linear(query, prefix + ".dense1", h, h, /*transposeB=*/true);
    Value k = linear(memory, prefix + ".dense2", h, h, /*transposeB=*/true);
    Value v = linear(memory, prefix + ".dense3", h, h, /*transposeB=*/true);
    Value y = g.multiHeadAttention(q, k, v, c.heads, c.heads, causal);
    return linear(y, prefix + ".projection", h, h, /*transposeB=*/false);
  }

  /// `FeedForward`: `mapping` (hidden -> ffn), GELU, `projection`.
  Value feedForward(Value x, const std::string &prefix) {
    Value h = linear(x, prefix + ".mapping", c.hidden, c.ffn,
                     /*transposeB=*/false);
    h = GeluOp::create(g.getBuilder(), g.getLoc(), h,
                       c.geluTanh ? GeluApproximation::Tanh
                                  : GeluApproximation::None);
    return linear(h, prefix + ".projection", c.ffn, c.hidden,
                  /*transposeB=*/false);
  }

  /// `EmbeddingLayer`: word plus position embedding, then dropout. The
  /// positions are 0..len-1, every row of the position table in order, so
  /// the table is added whole.
  Value embedding(Value ids, const std::string &prefix, int64_t length) {
    g.setScope(prefix);
    Value word = g.addParameter(prefix + ".word_embedding.embedding_table",
                                {c.vocab, c.hidden}, weightInit);
    Value position =
        g.addParameter(prefix + ".position_embedding.embedding_table",
                       {length, c.hidden}, weightInit);
    Value x = EmbeddingOp::create(g.getBuilder(), g.getLoc(), word, ids,
                                  /*offset=*/Value());
    return g.dropout(g.add(x, position), c.dropout);
  }

  GraphBuilder &g;
  const ModelConfig &c;
  InitializerAttr weightInit, biasInit;
};
} // namespace

OwningOpRef<ModuleOp>
mlir::loom::models::buildEncoderDecoder(const ModelConfig &c,
                                        MLIRContext &context) {
  if (failed(checkConfig(c, ModelFamily::Transformer, context)))
    return nullptr;
  GraphBuilder g(context, c.elementType);
  MindSporeBlocks ms(g, c);

  Value sourceIds = g.addInput(InputRole::InputIds, {c.batch, c.seq});
  Value labels = g.addInput(InputRole::Labels, {c.batch, c.tgtSeq});
  Value targetIds = g.addInput(InputRole::DecoderInputIds, {c.batch, c.tgtSeq});

  Value source = ms.embedding(sourceIds, "src_embedding", c.seq);
  Value target = ms.embedding(targetIds, "tgt_embedding", c.tgtSeq);

  // The encoder attends every source position (no mask).
  Value x = source;
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string block = "base1.encoder.blocks." + std::to_string(i);
    g.setScope(block);
    Value h = ms.layerNorm(x, block + ".layernorm1");
    x = g.add(x, ms.attention(h, h, block + ".attention", /*causal=*/false));
    h = ms.layerNorm(x, block + ".layernorm2");
    x = g.add(x, ms.feedForward(h, block + ".output"));
  }
  Value memory = x;

  // Decoder self-attention is causal (the seed's AttentionMask); the cross
  // attention sees the whole encoder output.
  x = target;
  for (int64_t i = 0; i < c.decoderLayers; ++i) {
    std::string block = "base1.decoder.blocks." + std::to_string(i);
    g.setScope(block);
    Value h = ms.layerNorm(x, block + ".layernorm1");
    x = g.add(x, ms.attention(h, h, block + ".attention", /*causal=*/true));
    h = ms.layerNorm(x, block + ".cross_attention_layernorm");
    x = g.add(x, ms.attention(h, memory, block + ".cross_attention",
                              /*causal=*/false));
    h = ms.layerNorm(x, block + ".layernorm2");
    x = g.add(x, ms.feedForward(h, block + ".output"));
  }

  // `head`: nn.Dense(hidden, vocab, has_bias=False), weight [out, in].
  g.setScope("head");
  Value logits = g.linearLayer(x, "head", c.hidden, c.vocab, ms.weightInit,
                               /*biasInit=*/nullptr);
  Value loss = CrossEntropyOp::create(g.getBuilder(), g.getLoc(), logits,
                                      labels, /*offset=*/Value(),
                                      /*ignore_index=*/uint64_t(0));
  return g.finish(loss);
}

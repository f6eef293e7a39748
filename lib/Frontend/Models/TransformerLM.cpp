//===- TransformerLM.cpp - The PyTorch seed's TransformerEncoder LM -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The language model of PyTorch's DDP + pipeline tutorial (seed 002):
//
//   x = dropout(encoder(ids) * sqrt(H) + pe[:S])      Encoder,
//   PositionalEncoding for layer (nn.TransformerEncoderLayer, post-LN, ReLU):
//     x = norm1(x + dropout(self_attn(x, causal)))
//     x = norm2(x + dropout(linear2(dropout(relu(linear1(x))))))
//   loss = cross_entropy(decoder(x), labels)          Decoder, CrossEntropyLoss
//
// `pe` is the tutorial's registered buffer, a constant table (not a
// parameter): pe[p, 2i] = sin(p * w_i), pe[p, 2i + 1] = cos(p * w_i) with
// w_i = exp(2i * -ln(10000) / H), evaluated in float as PyTorch does.
// Batch-first [B, S, H] throughout, where the tutorial transposes to [S, B].
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/GraphBuilder.h"
#include "loom/Frontend/Models/Models.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::models;

/// The PositionalEncoding buffer's first `seq` rows, `[seq, hidden]`, in the
/// element type of `type`.
static DenseElementsAttr getSinusoidTable(RankedTensorType type) {
  int64_t seq = type.getDimSize(0), hidden = type.getDimSize(1);
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> values;
  values.reserve(seq * hidden);
  float step = -std::log(10000.0f) / static_cast<float>(hidden);
  for (int64_t p = 0; p < seq; ++p) {
    for (int64_t d = 0; d < hidden; ++d) {
      float frequency = std::exp(static_cast<float>(d - d % 2) * step);
      float angle = static_cast<float>(p) * frequency;
      APFloat value(d % 2 == 0 ? std::sin(angle) : std::cos(angle));
      bool losesInfo;
      value.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
      values.push_back(value);
    }
  }
  return DenseElementsAttr::get(type, values);
}

OwningOpRef<ModuleOp>
mlir::loom::models::buildTransformerLM(const ModelConfig &c,
                                       MLIRContext &context) {
  if (failed(checkConfig(c, ModelFamily::TransformerLM, context)))
    return nullptr;
  GraphBuilder g(context, c.elementType);
  OpBuilder &b = g.getBuilder();
  int64_t hidden = c.hidden, ffn = c.ffn;

  // PyTorch's defaults: the tutorial's uniform(-0.1, 0.1) for encoder and
  // decoder; MultiheadAttention's xavier_uniform_ in_proj_weight and zero
  // biases; nn.Linear's kaiming_uniform_(a = sqrt(5)), i.e.
  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias, for out_proj
  // (weight; its bias is zeroed), linear1 and linear2.
  double xavier = std::sqrt(6.0 / static_cast<double>(hidden + 3 * hidden));
  double fromHidden = 1.0 / std::sqrt(static_cast<double>(hidden));
  double fromFfn = 1.0 / std::sqrt(static_cast<double>(ffn));

  Value ids = g.addInput(InputRole::InputIds, {c.batch, c.seq});
  Value labels = g.addInput(InputRole::Labels, {c.batch, c.seq});

  g.setScope("encoder");
  Value table =
      g.addParameter("encoder.weight", {c.vocab, hidden}, g.uniform(-0.1, 0.1));
  Value x = EmbeddingOp::create(b, g.getLoc(), table, ids, Value());
  x = ScaleOp::create(
      b, g.getLoc(), x,
      b.getF64FloatAttr(std::sqrt(static_cast<double>(hidden))));
  g.setScope("pos_encoder");
  auto tableType = g.getFloatType({c.seq, hidden});
  Value pe = arith::ConstantOp::create(b, g.getLoc(), tableType,
                                       getSinusoidTable(tableType));
  x = g.dropout(g.add(x, pe), c.dropout);

  for (int64_t i = 0; i < c.layers; ++i) {
    std::string layer = "transformer_encoder.layers." + std::to_string(i);
    g.setScope(layer);
    std::string attn = layer + ".self_attn";
    Value inWeight =
        g.addParameter(attn + ".in_proj_weight", {3 * hidden, hidden},
                       g.uniform(-xavier, xavier));
    Value inBias =
        g.addParameter(attn + ".in_proj_bias", {3 * hidden}, g.zeros());
    Value qkv = g.linear(x, inWeight, inBias);
    auto split = SplitOp::create(b, g.getLoc(), qkv, /*axis=*/2,
                                 ArrayRef<int64_t>{hidden, hidden, hidden});
    Value y = g.multiHeadAttention(split.getResult(0), split.getResult(1),
                                   split.getResult(2), c.heads, c.heads,
                                   /*causal=*/true);
    y = g.linearLayer(y, attn + ".out_proj", hidden, hidden,
                      g.uniform(-fromHidden, fromHidden), g.zeros());
    x = g.layerNorm(g.add(x, g.dropout(y, c.dropout)), layer + ".norm1",
                    c.normEps);

    Value h = g.linearLayer(x, layer + ".linear1", hidden, ffn,
                            g.uniform(-fromHidden, fromHidden),
                            g.uniform(-fromHidden, fromHidden));
    h = g.dropout(ReluOp::create(b, g.getLoc(), h), c.dropout);
    h = g.linearLayer(h, layer + ".linear2", ffn, hidden,
                      g.uniform(-fromFfn, fromFfn),
                      g.uniform(-fromFfn, fromFfn));
    x = g.layerNorm(g.add(x, g.dropout(h, c.dropout)), layer + ".norm2",
                    c.normEps);
  }

  g.setScope("decoder");
  Value logits = g.linearLayer(x, "decoder", hidden, c.vocab,
                               g.uniform(-0.1, 0.1), g.zeros());
  Value loss = CrossEntropyOp::create(b, g.getLoc(), logits, labels,
                                      /*offset=*/Value());
  return g.finish(loss);
}

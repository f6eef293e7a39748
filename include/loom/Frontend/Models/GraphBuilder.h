//===- GraphBuilder.h - Common blocks of the model builders -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The building blocks the model families share: a `func.func @forward` whose
// parameters and data inputs are added as arguments while the body is built,
// and the layers every Transformer is made of (Linear with PyTorch's [out, in]
// weight, LayerNorm, RMSNorm, heads split and merged around `loom.attention`,
// dropout with a distinct seed per site). Each family file then reads like
// its reference model's forward().
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_FRONTEND_MODELS_GRAPHBUILDER_H
#define LOOM_FRONTEND_MODELS_GRAPHBUILDER_H

#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Frontend/Models/ModelConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
namespace loom {
namespace models {

/// Builds one `func.func @forward(params..., inputs...) -> tensor<f32>` in a
/// fresh module. Parameters always precede the data inputs, whatever order
/// they are created in, so a family can create `input_ids` first and its
/// parameters layer by layer.
class GraphBuilder {
public:
  /// Starts the module and `@forward`; floating-point values get
  /// `elementType`. Loads the dialects the graph uses into `context`.
  GraphBuilder(MLIRContext &context, ElementType elementType);

  OpBuilder &getBuilder() { return builder; }
  MLIRContext *getContext() { return builder.getContext(); }

  /// The location of the ops built next: a name such as
  /// `transformer.h.3.attn`, the module path of the reference model, so
  /// `-mlir-print-debuginfo` shows where each op came from.
  void setScope(const llvm::Twine &scope);
  Location getLoc() const { return loc; }

  /// A floating-point tensor type of the model's element type.
  RankedTensorType getFloatType(ArrayRef<int64_t> shape);
  /// An i64 tensor type (ids, labels, positions).
  RankedTensorType getIdType(ArrayRef<int64_t> shape);

  /// Initializers of `#loom.param`.
  InitializerAttr normal(double std);
  InitializerAttr scaledNormal(double std, double factor);
  InitializerAttr uniform(double low, double high);
  InitializerAttr zeros();
  InitializerAttr ones();

  /// Adds a trainable parameter argument `name` of `shape`. Weight decay
  /// applies to tensors of rank >= 2 (matrices, embedding tables), never to
  /// biases and norm weights: the grouping nanoGPT, Hugging Face's Trainer
  /// and the MindSpore seed all make (see docs/Models.md).
  ///
  /// A non-empty `fileShape` is the shape the ecosystem's files give the
  /// tensor when the graph holds it as a row-major view of another shape
  /// (`loom.file_shape`); weight decay then follows the file's rank.
  Value addParameter(const llvm::Twine &name, ArrayRef<int64_t> shape,
                     InitializerAttr init, ArrayRef<int64_t> fileShape = {});

  /// Adds an i64 data input of `role` after every parameter.
  Value addInput(InputRole role, ArrayRef<int64_t> shape);

  /// `x @ weight^T + bias` for a PyTorch weight `[out, in]`, or `x @ weight
  /// + bias` for a weight stored `[in, out]` (`weightIsOutIn` false).
  /// `bias` may be null.
  Value linear(Value x, Value weight, Value bias, bool weightIsOutIn = true);

  /// Creates `<prefix>.weight` `[out, in]` (and `<prefix>.bias` `[out]`
  /// when `biasInit` is not null) and applies them to `x`.
  Value linearLayer(Value x, const llvm::Twine &prefix, int64_t in, int64_t out,
                    InitializerAttr weightInit, InitializerAttr biasInit);

  /// PyTorch LayerNorm with `<prefix>.weight` (ones) and `<prefix>.bias`
  /// (zeros) over the last dim. Without `bias`, only `<prefix>.weight`
  /// (nanoGPT's `LayerNorm(ndim, bias=False)`): the LayerNorm without
  /// affine, times the weight.
  Value layerNorm(Value x, const llvm::Twine &prefix, double eps,
                  bool bias = true);
  /// LayerNorm with given gamma and beta.
  Value layerNorm(Value x, Value gamma, Value beta, double eps);
  /// RMSNorm with `<prefix>.weight` (ones) over the last dim.
  Value rmsNorm(Value x, const llvm::Twine &prefix, double eps);

  /// `[B, S, heads * D]` -> `[B, heads, S, D]` (reshape, transpose), the
  /// layout `loom.attention` takes.
  Value splitHeads(Value x, int64_t heads);
  /// `[B, heads, S, D]` -> `[B, S, heads * D]`.
  Value mergeHeads(Value x);

  /// Scaled-dot-product attention over `[B, S, width]` projections: splits
  /// `query` into `heads` and `key`/`value` into `kvHeads`, attends (with
  /// `causal`), and merges the heads again. With `rope`, rotates query and
  /// key first (`theta`).
  Value multiHeadAttention(Value query, Value key, Value value, int64_t heads,
                           int64_t kvHeads, bool causal,
                           std::optional<double> ropeTheta = std::nullopt);

  /// `loom.dropout` with `rate` and a seed unique to this call site in the
  /// graph; `x` itself when `rate` is 0.
  Value dropout(Value x, double rate);

  /// Elementwise sum with broadcasting.
  Value add(Value lhs, Value rhs);

  /// Returns `loss` from `@forward`, sets the function's type and argument
  /// attributes, verifies the module and hands it over. Returns null (after
  /// the verifier's diagnostics) if the module does not verify, which would
  /// be a bug in a family's builder.
  OwningOpRef<ModuleOp> finish(Value loss);

private:
  OpBuilder builder;
  Location loc;
  Type elementType;
  OwningOpRef<ModuleOp> module;
  func::FuncOp function;
  Block *body;
  /// The argument attributes, in argument order.
  SmallVector<DictionaryAttr> argAttrs;
  unsigned numParameters = 0;
  int64_t nextDropoutSeed = 0;
};

} // namespace models
} // namespace loom
} // namespace mlir

#endif // LOOM_FRONTEND_MODELS_GRAPHBUILDER_H

//===- GraphBuilder.cpp - Common blocks of the model builders -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Arguments are inserted into the entry block as the body is built:
// parameters at the end of the parameter range, inputs at the very end. The
// function type and the argument attributes are written once, in finish(),
// so no intermediate state has to be kept consistent.
//
//===----------------------------------------------------------------------===//

#include "loom/Frontend/Models/GraphBuilder.h"
#include "loom/Dialect/AttributeNames.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Verifier.h"

using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kParamAttrName;

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::models;

static Type getElementType(MLIRContext &context, ElementType type) {
  switch (type) {
  case ElementType::F32:
    return Float32Type::get(&context);
  case ElementType::BF16:
    return BFloat16Type::get(&context);
  case ElementType::F16:
    return Float16Type::get(&context);
  case ElementType::F64:
    return Float64Type::get(&context);
  }
  llvm_unreachable("unknown element type");
}

GraphBuilder::GraphBuilder(MLIRContext &context, ElementType type)
    : builder(&context), loc(UnknownLoc::get(&context)) {
  context.getOrLoadDialect<LoomDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  context.getOrLoadDialect<arith::ArithDialect>();
  elementType = getElementType(context, type);
  module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  function = func::FuncOp::create(builder, loc, "forward",
                                  builder.getFunctionType({}, {}));
  body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);
}

void GraphBuilder::setScope(const llvm::Twine &scope) {
  loc = NameLoc::get(builder.getStringAttr(scope));
}

RankedTensorType GraphBuilder::getFloatType(ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, elementType);
}

RankedTensorType GraphBuilder::getIdType(ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, builder.getI64Type());
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

InitializerAttr GraphBuilder::normal(double std) {
  return InitializerAttr::get(getContext(), InitKind::Normal,
                              builder.getDenseF64ArrayAttr({std}));
}

InitializerAttr GraphBuilder::scaledNormal(double std, double factor) {
  return InitializerAttr::get(getContext(), InitKind::ScaledNormal,
                              builder.getDenseF64ArrayAttr({std, factor}));
}

InitializerAttr GraphBuilder::uniform(double low, double high) {
  return InitializerAttr::get(getContext(), InitKind::Uniform,
                              builder.getDenseF64ArrayAttr({low, high}));
}

InitializerAttr GraphBuilder::zeros() {
  return InitializerAttr::get(getContext(), InitKind::Zeros,
                              builder.getDenseF64ArrayAttr({}));
}

InitializerAttr GraphBuilder::ones() {
  return InitializerAttr::get(getContext(), InitKind::Ones,
                              builder.getDenseF64ArrayAttr({}));
}

Value GraphBuilder::addParameter(const llvm::Twine &name,
                                 ArrayRef<int64_t> shape,
                                 InitializerAttr init,
                                 ArrayRef<int64_t> fileShape) {
  ArrayRef<int64_t> ecosystemShape = fileShape.empty() ? shape : fileShape;
  auto attr = ParamAttr::get(getContext(), name.str(), init,
                             /*decay=*/ecosystemShape.size() >= 2);
  unsigned index = numParameters++;
  SmallVector<NamedAttribute, 2> attrs{
      builder.getNamedAttr(kParamAttrName, attr)};
  if (!fileShape.empty())
    attrs.push_back(builder.getNamedAttr(
        kFileShapeAttrName, builder.getDenseI64ArrayAttr(fileShape)));
  argAttrs.insert(argAttrs.begin() + index, builder.getDictionaryAttr(attrs));
  return body->insertArgument(
      index, getFloatType(shape),
      NameLoc::get(builder.getStringAttr(attr.getName())));
}

Value GraphBuilder::addInput(InputRole role, ArrayRef<int64_t> shape) {
  auto attr = InputRoleAttr::get(getContext(), role);
  argAttrs.push_back(
      builder.getDictionaryAttr(builder.getNamedAttr(kInputAttrName, attr)));
  return body->addArgument(getIdType(shape), NameLoc::get(builder.getStringAttr(
                                                 stringifyInputRole(role))));
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

Value GraphBuilder::linear(Value x, Value weight, Value bias,
                           bool weightIsOutIn) {
  Value y = MatmulOp::create(builder, loc, x, weight, /*transpose_lhs=*/false,
                             /*transpose_rhs=*/weightIsOutIn);
  return bias ? add(y, bias) : y;
}

Value GraphBuilder::linearLayer(Value x, const llvm::Twine &prefix, int64_t in,
                                int64_t out, InitializerAttr weightInit,
                                InitializerAttr biasInit) {
  Value weight = addParameter(prefix + ".weight", {out, in}, weightInit);
  Value bias =
      biasInit ? addParameter(prefix + ".bias", {out}, biasInit) : Value();
  return linear(x, weight, bias);
}

Value GraphBuilder::layerNorm(Value x, Value gamma, Value beta, double eps) {
  return LayerNormOp::create(builder, loc, x, gamma, beta, llvm::APFloat(eps));
}

Value GraphBuilder::layerNorm(Value x, const llvm::Twine &prefix, double eps,
                              bool bias) {
  int64_t width = cast<RankedTensorType>(x.getType()).getShape().back();
  Value gamma = addParameter(prefix + ".weight", {width}, ones());
  if (!bias) {
    // loom.layer_norm takes gamma and beta together or neither:
    // F.layer_norm(x, weight, None) is the plain LayerNorm times weight.
    Value normalized = layerNorm(x, Value(), Value(), eps);
    return MulOp::create(builder, loc, normalized, gamma);
  }
  Value beta = addParameter(prefix + ".bias", {width}, zeros());
  return layerNorm(x, gamma, beta, eps);
}

Value GraphBuilder::rmsNorm(Value x, const llvm::Twine &prefix, double eps) {
  int64_t width = cast<RankedTensorType>(x.getType()).getShape().back();
  Value gamma = addParameter(prefix + ".weight", {width}, ones());
  return RmsNormOp::create(builder, loc, x, gamma, llvm::APFloat(eps));
}

Value GraphBuilder::splitHeads(Value x, int64_t heads) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t batch = shape[0], seq = shape[1], headSize = shape[2] / heads;
  Value split = ReshapeOp::create(
      builder, loc, getFloatType({batch, seq, heads, headSize}), x);
  return TransposeOp::create(builder, loc, split,
                             ArrayRef<int64_t>{0, 2, 1, 3});
}

Value GraphBuilder::mergeHeads(Value x) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  int64_t batch = shape[0], heads = shape[1], seq = shape[2];
  Value merged =
      TransposeOp::create(builder, loc, x, ArrayRef<int64_t>{0, 2, 1, 3});
  return ReshapeOp::create(
      builder, loc, getFloatType({batch, seq, heads * shape[3]}), merged);
}

Value GraphBuilder::multiHeadAttention(Value query, Value key, Value value,
                                       int64_t heads, int64_t kvHeads,
                                       bool causal,
                                       std::optional<double> ropeTheta) {
  Value q = splitHeads(query, heads);
  Value k = splitHeads(key, kvHeads);
  Value v = splitHeads(value, kvHeads);
  if (ropeTheta) {
    llvm::APFloat theta(*ropeTheta);
    q = RopeOp::create(builder, loc, q, /*positions=*/Value(), theta,
                       /*inverse=*/false);
    k = RopeOp::create(builder, loc, k, /*positions=*/Value(), theta,
                       /*inverse=*/false);
  }
  Value out = AttentionOp::create(builder, loc, q, k, v, /*mask=*/Value(),
                                  causal, /*scale=*/FloatAttr());
  return mergeHeads(out);
}

Value GraphBuilder::dropout(Value x, double rate) {
  if (rate == 0.0)
    return x;
  // Distinct seeds keep the masks of different sites independent; the
  // kernels key the mask by seed and global element index.
  return DropoutOp::create(builder, loc, x, builder.getF64FloatAttr(rate),
                           builder.getI64IntegerAttr(nextDropoutSeed++));
}

Value GraphBuilder::add(Value lhs, Value rhs) {
  return AddOp::create(builder, loc, lhs, rhs);
}

OwningOpRef<ModuleOp> GraphBuilder::finish(Value loss) {
  func::ReturnOp::create(builder, loc, loss);
  function.setType(
      builder.getFunctionType(body->getArgumentTypes(), {loss.getType()}));
  function.setAllArgAttrs(argAttrs);
  if (failed(verify(*module)))
    return nullptr;
  return std::move(module);
}

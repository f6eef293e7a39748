//===- LoomKernelCalls.cpp - The loom ops' kernel calls -------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// How every `loom` op becomes a call of the runtimes' kernels (host::,
// cuda::; their headers under include/loom/Runtime/Host and
// include/loom/Runtime/CUDA have the same kernels with the same parameters).
// One entry per op, grouped by family in the order of LoomOps.td's files;
// each lists the results the call writes, then the kernel's arguments in
// order. The interpreter runs the same kernels (lib/Interpreter), so an
// emitted step computes what the interpreter computes.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Target/Common/EmitterSupport.h"
#include "loom/Target/Common/KernelCallTable.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::loom::emit {
namespace {

using Result = FailureOr<KernelCall>;

/// Attention's optional `scale`, as the kernels take it.
std::string optionalScale(std::optional<llvm::APFloat> scale) {
  if (!scale)
    return "std::nullopt";
  return "std::optional<double>(" + doubleLiteral(scale->convertToDouble()) +
         ")";
}

/// The runtimes' CastTarget of an element type, empty when there is none.
StringRef castTarget(Type type) {
  if (type.isF64())
    return "F64";
  if (type.isF32())
    return "F32";
  if (type.isBF16())
    return "BF16";
  if (type.isF16())
    return "F16";
  if (type.isInteger(64) || type.isIndex())
    return "I64";
  if (type.isInteger(32))
    return "I32";
  return "";
}

StringRef geluApproximation(GeluApproximation approximate) {
  return approximate == GeluApproximation::Tanh ? "Tanh" : "None";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// lhs (op) rhs with broadcasting; only an integer division can fail on
/// data.
template <typename OpTy> Result binary(OpTy op, StringRef kind) {
  Value out = op.getResult();
  KernelCall call{"binary"};
  call.storageOf(out).allocates(out);
  call.enumerator("BinaryKind", kind)
      .buffer(op.getLhs())
      .shape(op.getLhs())
      .buffer(op.getRhs())
      .shape(op.getRhs())
      .buffer(out)
      .shape(out);
  call.checksData = kind == "Div" && isIntegerStorage(out.getType());
  return call;
}

template <typename OpTy> Result unary(OpTy op, StringRef kind) {
  KernelCall call{"unary"};
  call.runType().allocates(op.getResult());
  call.enumerator("UnaryKind", kind)
      .buffer(op.getInput())
      .count(op.getInput())
      .buffer(op.getResult());
  return call;
}

Result scale(ScaleOp op, KernelCallContext &) {
  KernelCall call{"scale"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getInput())
      .count(op.getInput())
      .real(op.getFactorAttr().getValueAsDouble())
      .buffer(op.getResult());
  return call;
}

Result castOp(CastOp op, KernelCallContext &context) {
  Type target = cast<ShapedType>(op.getResult().getType()).getElementType();
  StringRef t = castTarget(target);
  if (t.empty())
    return op.emitError() << "no " << context.targetName()
                          << " emission for a cast to " << target;
  KernelCall call{"cast"};
  call.storageOf(op.getInput()).storageOf(op.getResult());
  call.allocates(op.getResult());
  call.buffer(op.getInput()).count(op.getInput());
  // As the interpreter: casts to f64, and to f32 in an f64 run, keep the
  // run's precision; bf16 and f16 casts round.
  if (t == "F64" || t == "F32")
    call.runPrecisionCastTarget();
  else
    call.enumerator("CastTarget", t);
  call.buffer(op.getResult());
  return call;
}

//===----------------------------------------------------------------------===//
// Matmul and reductions
//===----------------------------------------------------------------------===//

Result matmul(MatmulOp op, KernelCallContext &) {
  KernelCall call{"matmul"};
  call.executor = Executor::Blas;
  call.runType().allocates(op.getResult());
  call.buffer(op.getLhs())
      .shape(op.getLhs())
      .buffer(op.getRhs())
      .shape(op.getRhs())
      .boolean(op.getTransposeLhs())
      .boolean(op.getTransposeRhs())
      .buffer(op.getResult());
  return call;
}

template <typename OpTy> Result reduce(OpTy op, StringRef kind) {
  KernelCall call{"reduce"};
  call.storageOf(op.getInput()).allocates(op.getResult());
  call.enumerator("ReduceKind", kind)
      .buffer(op.getInput())
      .shape(op.getInput())
      .ints(op.getAxes())
      .buffer(op.getResult());
  return call;
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

Result reshape(ReshapeOp op, KernelCallContext &) {
  // Row-major order is kept: the same elements under another shape.
  KernelCall call;
  call.allocates(op.getResult());
  call.aliasOf = op.getInput();
  return call;
}

Result transpose(TransposeOp op, KernelCallContext &) {
  KernelCall call{"transpose"};
  call.storageOf(op.getInput()).allocates(op.getResult());
  call.buffer(op.getInput())
      .shape(op.getInput())
      .ints(op.getPermutation())
      .buffer(op.getResult());
  return call;
}

Result slice(SliceOp op, KernelCallContext &) {
  KernelCall call{"slice"};
  call.storageOf(op.getInput()).allocates(op.getResult());
  call.buffer(op.getInput())
      .shape(op.getInput())
      .ints(op.getStarts())
      .ints(op.getLimits())
      .ints(op.getStrides())
      .buffer(op.getResult());
  return call;
}

Result pad(PadOp op, KernelCallContext &) {
  KernelCall call{"pad"};
  call.storageOf(op.getInput()).allocates(op.getResult());
  call.buffer(op.getInput())
      .shape(op.getInput())
      .ints(op.getLow())
      .ints(op.getHigh())
      .ints(op.getInterior())
      .buffer(op.getResult());
  return call;
}

Result concat(ConcatOp op, KernelCallContext &) {
  KernelCall call{"concat"};
  call.storageOf(op.getResult()).allocates(op.getResult());
  call.inputList(op.getInputs(), op.getResult())
      .shapeList(op.getInputs())
      .integer(op.getAxis())
      .buffer(op.getResult());
  return call;
}

Result split(SplitOp op, KernelCallContext &) {
  KernelCall call{"split"};
  call.storageOf(op.getInput());
  for (Value output : op.getOutputs())
    call.allocates(output);
  call.buffer(op.getInput())
      .shape(op.getInput())
      .integer(op.getAxis())
      .ints(op.getSizes())
      .outputList(op.getOutputs());
  return call;
}

//===----------------------------------------------------------------------===//
// Activations and softmax: forward (x -> y) and backward (dy, x -> dx)
//===----------------------------------------------------------------------===//

KernelCall forward(StringRef kernel, Value in, Value out) {
  KernelCall call{kernel.str()};
  call.runType().allocates(out);
  call.buffer(in).shape(in);
  return call;
}

KernelCall backward(StringRef kernel, Value dy, Value x, Value dx) {
  KernelCall call{kernel.str()};
  call.runType().allocates(dx);
  call.buffer(dy).buffer(x).shape(x);
  return call;
}

Result relu(ReluOp op, KernelCallContext &) {
  return std::move(
      forward("relu", op.getInput(), op.getResult()).buffer(op.getResult()));
}
Result silu(SiluOp op, KernelCallContext &) {
  return std::move(
      forward("silu", op.getInput(), op.getResult()).buffer(op.getResult()));
}
Result gelu(GeluOp op, KernelCallContext &) {
  return std::move(forward("gelu", op.getInput(), op.getResult())
                       .enumerator("GeluApproximation",
                                   geluApproximation(op.getApproximate()))
                       .buffer(op.getResult()));
}
Result reluGrad(ReluGradOp op, KernelCallContext &) {
  return std::move(backward("reluGrad", op.getDy(), op.getX(), op.getDx())
                       .buffer(op.getDx()));
}
Result siluGrad(SiluGradOp op, KernelCallContext &) {
  return std::move(backward("siluGrad", op.getDy(), op.getX(), op.getDx())
                       .buffer(op.getDx()));
}
Result geluGrad(GeluGradOp op, KernelCallContext &) {
  return std::move(backward("geluGrad", op.getDy(), op.getX(), op.getDx())
                       .enumerator("GeluApproximation",
                                   geluApproximation(op.getApproximate()))
                       .buffer(op.getDx()));
}
Result softmax(SoftmaxOp op, KernelCallContext &) {
  return std::move(forward("softmax", op.getInput(), op.getResult())
                       .integer(op.getAxisAttr().getInt())
                       .buffer(op.getResult()));
}
Result logSoftmax(LogSoftmaxOp op, KernelCallContext &) {
  return std::move(forward("logSoftmax", op.getInput(), op.getResult())
                       .integer(op.getAxisAttr().getInt())
                       .buffer(op.getResult()));
}

/// softmax and log_softmax backward: (y, dy) -> dx.
template <typename OpTy> Result softmaxBackward(OpTy op, StringRef kernel) {
  KernelCall call{kernel.str()};
  call.runType().allocates(op.getResult());
  call.buffer(op.getOutput())
      .buffer(op.getGrad())
      .shape(op.getOutput())
      .integer(op.getAxisAttr().getInt())
      .buffer(op.getResult());
  return call;
}

//===----------------------------------------------------------------------===//
// Attention and positions
//===----------------------------------------------------------------------===//

Result attention(AttentionOp op, KernelCallContext &) {
  KernelCall call{"attention"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getQuery())
      .shape(op.getQuery())
      .buffer(op.getKey())
      .shape(op.getKey())
      .buffer(op.getValue())
      .shape(op.getValue())
      .buffer(op.getMask())
      .shape(op.getMask())
      .boolean(op.getCausal())
      .text(optionalScale(op.getScale()))
      .buffer(op.getResult());
  return call;
}

Result attentionGrad(AttentionGradOp op, KernelCallContext &) {
  KernelCall call{"attentionGrad"};
  call.runType()
      .allocates(op.getDquery())
      .allocates(op.getDkey())
      .allocates(op.getDvalue());
  call.buffer(op.getQuery())
      .shape(op.getQuery())
      .buffer(op.getKey())
      .shape(op.getKey())
      .buffer(op.getValue())
      .shape(op.getValue())
      .buffer(op.getOut())
      .buffer(op.getDout())
      .buffer(op.getMask())
      .shape(op.getMask())
      .boolean(op.getCausal())
      .text(optionalScale(op.getScale()))
      .buffer(op.getDquery())
      .buffer(op.getDkey())
      .buffer(op.getDvalue());
  return call;
}

Result rope(RopeOp op, KernelCallContext &) {
  KernelCall call{"rope"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getInput())
      .shape(op.getInput())
      .buffer(op.getPositions())
      .shape(op.getPositions())
      .real(op.getThetaAttr().getValueAsDouble())
      .boolean(op.getInverse())
      .buffer(op.getResult());
  return call;
}

//===----------------------------------------------------------------------===//
// Embedding and loss
//===----------------------------------------------------------------------===//

/// A vocabulary-parallel embedding's rank holds rows [offset, offset +
/// rows): the `Block` kernels take that first row.
Result embedding(EmbeddingOp op, KernelCallContext &context) {
  KernelCall call{"embedding"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getTable())
      .shape(op.getTable())
      .buffer(op.getIds())
      .shape(op.getIds());
  if (Value offset = op.getOffset()) {
    FailureOr<std::string> first = context.scalar(op, offset);
    if (failed(first))
      return failure();
    call.kernel = "embeddingBlock";
    call.text(*first);
  }
  call.buffer(op.getResult());
  call.checksData = true;
  return call;
}

Result embeddingGrad(EmbeddingGradOp op, KernelCallContext &context) {
  KernelCall call{"embeddingGrad"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getDy())
      .shape(op.getDy())
      .buffer(op.getIds())
      .shape(op.getIds());
  if (Value offset = op.getOffset()) {
    FailureOr<std::string> first = context.scalar(op, offset);
    if (failed(first))
      return failure();
    call.kernel = "embeddingGradBlock";
    call.text(*first);
  }
  call.integer(cast<ShapedType>(op.getResult().getType()).getShape()[0])
      .buffer(op.getResult());
  call.checksData = true;
  return call;
}

/// A vocabulary-parallel cross-entropy's first class, as a pointer to its
/// index scalar (`nullptr` when the logits are whole).
FailureOr<std::string> classOffset(Operation *op, Value offset,
                                   KernelCallContext &context) {
  if (!offset)
    return std::string("nullptr");
  FailureOr<std::string> first = context.scalar(op, offset);
  if (failed(first))
    return failure();
  return "&" + *first;
}

Result crossEntropy(CrossEntropyOp op, KernelCallContext &context) {
  FailureOr<std::string> offset = classOffset(op, op.getOffset(), context);
  if (failed(offset))
    return failure();
  KernelCall call{"crossEntropyLocal"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getLogits())
      .shape(op.getLogits())
      .buffer(op.getLabels())
      .integer(op.getIgnoreIndexAttr().getInt())
      .text(*offset)
      .boolean(op.getSum())
      .buffer(op.getResult());
  call.checksData = true;
  return call;
}

Result crossEntropyGrad(CrossEntropyGradOp op, KernelCallContext &context) {
  FailureOr<std::string> offset = classOffset(op, op.getOffset(), context);
  if (failed(offset))
    return failure();
  KernelCall call{"crossEntropyGradLocal"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getLogits())
      .shape(op.getLogits())
      .buffer(op.getLabels())
      .scalar(op.getDloss())
      .integer(op.getIgnoreIndexAttr().getInt())
      .text(*offset)
      .boolean(op.getSum())
      .buffer(op.getResult());
  call.checksData = true;
  return call;
}

Result labelCount(LabelCountOp op, KernelCallContext &) {
  KernelCall call{"labelCount"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getLabels())
      .count(op.getLabels())
      .integer(op.getIgnoreIndexAttr().getInt())
      .buffer(op.getResult());
  return call;
}

//===----------------------------------------------------------------------===//
// Loss scaling (docs/MixedPrecision.md)
//===----------------------------------------------------------------------===//

Result nonfiniteCount(NonfiniteCountOp op, KernelCallContext &) {
  KernelCall call{"nonfiniteCount"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getInput()).count(op.getInput()).buffer(op.getResult());
  return call;
}

Result select(SelectOp op, KernelCallContext &) {
  KernelCall call{"selectWhole"};
  call.runType().storageOf(op.getResult()).allocates(op.getResult());
  call.scalar(op.getCondition())
      .buffer(op.getOnTrue())
      .buffer(op.getOnFalse())
      .count(op.getResult())
      .buffer(op.getResult());
  return call;
}

Result updateLossScale(UpdateLossScaleOp op, KernelCallContext &) {
  KernelCall call{"updateLossScale"};
  call.runType()
      .allocates(op.getNewScale())
      .allocates(op.getNewGrowthTracker());
  call.scalar(op.getScale())
      .scalar(op.getGrowthTracker())
      .scalar(op.getNonfinite())
      .real(op.getGrowthFactor().convertToDouble())
      .real(op.getBackoffFactor().convertToDouble())
      .integer(op.getGrowthInterval())
      .buffer(op.getNewScale())
      .buffer(op.getNewGrowthTracker());
  return call;
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

Result layerNorm(LayerNormOp op, KernelCallContext &) {
  KernelCall call{"layerNorm"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getInput())
      .shape(op.getInput())
      .buffer(op.getGamma())
      .buffer(op.getBeta())
      .real(op.getEpsAttr().getValueAsDouble())
      .buffer(op.getResult());
  return call;
}

Result rmsNorm(RmsNormOp op, KernelCallContext &) {
  KernelCall call{"rmsNorm"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getInput())
      .shape(op.getInput())
      .buffer(op.getGamma())
      .real(op.getEpsAttr().getValueAsDouble())
      .buffer(op.getResult());
  return call;
}

Result layerNormGrad(LayerNormGradOp op, KernelCallContext &) {
  KernelCall call{"layerNormGrad"};
  call.runType().allocates(op.getDx());
  // The affine parameters' gradients exist when the norm has them.
  Value dgamma, dbeta;
  if (op.getGamma()) {
    dgamma = op.getParamGrads()[0];
    dbeta = op.getParamGrads()[1];
    call.allocates(dgamma).allocates(dbeta);
  }
  call.buffer(op.getGrad())
      .buffer(op.getInput())
      .shape(op.getInput())
      .buffer(op.getGamma())
      .real(op.getEpsAttr().getValueAsDouble())
      .buffer(op.getDx())
      .buffer(dgamma)
      .buffer(dbeta);
  return call;
}

Result rmsNormGrad(RmsNormGradOp op, KernelCallContext &) {
  KernelCall call{"rmsNormGrad"};
  call.runType().allocates(op.getDx());
  if (Value dgamma = op.getDgamma())
    call.allocates(dgamma);
  call.buffer(op.getGrad())
      .buffer(op.getInput())
      .shape(op.getInput())
      .buffer(op.getGamma())
      .real(op.getEpsAttr().getValueAsDouble())
      .buffer(op.getDx())
      .buffer(op.getDgamma());
  return call;
}

//===----------------------------------------------------------------------===//
// Optimizer updates: each new state may take its old state's buffer
//===----------------------------------------------------------------------===//

Result sgdUpdate(SgdUpdateOp op, KernelCallContext &) {
  KernelCall call{"sgdUpdate"};
  call.runType().allocates(op.getNewParam(), op.getParam());
  if (Value momentum = op.getNewMomentumBuf())
    call.allocates(momentum, op.getMomentumBuf());
  call.buffer(op.getParam())
      .buffer(op.getGrad())
      .buffer(op.getMomentumBuf())
      .shape(op.getParam())
      .learningRate(op.getLrAttr().getValueAsDouble(), op.getLrScale())
      .real(op.getMomentumAttr().getValueAsDouble())
      .real(op.getWeightDecayAttr().getValueAsDouble())
      .real(op.getDampeningAttr().getValueAsDouble())
      .boolean(op.getNesterov())
      .buffer(op.getNewParam())
      .buffer(op.getNewMomentumBuf());
  return call;
}

Result adamwUpdate(AdamwUpdateOp op, KernelCallContext &) {
  KernelCall call{"adamwUpdate"};
  call.runType().scalarStorageOf(op.getStep());
  call.allocates(op.getNewParam(), op.getParam())
      .allocates(op.getNewExpAvg(), op.getExpAvg())
      .allocates(op.getNewExpAvgSq(), op.getExpAvgSq());
  call.buffer(op.getParam())
      .buffer(op.getGrad())
      .buffer(op.getExpAvg())
      .buffer(op.getExpAvgSq())
      .shape(op.getParam())
      .scalar(op.getStep())
      .learningRate(op.getLrAttr().getValueAsDouble(), op.getLrScale())
      .real(op.getBeta1Attr().getValueAsDouble())
      .real(op.getBeta2Attr().getValueAsDouble())
      .real(op.getEpsAttr().getValueAsDouble())
      .real(op.getWeightDecayAttr().getValueAsDouble())
      .buffer(op.getNewParam())
      .buffer(op.getNewExpAvg())
      .buffer(op.getNewExpAvgSq());
  return call;
}

//===----------------------------------------------------------------------===//
// Random
//===----------------------------------------------------------------------===//

/// The mask is keyed by the element's global index (Support/Philox.h), so
/// every partitioning draws the single-device mask: the kernel takes the
/// global shape and the rank's block offset, computed at run time.
Result dropout(DropoutOp op, KernelCallContext &context) {
  std::vector<int64_t> global;
  FailureOr<std::string> offset = context.globalBlock(op, global);
  if (failed(offset))
    return failure();
  KernelCall call{"dropout"};
  call.runType().allocates(op.getResult());
  call.buffer(op.getInput())
      .ints(global)
      .text(*offset)
      .shape(op.getInput())
      .real(op.getRateAttr().getValueAsDouble())
      .integer(op.getSeedAttr().getInt())
      .text("context.seed")
      .text("context.step")
      .buffer(op.getResult());
  return call;
}

} // namespace

void addLoomKernelCalls(KernelCallTable &table) {
  // Elementwise.
  table.add<AddOp>(
      [](AddOp op, KernelCallContext &) { return binary(op, "Add"); });
  table.add<SubOp>(
      [](SubOp op, KernelCallContext &) { return binary(op, "Sub"); });
  table.add<MulOp>(
      [](MulOp op, KernelCallContext &) { return binary(op, "Mul"); });
  table.add<DivOp>(
      [](DivOp op, KernelCallContext &) { return binary(op, "Div"); });
  table.add<NegOp>(
      [](NegOp op, KernelCallContext &) { return unary(op, "Neg"); });
  table.add<ExpOp>(
      [](ExpOp op, KernelCallContext &) { return unary(op, "Exp"); });
  table.add<LogOp>(
      [](LogOp op, KernelCallContext &) { return unary(op, "Log"); });
  table.add<SqrtOp>(
      [](SqrtOp op, KernelCallContext &) { return unary(op, "Sqrt"); });
  table.add<RsqrtOp>(
      [](RsqrtOp op, KernelCallContext &) { return unary(op, "Rsqrt"); });
  table.add<TanhOp>(
      [](TanhOp op, KernelCallContext &) { return unary(op, "Tanh"); });
  table.add<SigmoidOp>(
      [](SigmoidOp op, KernelCallContext &) { return unary(op, "Sigmoid"); });
  table.add(scale);
  table.add(castOp);
  // Matmul and reductions.
  table.add(matmul);
  table.add<ReduceSumOp>(
      [](ReduceSumOp op, KernelCallContext &) { return reduce(op, "Sum"); });
  table.add<ReduceMeanOp>(
      [](ReduceMeanOp op, KernelCallContext &) { return reduce(op, "Mean"); });
  table.add<ReduceMaxOp>(
      [](ReduceMaxOp op, KernelCallContext &) { return reduce(op, "Max"); });
  // Layout.
  table.add(reshape);
  table.add(transpose);
  table.add(slice);
  table.add(pad);
  table.add(concat);
  table.add(split);
  // Activations and softmax.
  table.add(relu);
  table.add(silu);
  table.add(gelu);
  table.add(reluGrad);
  table.add(siluGrad);
  table.add(geluGrad);
  table.add(softmax);
  table.add(logSoftmax);
  table.add<SoftmaxGradOp>([](SoftmaxGradOp op, KernelCallContext &) {
    return softmaxBackward(op, "softmaxGrad");
  });
  table.add<LogSoftmaxGradOp>([](LogSoftmaxGradOp op, KernelCallContext &) {
    return softmaxBackward(op, "logSoftmaxGrad");
  });
  // Attention and positions.
  table.add(attention);
  table.add(attentionGrad);
  table.add(rope);
  // Embedding and loss.
  table.add(embedding);
  table.add(embeddingGrad);
  table.add(crossEntropy);
  table.add(crossEntropyGrad);
  table.add(labelCount);
  // Loss scaling.
  table.add(nonfiniteCount);
  table.add(select);
  table.add(updateLossScale);
  // Normalization.
  table.add(layerNorm);
  table.add(rmsNorm);
  table.add(layerNormGrad);
  table.add(rmsNormGrad);
  // Optimizer updates.
  table.add(sgdUpdate);
  table.add(adamwUpdate);
  // Random.
  table.add(dropout);
}

} // namespace mlir::loom::emit

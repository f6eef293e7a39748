//===- Autodiff.cpp - Build @train_step by reverse-mode autodiff ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Turns the loss function `@forward` into one training step, `@train_step`
// (docs/Autodiff.md has the rules and the signature):
//
//   1. classify `@forward`'s arguments: `#loom.param` arguments are trained,
//      the others are the batch; lay out the signature
//      (params..., states..., step, batch...);
//   2. per micro-batch, slice the batch along dim 0 and clone `@forward`'s
//      body, tagging each clone with `loom.fwd = <op index in @forward>`;
//   3. reverse mode over the clone: seed d(loss) = 1 / micro-batches, visit
//      the ops backwards, call each active op's VJP on its result gradients
//      and sum the gradients of values with several uses (parameters
//      accumulate across micro-batches the same way); ops a VJP builds get
//      the forward op's `loom.fwd`;
//   4. average the micro-batch losses; clip the gradients by their global
//      L2 norm (optional);
//   5. build one optimizer update per parameter and `step + 1`, return
//      everything with `loom.name` result attributes;
//   6. erase ops whose results are unused.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/IR/Vjp.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <map>

using ::mlir::loom::kBackwardAttrName;
using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kMicroBatchAttrName;
using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;

#define DEBUG_TYPE "loom-autodiff"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// Tags every op after `after` (or from the start of `block`) that has no
/// `loom.fwd` yet with `id`.
void tagOpsAfter(Block &block, Operation *after, int64_t id) {
  auto it = after ? std::next(after->getIterator()) : block.begin();
  Builder builder(block.getParent()->getContext());
  for (Operation &op : llvm::make_range(it, block.end()))
    if (!op.hasAttr(kFwdAttrName))
      op.setAttr(kFwdAttrName, builder.getI64IntegerAttr(id));
}

/// Marks every op after `after` (or from the start of `block`) as part of
/// micro-batch `m` (`loom.micro_batch`), and of its backward when
/// `backward` (`loom.backward`): the pipeline's scheduler groups ops into
/// units by these (docs/Pipeline.md). Operand-free ops (constants) belong
/// to no unit.
void tagMicroBatch(Block &block, Operation *after, int64_t m, bool backward) {
  auto it = after ? std::next(after->getIterator()) : block.begin();
  Builder builder(block.getParent()->getContext());
  for (Operation &op : llvm::make_range(it, block.end())) {
    if (op.getNumOperands() == 0)
      continue;
    op.setAttr(kMicroBatchAttrName, builder.getI64IntegerAttr(m));
    if (backward)
      op.setAttr(kBackwardAttrName, builder.getUnitAttr());
  }
}

/// Re-derives the result types of `op` after its operands were replaced by
/// micro-batch slices: by type inference where the op has it, by the
/// operand's shape for casts, and by scaling dim 0 for reshapes (which keep
/// the batch dim leading, as every model builder's reshapes do).
LogicalResult retypeForMicroBatch(Operation *op) {
  if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
    SmallVector<Type> types;
    if (failed(infer.inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      return failure();
    for (auto [result, type] : llvm::zip(op->getResults(), types))
      result.setType(type);
    return success();
  }
  if (auto castOp = dyn_cast<CastOp>(op)) {
    auto in = cast<RankedTensorType>(castOp.getInput().getType());
    castOp.getResult().setType(RankedTensorType::get(
        in.getShape(), castOp.getResult().getType().getElementType()));
    return success();
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    auto in = cast<RankedTensorType>(reshape.getInput().getType());
    auto out = cast<RankedTensorType>(reshape.getResult().getType());
    if (in.getNumElements() == out.getNumElements())
      return success();
    SmallVector<int64_t> shape(out.getShape());
    if (shape.empty() || (shape[0] * in.getNumElements()) % out.getNumElements())
      return op->emitOpError("cannot split this reshape into micro-batches");
    shape[0] = shape[0] * in.getNumElements() / out.getNumElements();
    reshape.getResult().setType(
        RankedTensorType::get(shape, out.getElementType()));
    return success();
  }
  return success();
}

struct AutodiffPass : public loom::impl::AutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Adds `grad` to the gradient of `value`, building the sum with `id`.
  /// A parameter's gradient is accumulated per forward op that reads it
  /// (across micro-batches too) and the parts are summed once, after the
  /// last micro-batch: a tied embedding's head part then stays with the
  /// head (its pipeline stage) until that one final sum.
  void accumulate(OpBuilder &builder, Location loc, Value value, Value grad,
                  int64_t id) {
    auto &slot = isa<BlockArgument>(value) ? paramParts[value][id]
                                           : grads[value];
    if (!slot) {
      slot = grad;
      return;
    }
    Operation *sum = AddOp::create(builder, loc, slot, grad);
    sum->setAttr(kFwdAttrName, builder.getI64IntegerAttr(id));
    slot = sum->getResult(0);
  }

  /// The gradient of parameter `param` (null if none reaches it): its parts
  /// summed in forward order, the sums attributed to `owner`.
  Value getParamGrad(OpBuilder &builder, Location loc, Value param,
                     int64_t owner) {
    auto it = paramParts.find(param);
    if (it == paramParts.end())
      return Value();
    Value total;
    for (auto &[id, part] : it->second) {
      if (!total) {
        total = part;
        continue;
      }
      Operation *sum = AddOp::create(builder, loc, total, part);
      sum->setAttr(kFwdAttrName, builder.getI64IntegerAttr(owner));
      total = sum->getResult(0);
    }
    return total;
  }

  /// Reverse mode over the ops of one clone (in forward order), from `loss`.
  LogicalResult backward(OpBuilder &builder, ArrayRef<Operation *> ops,
                         Value loss, Value seed,
                         const llvm::DenseSet<Value> &params);

  llvm::DenseMap<Value, Value> grads;
  /// Per parameter, its gradient's parts by the `loom.fwd` id of the
  /// forward op they differentiate, in id order.
  llvm::DenseMap<Value, std::map<int64_t, Value>> paramParts;
};

} // namespace

LogicalResult AutodiffPass::backward(OpBuilder &builder,
                                     ArrayRef<Operation *> ops, Value loss,
                                     Value seed,
                                     const llvm::DenseSet<Value> &params) {
  // Active values depend on a parameter; only their gradients are needed.
  llvm::DenseSet<Value> active(params.begin(), params.end());
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op->result_begin(), op->result_end());

  grads[loss] = seed;
  Block &block = *builder.getInsertionBlock();
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(grads.lookup(result));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError("has no VJP, but a gradient flows through it");
    int64_t id = cast<IntegerAttr>(op->getAttr(kFwdAttrName)).getInt();
    Operation *last = block.empty() ? nullptr : &block.back();
    SmallVector<Value> operandGrads;
    if (failed(differentiable.buildVjp(builder, resultGrads, operandGrads)))
      return failure();
    tagOpsAfter(block, last, id);
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad && active.contains(operand))
        accumulate(builder, op->getLoc(), operand, grad, id);
  }
  return success();
}

/// `value` as printf's %g writes it (`0.01`, `0`, `1e-05`).
static std::string formatShortest(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

double mlir::loom::getDefaultWeightDecay(StringRef optimizer) {
  // torch.optim.AdamW(weight_decay=1e-2), torch.optim.SGD(weight_decay=0).
  return optimizer == "adamw" ? 0.01 : 0.0;
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  auto forward = module.lookupSymbol<func::FuncOp>(entryName);
  if (!forward || forward.isExternal()) {
    module.emitError("loom-autodiff: no function @") << entryName
                                                     << " with a body";
    return signalPassFailure();
  }
  if (module.lookupSymbol("train_step")) {
    module.emitError("loom-autodiff: the module already has a @train_step");
    return signalPassFailure();
  }
  if (optimizer != "adamw" && optimizer != "sgd" && optimizer != "none") {
    module.emitError("loom-autodiff: unknown optimizer '")
        << optimizer << "', expected adamw, sgd or none";
    return signalPassFailure();
  }
  // -1 leaves the weight decay to the optimizer: torch.optim's default.
  double decayRate = weightDecay == -1.0 ? getDefaultWeightDecay(optimizer)
                                         : double(weightDecay);
  if (!(decayRate >= 0.0) || !std::isfinite(decayRate)) {
    module.emitError("loom-autodiff: weight-decay must be finite and >= 0 "
                     "(or -1, the optimizer's default), got ")
        << weightDecay.getValue();
    return signalPassFailure();
  }
  if (microBatches < 1) {
    module.emitError("loom-autodiff: micro-batches must be >= 1");
    return signalPassFailure();
  }
  // A non-finite hyper-parameter becomes a constant of the step and turns
  // the first update's weights into NaN.
  for (auto [name, value] :
       {std::pair<StringRef, double>{"lr", lr}, {"beta1", beta1},
        {"beta2", beta2}, {"eps", eps}, {"momentum", momentum},
        {"clip-norm", clipNorm}})
    if (!std::isfinite(value)) {
      std::string text;
      llvm::raw_string_ostream(text) << llvm::format("%g", value);
      module.emitError("loom-autodiff: option `")
          << name << "` must be finite, found " << text;
      return signalPassFailure();
    }
  Block &body = forward.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() != 1) {
    forward.emitError("loom-autodiff: @")
        << entryName << " must return the loss alone";
    return signalPassFailure();
  }

  // 1. Classify the arguments and lay out the signature.
  bool adamw = optimizer == "adamw";
  // `none` returns the (clipped) gradients as `<param>.grad` instead of
  // updated parameters: for external optimizers and gradient checks.
  bool gradsOnly = optimizer == "none";
  bool sgdMomentum = optimizer == "sgd" && momentum != 0.0;
  SmallVector<unsigned> paramArgs, batchArgs;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    (forward.getArgAttr(i, kParamAttrName) ? paramArgs : batchArgs)
        .push_back(i);
  SmallVector<std::string> stateSuffixes;
  if (adamw)
    stateSuffixes = {".exp_avg", ".exp_avg_sq"};
  else if (sgdMomentum)
    stateSuffixes = {".momentum_buffer"};

  Builder b(context);
  auto stepType = RankedTensorType::get({}, b.getI64Type());
  SmallVector<Type> argTypes;
  SmallVector<Attribute> argAttrs;
  SmallVector<std::string> paramNames;
  for (unsigned i : paramArgs) {
    argTypes.push_back(forward.getArgumentTypes()[i]);
    argAttrs.push_back(forward.getArgAttrDict(i));
    paramNames.push_back(
        cast<ParamAttr>(forward.getArgAttr(i, kParamAttrName)).getName().str());
  }
  for (auto [k, i] : llvm::enumerate(paramArgs))
    for (const std::string &suffix : stateSuffixes) {
      argTypes.push_back(forward.getArgumentTypes()[i]);
      argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
          kNameAttrName, b.getStringAttr(paramNames[k] + suffix))));
    }
  unsigned stepIndex = argTypes.size();
  argTypes.push_back(stepType);
  argAttrs.push_back(b.getDictionaryAttr(
      b.getNamedAttr(kNameAttrName, b.getStringAttr("step"))));
  unsigned batchStart = argTypes.size();
  for (unsigned i : batchArgs) {
    argTypes.push_back(forward.getArgumentTypes()[i]);
    DictionaryAttr dict = forward.getArgAttrDict(i);
    argAttrs.push_back(dict ? dict : b.getDictionaryAttr({}));
  }
  for (Attribute &attr : argAttrs)
    if (!attr)
      attr = b.getDictionaryAttr({});

  OpBuilder builder(context);
  builder.setInsertionPointAfter(forward);
  Location loc = forward.getLoc();
  auto trainStep = func::FuncOp::create(builder, loc, "train_step",
                                        b.getFunctionType(argTypes, {}));
  Block *entry = trainStep.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  SmallVector<Value> params;
  llvm::DenseSet<Value> paramSet;
  for (unsigned k = 0; k < paramArgs.size(); ++k) {
    params.push_back(entry->getArgument(k));
    paramSet.insert(entry->getArgument(k));
  }

  // The forward op ids, and each parameter's first user (its owner).
  llvm::DenseMap<Operation *, int64_t> ids;
  for (Operation &op : body.without_terminator())
    ids[&op] = static_cast<int64_t>(ids.size());
  int64_t lossId = 0;
  if (Operation *def = ret.getOperand(0).getDefiningOp())
    lossId = ids.lookup(def);
  SmallVector<int64_t> owners;
  for (unsigned i : paramArgs) {
    int64_t owner = lossId;
    for (Operation &op : body.without_terminator())
      if (llvm::is_contained(op.getOperands(), forward.getArgument(i))) {
        owner = ids.lookup(&op);
        break;
      }
    owners.push_back(owner);
  }
  auto tagged = [&](Operation *op, int64_t id) {
    op->setAttr(kFwdAttrName, b.getI64IntegerAttr(id));
    return op->getResult(0);
  };

  Type lossType = ret.getOperand(0).getType();
  Type lossElement = cast<RankedTensorType>(lossType).getElementType();

  // 2. The micro-batches' slices of the batch, all up front: the global
  // token count below needs every micro-batch's labels before the first
  // backward.
  // Every batch argument splits into the micro-batches (so their count is
  // at most the batch size) before anything is sized by that count.
  if (microBatches > 1) {
    if (batchArgs.empty()) {
      forward.emitError("loom-autodiff: ")
          << static_cast<int64_t>(microBatches)
          << " micro-batches need a batch argument to split, and @"
          << entryName << " has none";
      return signalPassFailure();
    }
    for (auto [k, i] : llvm::enumerate(batchArgs)) {
      auto type =
          cast<RankedTensorType>(entry->getArgument(batchStart + k).getType());
      if (type.getRank() == 0 || type.getShape()[0] % microBatches != 0) {
        forward.emitError("loom-autodiff: batch argument #")
            << i << " of type " << type << " does not split into "
            << static_cast<int64_t>(microBatches)
            << " micro-batches along dim 0";
        return signalPassFailure();
      }
    }
  }
  SmallVector<SmallVector<Value>> batchSlices(microBatches);
  for (int64_t m = 0; m < microBatches; ++m) {
    Operation *before = entry->empty() ? nullptr : &entry->back();
    for (auto [k, i] : llvm::enumerate(batchArgs)) {
      Value arg = entry->getArgument(batchStart + k);
      if (microBatches > 1) {
        auto type = cast<RankedTensorType>(arg.getType());
        int64_t rows = type.getShape()[0] / microBatches;
        SmallVector<int64_t> starts(type.getRank(), 0),
            limits(type.getShape()), strides(type.getRank(), 1);
        starts[0] = m * rows;
        limits[0] = (m + 1) * rows;
        Operation *slice = SliceOp::create(builder, loc, arg, starts, limits,
                                           strides);
        // The split belongs to the first op that reads the input.
        int64_t owner = lossId;
        for (Operation &op : body.without_terminator())
          if (llvm::is_contained(op.getOperands(), forward.getArgument(i))) {
            owner = ids.lookup(&op);
            break;
          }
        arg = tagged(slice, owner);
      }
      batchSlices[m].push_back(arg);
    }
    tagMicroBatch(*entry, before, m, /*backward=*/false);
  }

  // With micro-batches, a mean cross-entropy loss is normalized by the
  // labelled positions of the whole batch, not per micro-batch: each
  // micro-batch sums its losses, the seed of every backward is 1 / count,
  // so the step equals the full-batch step whatever labels are ignored
  // (Megatron's per-token loss). Other losses are averaged over the
  // micro-batches.
  auto lossOp = ret.getOperand(0).getDefiningOp<CrossEntropyOp>();
  Value inverseCount;
  if (microBatches > 1 && lossOp && !lossOp.getSum() && !lossOp.getOffset()) {
    auto labelsArg = dyn_cast<BlockArgument>(lossOp.getLabels());
    auto batchPos =
        labelsArg ? llvm::find(batchArgs, labelsArg.getArgNumber())
                  : batchArgs.end();
    if (batchPos != batchArgs.end()) {
      size_t k = batchPos - batchArgs.begin();
      Value count;
      for (int64_t m = 0; m < microBatches; ++m) {
        Value part = tagged(
            LabelCountOp::create(builder, loc, lossType, batchSlices[m][k],
                                 lossOp.getIgnoreIndexAttr()),
            lossId);
        count = count ? tagged(AddOp::create(builder, loc, count, part), lossId)
                      : part;
      }
      inverseCount = tagged(
          DivOp::create(builder, loc, buildSplat(builder, loc, lossElement, 1.0),
                        count),
          lossId);
    }
  }

  // 3. Forward and backward per micro-batch.
  SmallVector<Value> losses;
  for (int64_t m = 0; m < microBatches; ++m) {
    IRMapping mapping;
    for (auto [k, i] : llvm::enumerate(paramArgs))
      mapping.map(forward.getArgument(i), params[k]);
    for (auto [k, i] : llvm::enumerate(batchArgs))
      mapping.map(forward.getArgument(i), batchSlices[m][k]);
    Operation *before = entry->empty() ? nullptr : &entry->back();
    SmallVector<Operation *> clones;
    for (Operation &op : body.without_terminator()) {
      Operation *clone = builder.clone(op, mapping);
      if (microBatches > 1 && failed(retypeForMicroBatch(clone)))
        return signalPassFailure();
      clone->setAttr(kFwdAttrName, b.getI64IntegerAttr(ids.lookup(&op)));
      clones.push_back(clone);
    }
    Value loss = mapping.lookupOrDefault(ret.getOperand(0));
    if (inverseCount)
      cast<CrossEntropyOp>(loss.getDefiningOp()).setSum(true);
    losses.push_back(loss);
    if (microBatches > 1)
      tagMicroBatch(*entry, before, m, /*backward=*/false);
    before = entry->empty() ? nullptr : &entry->back();
    Value seed = inverseCount
                     ? inverseCount
                     : buildSplat(builder, loc, lossElement,
                                  1.0 / static_cast<double>(microBatches));
    if (failed(backward(builder, clones, loss, seed, paramSet)))
      return signalPassFailure();
    if (microBatches > 1)
      tagMicroBatch(*entry, before, m, /*backward=*/true);
  }

  // 4. The loss (summed and divided by the count, or the mean of the
  // micro-batches' losses), then clipping.
  Value loss = losses.front();
  for (Value other : llvm::drop_begin(losses))
    loss = tagged(AddOp::create(builder, loc, loss, other), lossId);
  if (inverseCount)
    loss = tagged(MulOp::create(builder, loc, loss, inverseCount), lossId);
  else if (microBatches > 1)
    loss = tagged(ScaleOp::create(builder, loc, loss,
                                  llvm::APFloat(1.0 / microBatches)),
                  lossId);

  SmallVector<Value> paramGrads;
  for (auto [k, param] : llvm::enumerate(params))
    paramGrads.push_back(getParamGrad(builder, loc, param, owners[k]));
  if (clipNorm > 0.0) {
    // clip_grad_norm_: norm = sqrt(sum of squares of every gradient),
    // coef = max_norm / (norm + 1e-6), grads *= min(coef, 1), the min
    // written 1 - relu(1 - coef) with loom ops.
    Value sumSquares;
    for (auto [k, grad] : llvm::enumerate(paramGrads)) {
      if (!grad)
        continue;
      auto type = cast<RankedTensorType>(grad.getType());
      SmallVector<int64_t> axes =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      Value square = tagged(MulOp::create(builder, loc, grad, grad), owners[k]);
      Value sum = axes.empty()
                      ? square
                      : tagged(ReduceSumOp::create(builder, loc, square, axes),
                               owners[k]);
      if (type.getElementType() != lossElement)
        sum = tagged(CastOp::create(builder, loc, lossType, sum), owners[k]);
      sumSquares = sumSquares ? tagged(AddOp::create(builder, loc, sumSquares,
                                                     sum),
                                       owners[k])
                              : sum;
    }
    if (sumSquares) {
      Value norm = tagged(SqrtOp::create(builder, loc, sumSquares), lossId);
      Value denom = tagged(
          AddOp::create(builder, loc, norm,
                        buildSplat(builder, loc, lossElement, 1e-6)),
          lossId);
      Value coef = tagged(
          DivOp::create(builder, loc,
                        buildSplat(builder, loc, lossElement, clipNorm), denom),
          lossId);
      Value one = buildSplat(builder, loc, lossElement, 1.0);
      Value excess = tagged(
          ReluOp::create(builder, loc,
                         tagged(SubOp::create(builder, loc, one, coef), lossId)),
          lossId);
      Value clamped =
          tagged(SubOp::create(builder, loc, one, excess), lossId);
      for (auto [k, grad] : llvm::enumerate(paramGrads)) {
        if (!grad)
          continue;
        Type element = cast<RankedTensorType>(grad.getType()).getElementType();
        Value factor = clamped;
        if (element != lossElement)
          factor = tagged(CastOp::create(builder, loc,
                                         RankedTensorType::get({}, element),
                                         clamped),
                          owners[k]);
        grad = tagged(MulOp::create(builder, loc, grad, factor), owners[k]);
      }
    }
  }

  // 5. The updates. A parameter without a gradient is left as it is, state
  // included, as torch.optim skips parameters whose .grad is None.
  Value step = entry->getArgument(stepIndex);
  SmallVector<Value> newParams, newStates;
  unsigned numStates = stateSuffixes.size();
  unsigned decayed = 0;
  for (auto [k, param] : llvm::enumerate(params)) {
    SmallVector<Value> states;
    for (unsigned s = 0; s < numStates; ++s)
      states.push_back(entry->getArgument(params.size() + k * numStates + s));
    Value grad = paramGrads[k];
    if (gradsOnly) {
      auto type = cast<RankedTensorType>(param.getType());
      newParams.push_back(grad ? grad
                               : buildSplat(builder, loc, type.getElementType(),
                                            0.0, type.getShape()));
      continue;
    }
    if (!grad) {
      mlir::emitRemark(forward.getLoc(), "parameter '")
          << paramNames[k] << "' does not reach the loss; it is not updated";
      newParams.push_back(param);
      llvm::append_range(newStates, states);
      continue;
    }
    bool decay = cast<ParamAttr>(forward.getArgAttr(paramArgs[k],
                                                    kParamAttrName))
                     .getDecay();
    decayed += decay;
    double wd = decay ? decayRate : 0.0;
    Operation *update;
    if (adamw) {
      update = AdamwUpdateOp::create(
          builder, loc, param, grad, states[0], states[1], step,
          llvm::APFloat(lr.getValue()), llvm::APFloat(beta1.getValue()),
          llvm::APFloat(beta2.getValue()), llvm::APFloat(eps.getValue()),
          llvm::APFloat(wd));
    } else {
      update = SgdUpdateOp::create(
          builder, loc, param, grad, sgdMomentum ? states[0] : Value(),
          llvm::APFloat(lr.getValue()), llvm::APFloat(momentum.getValue()),
          llvm::APFloat(wd), llvm::APFloat(0.0));
    }
    update->setAttr(kFwdAttrName, b.getI64IntegerAttr(owners[k]));
    newParams.push_back(update->getResult(0));
    for (unsigned s = 0; s < numStates; ++s)
      newStates.push_back(update->getResult(1 + s));
  }
  Value one = buildSplat(builder, loc, b.getI64Type(), 1.0);
  Value nextStep = tagged(AddOp::create(builder, loc, step, one), lossId);

  SmallVector<Value> results{loss};
  llvm::append_range(results, newParams);
  llvm::append_range(results, newStates);
  results.push_back(nextStep);
  func::ReturnOp::create(builder, loc, results);

  SmallVector<Attribute> resultAttrs;
  auto named = [&](StringRef name) {
    return b.getDictionaryAttr(
        b.getNamedAttr(kNameAttrName, b.getStringAttr(name)));
  };
  resultAttrs.push_back(named("loss"));
  for (const std::string &name : paramNames)
    resultAttrs.push_back(named(gradsOnly ? name + ".grad" : name));
  for (const std::string &name : paramNames)
    for (const std::string &suffix : stateSuffixes)
      resultAttrs.push_back(named(name + suffix));
  resultAttrs.push_back(named("step"));
  SmallVector<Type> resultTypes = llvm::to_vector(ValueRange(results).getTypes());
  trainStep.setType(b.getFunctionType(argTypes, resultTypes));
  trainStep.setAllArgAttrs(argAttrs);
  trainStep.setAllResultAttrs(resultAttrs);

  // 6. Dead ops (forward values no gradient needed, unused VJP pieces).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  grads.clear();
  paramParts.clear();

  mlir::emitRemark(forward.getLoc(), "built @train_step from @")
      << entryName << ": " << params.size() << " parameters (" << decayed
      << " with weight decay " << formatShortest(decayRate)
      << "), optimizer " << optimizer << ", "
      << static_cast<int64_t>(microBatches) << " micro-batch(es), "
      << (clipNorm > 0.0 ? "clipped to global norm " : "no clipping")
      << (clipNorm > 0.0 ? std::to_string(clipNorm.getValue()) : std::string());
  LLVM_DEBUG(llvm::dbgs() << "loom-autodiff: erased " << erased
                          << " dead ops\n");
}

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
//      (params..., states..., lr_scale, step, batch...), `lr_scale` only
//      when there is an optimizer;
//   2. clone `@forward`'s body onto the arguments, tagging each op with
//      `loom.fwd = <op index in @forward>`;
//   3. reverse mode over the clone (ReverseMode.h): seed d(loss) = 1, visit
//      the ops backwards, call each active op's VJP on its result gradients
//      and sum the gradients of values with several uses; a parameter's
//      gradient is kept in parts, one per forward op that reads it; ops a
//      VJP builds get the forward op's `loom.fwd`;
//   4. sum each parameter's parts; clip the gradients by their global L2
//      norm (optional);
//   5. build one optimizer update per parameter (its learning rate
//      `lr * lr_scale`) and `step + 1`, return everything with `loom.name`
//      result attributes (with clipping, also the norm as `grad_norm`,
//      clip_grad_norm_'s return value);
//   6. erase ops whose results are unused.
//
// With `loss-scale` (fp16-mixed, docs/MixedPrecision.md), step 3 is seeded
// with the `loss_scale` argument instead of 1; step 4 first multiplies each
// gradient by 1 / loss_scale and counts the non-finite elements of the
// results (loom.nonfinite_count, summed); step 5 then keeps the old
// parameter, states and step counter where the count is not zero
// (loom.select) and updates the scale (loom.update_loss_scale), as
// torch.cuda.amp.GradScaler's unscale_, step and update do.
//
// The step is built for one micro-batch; loom-slice-micro-batches splits it
// into more (gradient accumulation, pipelines).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/IR/Vjp.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/ReverseMode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"

#include <cmath>

using ::mlir::loom::kFileShapeAttrName;
using ::mlir::loom::kFoundInfResultName;
using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kInitialValueAttrName;
using ::mlir::loom::kInjectNonfiniteArgName;
using ::mlir::loom::kLossScaleArgName;
using ::mlir::loom::kLossScaleTrackerArgName;
using ::mlir::loom::kLrScaleArgName;
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
struct AutodiffPass : public loom::impl::AutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override;
};
} // namespace

/// `value` as printf's %g writes it (`0.01`, `0`, `1e-05`).
static std::string formatShortest(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

bool mlir::loom::isValidLossScale(StringRef text) {
  if (text == "none" || text == "dynamic")
    return true;
  double value;
  return !text.getAsDouble(value) && std::isfinite(value) && value > 0.0;
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
  if (!isValidLossScale(lossScale)) {
    module.emitError("loom-autodiff: loss-scale must be none, dynamic or a "
                     "finite number > 0, found '")
        << lossScale << "'";
    return signalPassFailure();
  }
  bool scaled = lossScale != "none";
  if (scaled && optimizer == "none") {
    module.emitError("loom-autodiff: loss-scale needs an optimizer: it "
                     "skips the update of a step with non-finite gradients");
    return signalPassFailure();
  }
  // GradScaler's state machine; a fixed scale is the same with factors 1.
  bool dynamicScale = lossScale == "dynamic";
  double initScale = kDefaultInitLossScale;
  if (scaled && !dynamicScale)
    StringRef(lossScale).getAsDouble(initScale);
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
  // A parameter held as a view of its file shape (`loom.file_shape`) keeps
  // that shape in files for everything derived from it: its optimizer
  // states, its gradient and its updated value.
  SmallVector<Attribute> fileShapes;
  for (unsigned i : paramArgs)
    fileShapes.push_back(forward.getArgAttr(i, kFileShapeAttrName));
  auto named = [&](StringRef name, Attribute fileShape) {
    SmallVector<NamedAttribute, 2> attrs{
        b.getNamedAttr(kNameAttrName, b.getStringAttr(name))};
    if (fileShape)
      attrs.push_back(b.getNamedAttr(kFileShapeAttrName, fileShape));
    return b.getDictionaryAttr(attrs);
  };
  for (auto [k, i] : llvm::enumerate(paramArgs))
    for (const std::string &suffix : stateSuffixes) {
      argTypes.push_back(forward.getArgumentTypes()[i]);
      argAttrs.push_back(named(paramNames[k] + suffix, fileShapes[k]));
    }
  // The learning-rate factor is a step input, so a schedule changes the rate
  // without a recompile; it comes before `step`, since everything after
  // `step` is the batch (loom-slice-micro-batches slices it).
  std::optional<unsigned> lrScaleIndex;
  if (!gradsOnly) {
    lrScaleIndex = argTypes.size();
    // f64 in an f64 model, else f32 (the master weights' type under mixed
    // precision): the factor is read once per step and multiplied in f64.
    Type lossElem =
        cast<RankedTensorType>(ret.getOperand(0).getType()).getElementType();
    argTypes.push_back(RankedTensorType::get(
        {}, lossElem.isF64() ? Type(b.getF64Type()) : b.getF32Type()));
    argAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kNameAttrName, b.getStringAttr(kLrScaleArgName))));
  }
  // The loss-scaling state, also before `step` (not batch).
  std::optional<unsigned> lossScaleIndex;
  if (scaled) {
    Type lossElem =
        cast<RankedTensorType>(ret.getOperand(0).getType()).getElementType();
    auto scalarType = RankedTensorType::get({}, lossElem);
    lossScaleIndex = argTypes.size();
    argTypes.push_back(scalarType);
    argAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(kNameAttrName, b.getStringAttr(kLossScaleArgName)),
         b.getNamedAttr(kInitialValueAttrName, b.getF64FloatAttr(initScale))}));
    argTypes.push_back(stepType);
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        kNameAttrName, b.getStringAttr(kLossScaleTrackerArgName))));
    argTypes.push_back(scalarType);
    argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        kNameAttrName, b.getStringAttr(kInjectNonfiniteArgName))));
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

  // 2. The forward, on the batch arguments themselves (one micro-batch:
  // loom-slice-micro-batches splits the step into more).
  IRMapping mapping;
  for (auto [k, i] : llvm::enumerate(paramArgs))
    mapping.map(forward.getArgument(i), params[k]);
  for (auto [k, i] : llvm::enumerate(batchArgs))
    mapping.map(forward.getArgument(i), entry->getArgument(batchStart + k));
  SmallVector<Operation *> clones;
  for (Operation &op : body.without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    clone->setAttr(kFwdAttrName, b.getI64IntegerAttr(ids.lookup(&op)));
    clones.push_back(clone);
  }
  Value loss = mapping.lookupOrDefault(ret.getOperand(0));

  // 3. Reverse mode, seeded with d(loss) = 1, or with the loss scale:
  // GradScaler's scale(loss).backward().
  Value scale = lossScaleIndex ? entry->getArgument(*lossScaleIndex) : Value();
  ReverseMode reverse(paramSet);
  if (failed(reverse.backward(
          builder, clones, loss,
          scale ? scale : buildSplat(builder, loc, lossElement, 1.0))))
    return signalPassFailure();

  // 4. Each parameter's gradient, unscaled and checked under loss scaling,
  // then clipping.
  SmallVector<Value> paramGrads;
  for (auto [k, param] : llvm::enumerate(params))
    paramGrads.push_back(
        reverse.buildParamGrad(builder, loc, param, owners[k]));
  // GradScaler.unscale_: every gradient times 1 / scale (exact for the
  // powers of two the dynamic scale takes), then the count of its
  // non-finite elements, summed over every gradient (the partitioner
  // all-reduces the partial counts of sharded gradients).
  Value nonfinite;
  if (scale) {
    Value inverse =
        tagged(DivOp::create(builder, loc,
                             buildSplat(builder, loc, lossElement, 1.0), scale),
               lossId);
    // The test hook: 0 leaves the factor exact; inf poisons every gradient.
    inverse = tagged(AddOp::create(builder, loc, inverse,
                                   entry->getArgument(*lossScaleIndex + 2)),
                     lossId);
    for (auto [k, grad] : llvm::enumerate(paramGrads)) {
      if (!grad)
        continue;
      Type element = cast<RankedTensorType>(grad.getType()).getElementType();
      Value factor = inverse;
      if (element != lossElement)
        factor =
            tagged(CastOp::create(builder, loc,
                                  RankedTensorType::get({}, element), inverse),
                   owners[k]);
      grad = tagged(MulOp::create(builder, loc, grad, factor), owners[k]);
      Value count = tagged(
          NonfiniteCountOp::create(builder, loc, lossType, grad), owners[k]);
      nonfinite =
          nonfinite
              ? tagged(AddOp::create(builder, loc, nonfinite, count), owners[k])
              : count;
    }
    if (!nonfinite)
      nonfinite = buildSplat(builder, loc, lossElement, 0.0);
  }
  // The global gradient norm, returned as `grad_norm` when clipping
  // computes it or `grad-norm` asks for it (the trainer's metrics report
  // it).
  Value gradNorm;
  if (clipNorm > 0.0 || returnGradNorm) {
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
    if (sumSquares)
      gradNorm = tagged(SqrtOp::create(builder, loc, sumSquares), lossId);
    if (gradNorm && clipNorm > 0.0) {
      Value norm = gradNorm;
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
  Value lrScale = lrScaleIndex ? entry->getArgument(*lrScaleIndex) : Value();
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
          builder, loc, param, grad, states[0], states[1], step, lrScale,
          llvm::APFloat(lr.getValue()), llvm::APFloat(beta1.getValue()),
          llvm::APFloat(beta2.getValue()), llvm::APFloat(eps.getValue()),
          llvm::APFloat(wd));
    } else {
      update = SgdUpdateOp::create(
          builder, loc, param, grad, sgdMomentum ? states[0] : Value(), lrScale,
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
  // A step with a non-finite gradient is skipped: every parameter, state
  // and the step counter (Adam's bias correction) stay as they were, as
  // GradScaler.step skips optimizer.step(); the scale backs off or grows.
  SmallVector<Value> newScaleState;
  if (scale) {
    auto keepIfNonfinite = [&](Value old, Value updated,
                               int64_t owner) -> Value {
      if (old == updated)
        return updated;
      return tagged(SelectOp::create(builder, loc, nonfinite, old, updated),
                    owner);
    };
    for (auto [k, param] : llvm::enumerate(params)) {
      newParams[k] = keepIfNonfinite(param, newParams[k], owners[k]);
      for (unsigned s = 0; s < numStates; ++s)
        newStates[k * numStates + s] = keepIfNonfinite(
            entry->getArgument(params.size() + k * numStates + s),
            newStates[k * numStates + s], owners[k]);
    }
    nextStep = keepIfNonfinite(step, nextStep, lossId);
    auto update = UpdateLossScaleOp::create(
        builder, loc, scale, entry->getArgument(*lossScaleIndex + 1), nonfinite,
        llvm::APFloat(dynamicScale ? kLossScaleGrowthFactor : 1.0),
        llvm::APFloat(dynamicScale ? kLossScaleBackoffFactor : 1.0),
        dynamicScale ? kLossScaleGrowthInterval : int64_t(1));
    update->setAttr(kFwdAttrName, b.getI64IntegerAttr(lossId));
    newScaleState = {update.getNewScale(), update.getNewGrowthTracker(),
                     nonfinite};
  }

  SmallVector<Value> results{loss};
  llvm::append_range(results, newParams);
  llvm::append_range(results, newStates);
  // The scale's state before `step`, which the contract wants last.
  llvm::append_range(results, newScaleState);
  if (gradNorm)
    results.push_back(gradNorm);
  results.push_back(nextStep);
  func::ReturnOp::create(builder, loc, results);

  SmallVector<Attribute> resultAttrs;
  resultAttrs.push_back(named("loss", Attribute()));
  for (auto [k, name] : llvm::enumerate(paramNames))
    resultAttrs.push_back(
        named(gradsOnly ? name + ".grad" : name, fileShapes[k]));
  for (auto [k, name] : llvm::enumerate(paramNames))
    for (const std::string &suffix : stateSuffixes)
      resultAttrs.push_back(named(name + suffix, fileShapes[k]));
  if (scale) {
    resultAttrs.push_back(named(kLossScaleArgName, Attribute()));
    resultAttrs.push_back(named(kLossScaleTrackerArgName, Attribute()));
    resultAttrs.push_back(named(kFoundInfResultName, Attribute()));
  }
  if (gradNorm)
    resultAttrs.push_back(named("grad_norm", Attribute()));
  resultAttrs.push_back(named("step", Attribute()));
  SmallVector<Type> resultTypes = llvm::to_vector(ValueRange(results).getTypes());
  trainStep.setType(b.getFunctionType(argTypes, resultTypes));
  trainStep.setAllArgAttrs(argAttrs);
  trainStep.setAllResultAttrs(resultAttrs);

  // 6. Dead ops (forward values no gradient needed, unused VJP pieces).
  [[maybe_unused]] int64_t erased = 0;
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op)) {
      op.erase();
      ++erased;
    }

  mlir::emitRemark(forward.getLoc(), "built @train_step from @")
      << entryName << ": " << params.size() << " parameters (" << decayed
      << " with weight decay " << formatShortest(decayRate) << "), optimizer "
      << optimizer << ", "
      << (clipNorm > 0.0 ? "clipped to global norm " : "no clipping")
      << (clipNorm > 0.0 ? std::to_string(clipNorm.getValue()) : std::string())
      << (scaled ? (dynamicScale
                        ? ", dynamic loss scale"
                        : ", fixed loss scale " + formatShortest(initScale))
                 : "");
  LLVM_DEBUG(llvm::dbgs() << "loom-autodiff: erased " << erased
                          << " dead ops\n");
}

//===- SliceMicroBatches.cpp - Split @train_step into micro-batches -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Turns the one-micro-batch `@train_step` loom-autodiff builds into the step
// of M micro-batches (docs/Autodiff.md, "Micro-batches"). The step's block is
// [forward][seed, backward][tail] in that order, and the new one is built
// after it, then the old ops are erased:
//
//   1. find the parts: the forward is the block's ops up to the loss's; each
//      parameter's gradient is read off the tail (its update's `grad`
//      operand, or its `<param>.grad` result, under the clipping's factor)
//      and is the sum, in `loom.fwd` order, of as many parts as reverse mode
//      gives it (step 4 tells how many); the tail starts after the last op
//      that defines a part, the backward is what lies between;
//   2. slice every batch argument along dim 0, all micro-batches up front
//      (the label count needs every micro-batch's labels);
//   3. a mean cross-entropy of a batch argument's labels is normalized by
//      the labelled positions of the whole batch: each micro-batch sums its
//      losses and seeds its backward with 1 / count;
//   4. per micro-batch: clone the forward onto the slices, re-derive its
//      result types, rebuild the backward by reverse mode (ReverseMode.h;
//      the VJPs build their shapes and constants from the micro-batch's
//      types, so the one-micro-batch backward cannot just be retyped), the
//      parameters' parts accumulating across micro-batches; tag the ops
//      `loom.micro_batch` (and `loom.backward`);
//   5. the loss: the micro-batches' losses summed and normalized;
//   6. clone the tail onto the accumulated parts and the new loss (its sums
//      of parts, clipping, updates and `step + 1` stay as they were), erase
//      the old ops and the dead ones.
//
// A loss-scaled step (fp16-mixed, docs/MixedPrecision.md) seeds every
// micro-batch's backward with `loss_scale` times its normalization (step
// 3), and step 1 reads each gradient off from under its unscale (the
// product with `1 / loss_scale + inject_nonfinite`), so the tail cloned in
// step 6 unscales the accumulated f32 gradient once and counts the
// non-finite elements of the accumulated gradients, as
// torch.cuda.amp.GradScaler does after the last micro-batch's backward.
//
// The result is, op for op, the step loom-autodiff used to build with its
// own `micro-batches` option.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/LoomTraits.h"
#include "loom/Dialect/Loom/IR/Vjp.h"
#include "loom/Dialect/Loom/Transforms/BatchSlices.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/ResultTypes.h"
#include "loom/Dialect/Loom/Transforms/ReverseMode.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "loom-slice-micro-batches"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_SLICEMICROBATCHESPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

int64_t mlir::loom::getMicroBatchCount(func::FuncOp step) {
  int64_t count = 1;
  step.walk([&](Operation *op) {
    if (auto m = op->getAttrOfType<IntegerAttr>(kMicroBatchAttrName))
      count = std::max(count, m.getInt() + 1);
  });
  return count;
}

std::optional<unsigned> mlir::loom::getStepCounterIndex(func::FuncOp step) {
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto name = step.getArgAttrOfType<StringAttr>(i, kNameAttrName);
    auto type = dyn_cast<RankedTensorType>(step.getArgumentTypes()[i]);
    if (name && name.getValue() == "step" && type && type.getRank() == 0 &&
        type.getElementType().isInteger(64))
      return i;
  }
  return std::nullopt;
}

namespace {

/// Marks every op after `after` as part of micro-batch `m`
/// (`loom.micro_batch`), and of its backward when `backward`
/// (`loom.backward`): the pipeline's scheduler groups ops into units by
/// these (docs/Pipeline.md). Operand-free ops (constants) belong to no unit.
void tagMicroBatch(Block &block, Operation *after, int64_t m, bool backward) {
  Builder builder(block.getParent()->getContext());
  for (Operation &op :
       llvm::make_range(std::next(after->getIterator()), block.end())) {
    if (op.getNumOperands() == 0)
      continue;
    op.setAttr(kMicroBatchAttrName, builder.getI64IntegerAttr(m));
    if (backward)
      op.setAttr(kBackwardAttrName, builder.getUnitAttr());
  }
}

/// Whether `factor` is the clipping's `min(coef, 1)` (possibly cast), which
/// loom-autodiff writes `1 - relu(1 - max_norm / (sqrt(sum) + eps))`.
bool isClipFactor(Value factor) {
  if (auto castOp = factor.getDefiningOp<CastOp>())
    factor = castOp.getInput();
  auto clamped = factor.getDefiningOp<SubOp>();
  auto excess =
      clamped ? clamped->getOperand(1).getDefiningOp<ReluOp>() : ReluOp();
  auto oneMinus =
      excess ? excess->getOperand(0).getDefiningOp<SubOp>() : SubOp();
  auto coef =
      oneMinus ? oneMinus->getOperand(1).getDefiningOp<DivOp>() : DivOp();
  auto denom = coef ? coef->getOperand(1).getDefiningOp<AddOp>() : AddOp();
  return denom && denom->getOperand(0).getDefiningOp<SqrtOp>();
}

/// Whether `factor` is loom-autodiff's unscale factor of a loss-scaled step
/// (possibly cast to the gradient's type): `1 / loss_scale +
/// inject_nonfinite`, the test hook's input added to the inverse.
bool isUnscaleFactor(Value factor, Value lossScale) {
  if (auto castOp = factor.getDefiningOp<CastOp>())
    factor = castOp.getInput();
  auto hooked = factor.getDefiningOp<AddOp>();
  auto inverse =
      hooked ? hooked->getOperand(0).getDefiningOp<DivOp>() : DivOp();
  return inverse && inverse->getOperand(1) == lossScale;
}

struct SliceMicroBatchesPass
    : public loom::impl::SliceMicroBatchesPassBase<SliceMicroBatchesPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult slice(func::FuncOp step, int64_t count);
};

} // namespace

void SliceMicroBatchesPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (microBatches < 1) {
    module.emitError("loom-slice-micro-batches: micro-batches must be >= 1, "
                     "found ")
        << static_cast<int64_t>(microBatches);
    return signalPassFailure();
  }
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step || step.isExternal()) {
    module.emitError("loom-slice-micro-batches: no function @train_step with "
                     "a body");
    return signalPassFailure();
  }
  int64_t current = getMicroBatchCount(step);
  if (current == microBatches)
    return;
  if (current != 1) {
    step.emitError("loom-slice-micro-batches: @train_step is split into ")
        << current << " micro-batches already; only the one-micro-batch "
        << "step loom-autodiff builds can be split (into "
        << static_cast<int64_t>(microBatches) << ")";
    return signalPassFailure();
  }
  if (failed(slice(step, microBatches)))
    return signalPassFailure();
}

LogicalResult SliceMicroBatchesPass::slice(func::FuncOp step, int64_t count) {
  auto fail = [&](const Twine &message) {
    return step.emitError("loom-slice-micro-batches: ") << message;
  };
  Block &entry = step.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  Location loc = step.getLoc();
  Builder b(step.getContext());

  // The signature loom-autodiff lays out: params..., states..., step,
  // batch...
  std::optional<unsigned> stepIndex = getStepCounterIndex(step);
  if (!stepIndex)
    return fail("@train_step has no `step` argument (a rank-0 i64 named "
                "`step`): not a step loom-autodiff built");
  SmallVector<Value> params;
  llvm::DenseSet<Value> paramSet;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    if (!step.getArgAttr(i, kParamAttrName))
      continue;
    if (i != params.size())
      return fail("parameter argument #" + Twine(i) +
                  " follows a non-parameter argument");
    params.push_back(entry.getArgument(i));
    paramSet.insert(entry.getArgument(i));
  }
  // A loss-scaled step's `loss_scale` (loom-autodiff's `loss-scale`).
  Value lossScale;
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (auto name = step.getArgAttrOfType<StringAttr>(i, kNameAttrName);
        name && name.getValue() == kLossScaleArgName)
      lossScale = entry.getArgument(i);
  SmallVector<Value> batchArgs(
      llvm::drop_begin(entry.getArguments(), *stepIndex + 1));
  if (batchArgs.empty()) {
    return step.emitError("loom-slice-micro-batches: ")
           << count << " micro-batches need a batch argument to split, and "
           << "@train_step has none";
  }
  for (Value arg : batchArgs) {
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.getRank() == 0 || type.getShape()[0] % count != 0)
      return step.emitError("loom-slice-micro-batches: batch argument #")
             << cast<BlockArgument>(arg).getArgNumber() << " of type " << type
             << " does not split into " << count
             << " micro-batches along dim 0";
  }
  Value oldLoss = ret.getOperand(0);
  Operation *lossOp = oldLoss.getDefiningOp();
  if (!lossOp || lossOp->getBlock() != &entry)
    return fail("the returned loss is not computed in @train_step");
  SmallVector<Operation *> forwardOps;
  for (Operation &op :
       llvm::make_range(entry.begin(), std::next(lossOp->getIterator()))) {
    if (!op.getAttrOfType<IntegerAttr>(kFwdAttrName))
      return op.emitOpError("has no integer `loom.fwd`: @train_step is not "
                            "the step loom-autodiff built");
    forwardOps.push_back(&op);
  }
  auto fwdId = [](Operation *op) {
    return op->getAttrOfType<IntegerAttr>(kFwdAttrName).getInt();
  };
  int64_t lossId = fwdId(lossOp);
  Type lossType = oldLoss.getType();
  Type lossElement = cast<RankedTensorType>(lossType).getElementType();
  auto tagged = [&](Operation *op, int64_t id) {
    op->setAttr(kFwdAttrName, b.getI64IntegerAttr(id));
    return op->getResult(0);
  };

  // The new step is built after the old one's return, then the old ops go.
  OpBuilder builder = OpBuilder::atBlockEnd(&entry);

  // 2. The micro-batches' slices of the batch, all up front: the global
  // token count below needs every micro-batch's labels before the first
  // backward. A slice belongs to the first op that reads its argument.
  SmallVector<SmallVector<Value>> batchSlices(count);
  for (int64_t m = 0; m < count; ++m) {
    Operation *before = &entry.back();
    for (Value arg : batchArgs) {
      auto type = cast<RankedTensorType>(arg.getType());
      int64_t rows = type.getShape()[0] / count;
      SmallVector<int64_t> starts(type.getRank(), 0), limits(type.getShape()),
          strides(type.getRank(), 1);
      starts[0] = m * rows;
      limits[0] = (m + 1) * rows;
      Operation *slice =
          SliceOp::create(builder, loc, arg, starts, limits, strides);
      int64_t owner = lossId;
      for (Operation *op : forwardOps)
        if (llvm::is_contained(op->getOperands(), arg)) {
          owner = fwdId(op);
          break;
        }
      batchSlices[m].push_back(tagged(slice, owner));
    }
    tagMicroBatch(entry, before, m, /*backward=*/false);
  }

  // 3. With micro-batches, a mean cross-entropy loss is normalized by the
  // labelled positions of the whole batch, not per micro-batch: each
  // micro-batch sums its losses, the seed of every backward is 1 / count,
  // so the step equals the full-batch step whatever labels are ignored
  // (Megatron's per-token loss). Other losses are averaged over the
  // micro-batches.
  auto crossEntropy = dyn_cast<CrossEntropyOp>(lossOp);
  Value inverseCount;
  if (crossEntropy && !crossEntropy.getSum() && !crossEntropy.getOffset()) {
    auto batchPos = llvm::find(batchArgs, crossEntropy.getLabels());
    if (batchPos != batchArgs.end()) {
      size_t k = batchPos - batchArgs.begin();
      Value total;
      for (int64_t m = 0; m < count; ++m) {
        Value part = tagged(
            LabelCountOp::create(builder, loc, lossType, batchSlices[m][k],
                                 crossEntropy.getIgnoreIndexAttr()),
            lossId);
        total = total ? tagged(AddOp::create(builder, loc, total, part), lossId)
                      : part;
      }
      inverseCount = tagged(
          DivOp::create(builder, loc,
                        buildSplat(builder, loc, lossElement, 1.0), total),
          lossId);
    }
  }

  // Under loss scaling every backward is seeded with the scale times its
  // normalization (GradScaler's scale(loss / count).backward() per
  // micro-batch); the product is exact for the powers of two the dynamic
  // scale takes.
  Value scaledSeed;
  if (lossScale) {
    Value normalization =
        inverseCount ? inverseCount
                     : buildSplat(builder, loc, lossElement,
                                  1.0 / static_cast<double>(count));
    scaledSeed = tagged(MulOp::create(builder, loc, lossScale, normalization),
                        lossId);
  }

  // 4. Forward and backward per micro-batch.
  ReverseMode reverse(paramSet);
  SmallVector<Value> losses;
  for (int64_t m = 0; m < count; ++m) {
    IRMapping mapping;
    for (auto [arg, slice] : llvm::zip(batchArgs, batchSlices[m]))
      mapping.map(arg, slice);
    Operation *before = &entry.back();
    SmallVector<Operation *> clones;
    for (Operation *op : forwardOps) {
      Operation *clone = builder.clone(*op, mapping);
      if (auto slice = dyn_cast<SliceOp>(clone))
        if (failed(rescaleBatchSlice(cast<SliceOp>(op), slice,
                                        "micro-batches", "micro-batch")))
          return failure();
      if (failed(retypeForBatchSlice(clone, "micro-batches")))
        return failure();
      clones.push_back(clone);
    }
    Value loss = mapping.lookup(oldLoss);
    if (inverseCount)
      cast<CrossEntropyOp>(loss.getDefiningOp()).setSum(true);
    losses.push_back(loss);
    tagMicroBatch(entry, before, m, /*backward=*/false);
    before = &entry.back();
    Value seed = scaledSeed     ? scaledSeed
                 : inverseCount ? inverseCount
                                : buildSplat(builder, loc, lossElement,
                                             1.0 / static_cast<double>(count));
    if (failed(reverse.backward(builder, clones, loss, seed)))
      return failure();
    tagMicroBatch(entry, before, m, /*backward=*/true);
  }

  // 1. The old step's parameter gradients, read off its tail, and their
  // parts, mapped to the accumulated ones (here, after step 4: reverse mode
  // tells how many parts each gradient has). The tail starts after the last
  // op that defines a part.
  IRMapping tailMapping;
  Operation *lastPart = lossOp;
  SmallVector<Operation *> partSums;
  for (auto [k, param] : llvm::enumerate(params)) {
    const std::map<int64_t, Value> &parts = reverse.getParamParts(param);
    if (parts.empty())
      continue;
    Value grad;
    for (Operation *user : param.getUsers())
      if (isOptimizerUpdate(user) && user->getOperand(0) == param &&
          user->getBlock() == &entry && user->isBeforeInBlock(ret))
        grad = user->getOperand(1);
    if (!grad && ret.getNumOperands() > k + 1 && ret.getOperand(k + 1) != param)
      grad = ret.getOperand(k + 1); // optimizer=none: `<param>.grad`.
    if (!grad)
      return fail("found no update of parameter #" + Twine(k) +
                  ", which has a gradient");
    if (auto clip = grad.getDefiningOp<MulOp>();
        clip && isClipFactor(clip->getOperand(1)))
      grad = clip->getOperand(0);
    // Under loss scaling, the sum of the parts is unscaled before it is
    // counted and clipped; the tail keeps the unscale.
    if (lossScale) {
      auto unscale = grad.getDefiningOp<MulOp>();
      if (!unscale || !isUnscaleFactor(unscale->getOperand(1), lossScale))
        return fail("the gradient of parameter #" + Twine(k) +
                    " of the loss-scaled step is not unscaled by 1 / "
                    "loss_scale");
      grad = unscale->getOperand(0);
    }
    // Its parts were summed in id order: ((p0 + p1) + p2) ...
    SmallVector<Value> oldParts;
    for (size_t i = 1; i < parts.size(); ++i) {
      auto sum = grad.getDefiningOp<AddOp>();
      if (!sum)
        return fail("the gradient of parameter #" + Twine(k) +
                    " is not the sum of its " + Twine(parts.size()) + " parts");
      partSums.push_back(sum);
      oldParts.push_back(sum->getOperand(1));
      grad = sum->getOperand(0);
    }
    oldParts.push_back(grad);
    for (auto [oldPart, part] :
         llvm::zip(llvm::reverse(oldParts), llvm::make_second_range(parts))) {
      if (Value mapped = tailMapping.lookupOrNull(oldPart);
          mapped && mapped != part)
        return fail("two parameters share a gradient part");
      tailMapping.map(oldPart, part);
      if (Operation *def = oldPart.getDefiningOp();
          def && def->getBlock() == &entry && lastPart->isBeforeInBlock(def))
        lastPart = def;
    }
  }
  for (Operation *sum : partSums)
    if (!lastPart->isBeforeInBlock(sum))
      return fail("the sums of the parameters' gradient parts do not follow "
                  "the backward");

  // 5. The loss (summed and divided by the count, or the mean of the
  // micro-batches' losses).
  Value loss = losses.front();
  for (Value other : llvm::drop_begin(losses))
    loss = tagged(AddOp::create(builder, loc, loss, other), lossId);
  if (inverseCount)
    loss = tagged(MulOp::create(builder, loc, loss, inverseCount), lossId);
  else
    loss =
        tagged(ScaleOp::create(builder, loc, loss, llvm::APFloat(1.0 / count)),
               lossId);
  tailMapping.map(oldLoss, loss);

  // 6. The tail, on the new loss and parts; then the old ops go.
  auto tailBegin = std::next(lastPart->getIterator());
  llvm::DenseSet<Operation *> tail;
  for (Operation &op :
       llvm::make_range(tailBegin, std::next(ret->getIterator())))
    tail.insert(&op);
  for (Operation &op :
       llvm::make_range(tailBegin, std::next(ret->getIterator()))) {
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && !tail.contains(def) && !tailMapping.contains(operand))
        return op.emitOpError("reads a value of the forward or backward that "
                              "is neither the loss nor a gradient part: "
                              "@train_step is not the step loom-autodiff "
                              "built");
    }
    builder.clone(op, tailMapping);
  }
  SmallVector<Operation *> oldOps;
  for (Operation &op :
       llvm::make_range(entry.begin(), std::next(ret->getIterator())))
    oldOps.push_back(&op);
  for (Operation *op : llvm::reverse(oldOps))
    op->erase();
  [[maybe_unused]] int64_t erased = 0;
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(entry)))
    if (isOpTriviallyDead(&op)) {
      op.erase();
      ++erased;
    }

  mlir::emitRemark(loc, "split @train_step into ")
      << count << " micro-batches along dim 0 of " << batchArgs.size()
      << " batch argument(s), "
      << (inverseCount ? "the mean cross-entropy normalized by the labelled "
                         "positions of the whole batch"
                       : "the loss averaged over the micro-batches")
      << (lossScale ? ", each backward seeded with loss_scale times it"
                    : "");
  LLVM_DEBUG(llvm::dbgs() << "loom-slice-micro-batches: erased " << erased
                          << " dead ops\n");
  return success();
}

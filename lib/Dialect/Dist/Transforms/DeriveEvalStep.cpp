//===- DeriveEvalStep.cpp - dist-derive-eval-step -------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Evaluation (the trainer's `--eval-data`) runs the forward of the model the
// training step partitions, with the same layouts, so that the state the
// trainer holds feeds it as it is. Rather than partitioning `@forward` a
// second time (another search, other layouts, another pipeline schedule),
// the evaluation step is cut out of the partitioned training step, whose
// loss the forward alone computes:
//
//   1. clone `@train_step` as `@eval_step` and make it return the `loss`
//      result only (its `loom.name`, `dist.layout` and `dist.stage` kept);
//   2. replace each forward `loom.dropout` (one without `loom.backward`) by
//      its input: evaluation draws no masks;
//   3. mark live what the loss reads, transitively; a live `dist.recv`
//      makes its `dist.send` live (paired by axis, sending stage, receiving
//      stage and tag, the k-th send of a key with the k-th receive), until
//      nothing changes;
//   4. erase every other op, last first.
//
// The result keeps the training step's argument list (the trainer passes
// the same buffers) and its op order, so every stage receives in the order
// its peers send, as in training. The backward, the updates, the clipping
// and the step counter are dead and go. A receive that cannot be paired
// (counts of a key differ) leaves the module without `@eval_step` and says
// why in a remark; the trainer then refuses `--eval-data` by name.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/Passes.h"

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Dist/IR/DistOps.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <tuple>

namespace mlir::loom::dist {
#define GEN_PASS_DEF_DERIVEEVALSTEPPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

namespace {

struct DeriveEvalStepPass
    : public dist::impl::DeriveEvalStepPassBase<DeriveEvalStepPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// The stage an op runs on, or -1 when it runs on every stage.
int64_t stageOf(Operation *op) {
  auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName);
  return stage ? stage.getInt() : -1;
}

/// What pairs a send with a receive: the axis, the sender's stage (its
/// coordinate on the axis when staged), the receiver's, and the tag.
using MessageKey = std::tuple<std::string, int64_t, int64_t, int64_t>;

MessageKey keyOf(SendOp send) {
  return {send.getAxis().str(), stageOf(send), send.getTo(), send.getTag()};
}

MessageKey keyOf(RecvOp recv) {
  return {recv.getAxis().str(), recv.getFrom(), stageOf(recv), recv.getTag()};
}

/// Pairs every receive of `block` with its send; fails when a key has as
/// many sends as receives nowhere.
FailureOr<DenseMap<Operation *, Operation *>> pairMessages(Block &block,
                                                           std::string &why) {
  std::map<MessageKey, SmallVector<Operation *>> sends, recvs;
  for (Operation &op : block) {
    if (auto send = dyn_cast<SendOp>(op))
      sends[keyOf(send)].push_back(&op);
    else if (auto recv = dyn_cast<RecvOp>(op))
      recvs[keyOf(recv)].push_back(&op);
  }
  DenseMap<Operation *, Operation *> sendOf;
  for (auto &[key, received] : recvs) {
    auto it = sends.find(key);
    size_t sent = it == sends.end() ? 0 : it->second.size();
    if (sent != received.size()) {
      why = "the training step has " + std::to_string(received.size()) +
            " receive(s) but " + std::to_string(sent) + " send(s) on axis `" +
            std::get<0>(key) + "` from " + std::to_string(std::get<1>(key)) +
            " to " + std::to_string(std::get<2>(key)) + " with tag " +
            std::to_string(std::get<3>(key));
      return failure();
    }
    for (size_t k = 0; k < received.size(); ++k)
      sendOf[received[k]] = it->second[k];
  }
  return sendOf;
}

} // namespace

void DeriveEvalStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto train = module.lookupSymbol<func::FuncOp>(trainEntry);
  if (!train || train.isExternal())
    return;
  if (module.lookupSymbol(evalEntry)) {
    module.emitError() << "the module already has a symbol @" << evalEntry
                       << "; dist-derive-eval-step would add it";
    return signalPassFailure();
  }
  std::optional<unsigned> lossIndex;
  for (unsigned i = 0; i < train.getNumResults(); ++i)
    if (auto name = train.getResultAttrOfType<StringAttr>(i, kNameAttrName))
      if (name.getValue() == "loss")
        lossIndex = i;
  if (!lossIndex || !train.getBody().hasOneBlock())
    return;

  // 1. The clone, returning the loss alone.
  OpBuilder builder(module.getContext());
  builder.setInsertionPointAfter(train);
  auto eval = cast<func::FuncOp>(builder.clone(*train));
  eval.setSymName(evalEntry);
  Block &block = eval.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  Value loss = ret.getOperand(*lossIndex);
  DictionaryAttr lossAttrs = train.getResultAttrDict(*lossIndex);
  builder.setInsertionPoint(ret);
  func::ReturnOp::create(builder, ret.getLoc(), ValueRange{loss});
  ret.erase();
  eval.setType(FunctionType::get(module.getContext(), eval.getArgumentTypes(),
                                 {loss.getType()}));
  eval.setAllResultAttrs(ArrayRef<DictionaryAttr>{lossAttrs});

  // 2. No dropout in evaluation.
  SmallVector<DropoutOp> dropouts;
  for (Operation &op : block)
    if (auto dropout = dyn_cast<DropoutOp>(op))
      if (!op.hasAttr(kBackwardAttrName))
        dropouts.push_back(dropout);
  for (DropoutOp dropout : dropouts) {
    dropout.getResult().replaceAllUsesWith(dropout.getInput());
    dropout.erase();
  }

  // 3. What the loss reads, with the sends of the receives it reads.
  std::string why;
  FailureOr<DenseMap<Operation *, Operation *>> sendOf =
      pairMessages(block, why);
  if (failed(sendOf)) {
    eval.erase();
    train.emitRemark() << "no @" << evalEntry
                       << ": a receive has no send to pair with (" << why
                       << ")";
    return;
  }
  DenseSet<Operation *> live;
  SmallVector<Operation *> worklist;
  auto markLive = [&](Operation *op) {
    if (op && live.insert(op).second)
      worklist.push_back(op);
  };
  markLive(block.getTerminator());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands())
      markLive(operand.getDefiningOp());
    if (isa<RecvOp>(op))
      markLive(sendOf->lookup(op));
  }

  // 4. Everything else goes, users before their operands.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (!live.contains(&op))
      op.erase();
}

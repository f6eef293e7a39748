//===- Recompute.cpp - Full per-layer activation recomputation ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Trades compute for memory in `@train_step` as Megatron's full recompute
// does: a chosen transformer layer keeps only what it reads from outside
// (the residual stream entering it, parameters, masks) across the forward,
// and runs its forward again right before its backward.
//
//   1. the forward ops are the ancestors of the returned `loss`; each
//      maximal run of them in program order is one micro-batch's forward;
//   2. walk the forward ops in order: one that reads a parameter whose name
//      has a numeric component starts or continues that layer (the name up
//      to the number is its key, the number its index); one that reads any
//      other parameter ends it; the others join the current layer;
//   3. per chosen layer and micro-batch: the internal values are the
//      layer's results that no forward op outside it reads; clone the
//      layer's ops in order right before the first non-forward op that
//      reads an internal value, redirect every non-forward use of an
//      internal value to its clone, and erase the clones nothing uses.
//
// The values the layer hands to later forward ops are not redirected: the
// next layer's input must stay alive anyway (for the next layer's own
// recompute or backward). Clones keep their attributes, a dropout's seed
// included, and dropout draws its mask from (seed, global element index),
// so the recomputed values are bit for bit the originals.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/IR/DistAttrs.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/Transforms/LayerNames.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#include <map>
#include <set>

using ::mlir::loom::kBackwardAttrName;
using ::mlir::loom::kMicroBatchAttrName;
using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;
using ::mlir::loom::kPlanAttrName;
using ::mlir::loom::kRecomputeAttrName;

#define DEBUG_TYPE "loom-recompute"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_RECOMPUTEPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

/// One layer of one micro-batch: its forward ops in program order.
struct LayerInstance {
  LayerName name;
  int64_t microBatch;
  SmallVector<Operation *> ops;
};

struct RecomputePass
    : public mlir::loom::impl::RecomputePassBase<RecomputePass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Parses `layers` (errors on `entry`); nullopt selects all.
  LogicalResult parseLayers(func::FuncOp entry,
                            std::optional<std::set<int64_t>> &chosen);
  /// Step 3 for one layer; returns the number of clones kept.
  int64_t recompute(const LayerInstance &layer,
                    const llvm::DenseSet<Operation *> &forward,
                    Operation *terminator);
};

LogicalResult
RecomputePass::parseLayers(func::FuncOp entry,
                           std::optional<std::set<int64_t>> &chosen) {
  StringRef text = StringRef(layers).trim();
  // `plan` reaches here only when the search chose to recompute.
  if (text == "all" || text == "plan") {
    chosen.reset();
    return success();
  }
  chosen.emplace();
  if (text == "none")
    return success();
  SmallVector<StringRef> items;
  text.split(items, ',');
  for (StringRef item : items) {
    int64_t index;
    if (item.trim().getAsInteger(10, index) || index < 0) {
      entry.emitError("loom-recompute: layers: expected all, none, plan or a "
                      "comma list of layer indices, found '")
          << layers << "'";
      return failure();
    }
    chosen->insert(index);
  }
  return success();
}

int64_t RecomputePass::recompute(const LayerInstance &layer,
                                 const llvm::DenseSet<Operation *> &forward,
                                 Operation *terminator) {
  llvm::DenseSet<Operation *> inLayer(layer.ops.begin(), layer.ops.end());
  // The non-forward uses of internal values, which the clones will serve.
  SmallVector<OpOperand *> backwardUses;
  for (Operation *op : layer.ops) {
    for (Value result : op->getResults()) {
      bool internal = llvm::all_of(result.getUsers(), [&](Operation *user) {
        return !forward.contains(user) || inLayer.contains(user);
      });
      if (!internal)
        continue;
      for (OpOperand &use : result.getUses())
        if (use.getOwner() != terminator && !forward.contains(use.getOwner()))
          backwardUses.push_back(&use);
    }
  }
  if (backwardUses.empty())
    return 0;
  Operation *insertion = backwardUses.front()->getOwner();
  for (OpOperand *use : backwardUses)
    if (use->getOwner()->isBeforeInBlock(insertion))
      insertion = use->getOwner();
  // What the layer reads from outside is defined before the layer's ops,
  // all in one forward run; the insertion point reads a layer value and is
  // not a forward op, so it comes after that run: the clones' operands
  // exist there.
  OpBuilder builder(insertion);
  IRMapping mapping;
  SmallVector<Operation *> clones;
  for (Operation *op : layer.ops) {
    Operation *clone = builder.clone(*op, mapping);
    clone->setAttr(kRecomputeAttrName, builder.getUnitAttr());
    // The clone runs as part of its micro-batch's backward (it sits right
    // before it), which is where a pipeline schedule must place it.
    if (clone->hasAttr(kMicroBatchAttrName))
      clone->setAttr(kBackwardAttrName, builder.getUnitAttr());
    clones.push_back(clone);
  }
  for (OpOperand *use : backwardUses)
    use->set(mapping.lookup(use->get()));
  int64_t kept = 0;
  for (Operation *clone : llvm::reverse(clones)) {
    if (isOpTriviallyDead(clone))
      clone->erase();
    else
      ++kept;
  }
  return kept;
}

/// Whether the strategy search chose to recompute (`dist.plan`).
static bool planRecomputes(ModuleOp module) {
  auto plan = module->getAttrOfType<dist::PlanAttr>(kPlanAttrName);
  return plan && plan.getRecompute();
}

void RecomputePass::runOnOperation() {
  ModuleOp module = getOperation();
  // `plan` follows the search: nothing to do without one that recomputes
  // (and then no step need exist: the partition pipeline runs on any
  // module).
  if (StringRef(layers).trim() == "plan" && !planRecomputes(module))
    return;
  auto entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (!entry || entry.isExternal() || !entry.getBody().hasOneBlock()) {
    module.emitError("loom-recompute: no function @")
        << entryName << " with one block";
    return signalPassFailure();
  }
  std::optional<std::set<int64_t>> chosen;
  if (failed(parseLayers(entry, chosen)))
    return signalPassFailure();
  if (chosen && chosen->empty())
    return;
  Block &block = entry.getBody().front();
  Operation *terminator = block.getTerminator();

  // 1. The forward ops: what the loss depends on.
  Value loss;
  for (unsigned r = 0; r < entry.getNumResults(); ++r)
    if (auto name = entry.getResultAttrOfType<StringAttr>(r, kNameAttrName))
      if (name.getValue() == "loss")
        loss = terminator->getOperand(r);
  if (!loss) {
    entry.emitError("loom-recompute: @")
        << entryName
        << " has no result named `loss` (the forward ops are those the "
           "loss depends on)";
    return signalPassFailure();
  }
  llvm::DenseSet<Operation *> forward;
  SmallVector<Operation *> worklist;
  if (Operation *def = loss.getDefiningOp())
    worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (op->getBlock() != &block || !forward.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }

  // 2. Layers, per micro-batch, in program order.
  std::vector<LayerInstance> instances;
  std::map<std::pair<int64_t, std::string>, size_t> instanceOf;
  int64_t microBatch = 0;
  bool inForward = false;
  std::optional<LayerName> current;
  for (Operation &op : block) {
    if (!forward.contains(&op)) {
      if (inForward) {
        ++microBatch;
        current.reset();
      }
      inForward = false;
      continue;
    }
    inForward = true;
    bool readsParam = false;
    std::optional<LayerName> layerOfParams;
    for (Value operand : op.getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != &block)
        continue;
      auto param =
          entry.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
      if (!param)
        continue;
      readsParam = true;
      if (!layerOfParams)
        layerOfParams = parseLayerName(param.getName());
    }
    if (readsParam)
      current = layerOfParams;
    if (!current)
      continue;
    auto [it, inserted] =
        instanceOf.try_emplace({microBatch, current->key}, instances.size());
    if (inserted)
      instances.push_back({*current, microBatch, {}});
    instances[it->second].ops.push_back(&op);
  }

  // A chosen index no layer has is a typo, not a no-op.
  if (chosen) {
    std::set<int64_t> found;
    for (const LayerInstance &layer : instances)
      found.insert(layer.name.index);
    for (int64_t index : *chosen)
      if (!found.count(index)) {
        entry.emitError("loom-recompute: layers: no layer ")
            << index << " (parameter names have layer indices "
            << (found.empty() ? std::string("none")
                              : std::to_string(*found.begin()) + ".." +
                                    std::to_string(*found.rbegin()))
            << ")";
        return signalPassFailure();
      }
  }

  // 3. Recompute the chosen ones.
  int64_t recomputed = 0;
  for (const LayerInstance &layer : instances) {
    if (chosen && !chosen->count(layer.name.index))
      continue;
    int64_t kept = recompute(layer, forward, terminator);
    LLVM_DEBUG(llvm::dbgs()
               << "loom-recompute: layer '" << layer.name.key
               << "' micro-batch " << layer.microBatch << ": " << kept << " of "
               << layer.ops.size() << " ops recomputed\n");
    if (kept == 0)
      continue;
    ++recomputed;
    mlir::emitRemark(layer.ops.front()->getLoc(), "recomputing layer '")
        << layer.name.key << "'"
        << (microBatch > 1
                ? " of micro-batch " + std::to_string(layer.microBatch)
                : std::string())
        << " before its backward: " << kept << " of " << layer.ops.size()
        << " forward ops cloned";
  }
  if (recomputed == 0)
    mlir::emitRemark(entry.getLoc(), "no chosen layer keeps values for "
                                     "backward; nothing recomputed");
}

} // namespace

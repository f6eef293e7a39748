//===- InterleaveCopies.cpp - Fine-grained multi-copy interleave ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// MindFormers' `fine_grain_interleave: N` (docs/Partitioning.md, "Multi-copy
// interleave") on `@forward`, before autodiff:
//
//   1. the batch size B is dim 0 of the `loom.input` arguments; the values a
//      `loom.input` argument with B rows in dim 0 reaches depend on the
//      batch (an input without them, a [S, S] mask, is shared);
//   2. classify the ops in order (loom-recompute's rule): reading a
//      parameter named with a numeric component makes a layer op, reading
//      another parameter a non-layer op, reading none keeps the previous
//      op's class; each maximal run of layer ops is a stack;
//   3. per stack, split each batch-dependent value it reads from before it
//      into N copies of strided rows (copy c holds rows c, c + N, ...):
//      reshape [B, ...] -> [B/N, N, ...], split dim 1, reshape back. Strided
//      rather than contiguous, because a batch split over data-parallel
//      ranks (B/N's major factor over dp) then splits each rank's own rows,
//      and the reshapes and the split need no communication;
//   4. clone the stack's ops in program order, each op that reads a per-copy
//      value N times in a row (copy 0, 1, ..., N-1; `loom.copy = c`; result
//      types re-derived by BatchSlices.h's rules, as micro-batches do), the
//      others once (a parameter's cast is shared by the copies);
//   5. join each per-copy value used after the stack (reshape to
//      [B/N, 1, ...], concat dim 1, reshape to [B, ...]); erase the old ops.
//
// Why the copies stay split across the whole stack rather than per layer:
// a join and a split per layer boundary would be 2 reshapes, a concat and a
// split of the residual stream per layer with nothing gained (the next
// layer's ops read the copies directly), and a pipeline boundary inside the
// stack sends the copies as they are.
//
// The backward follows from autodiff: reverse mode walks the interleaved
// forward backwards, so the VJPs interleave the same way, and a parameter
// read by the N copies' ops sums their N gradient parts.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/IR/LoomAttrs.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/BatchSlices.h"
#include "loom/Dialect/Loom/Transforms/LayerNames.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "loom-interleave-copies"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_INTERLEAVECOPIESPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

namespace {

struct InterleaveCopiesPass
    : public loom::impl::InterleaveCopiesPassBase<InterleaveCopiesPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Steps 3-5 for one stack of layer ops, in program order.
  /// `batchDependent` gains the joined values that replace the stack's.
  LogicalResult interleave(ArrayRef<Operation *> stack, int64_t batch,
                           llvm::DenseSet<Value> &batchDependent);
};

/// The layer class of an op by the parameters it reads: a layer (true), not
/// a layer (false), or no parameter read (nullopt).
std::optional<bool> readsLayerParams(Operation *op, func::FuncOp entry) {
  std::optional<bool> layer;
  for (Value operand : op->getOperands()) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || arg.getOwner() != &entry.getBody().front())
      continue;
    auto param =
        entry.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
    if (!param)
      continue;
    // A non-layer parameter ends the layer even when the op also reads a
    // layer's (none of the builders' ops does).
    if (!parseLayerName(param.getName()))
      return false;
    layer = true;
  }
  return layer;
}

} // namespace

void InterleaveCopiesPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (copies < 1 || batchShards < 1) {
    module.emitError("loom-interleave-copies: ")
        << (copies < 1 ? "copies" : "batch-shards") << " must be >= 1, found "
        << static_cast<int64_t>(copies < 1 ? copies : batchShards);
    return signalPassFailure();
  }
  if (copies == 1)
    return;
  auto entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (!entry || entry.isExternal()) {
    module.emitError("loom-interleave-copies: no function @")
        << entryName << " with a body";
    return signalPassFailure();
  }
  Block &body = entry.getBody().front();

  // 1. The batch: dim 0 of the data inputs, token ids first.
  int64_t batch = 0;
  llvm::DenseSet<Value> batchDependent;
  SmallVector<BlockArgument> inputs;
  for (BlockArgument arg : body.getArguments()) {
    auto role = entry.getArgAttrOfType<InputRoleAttr>(arg.getArgNumber(),
                                                      kInputAttrName);
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!role || !type || type.getRank() == 0)
      continue;
    inputs.push_back(arg);
    if (batch == 0 || role.getValue() == InputRole::InputIds)
      batch = type.getDimSize(0);
  }
  // An input without the batch in dim 0 (a [S, S] mask every row shares)
  // is read whole by every copy.
  for (BlockArgument arg : inputs)
    if (cast<RankedTensorType>(arg.getType()).getDimSize(0) == batch)
      batchDependent.insert(arg);
  if (batch == 0) {
    entry.emitError("loom-interleave-copies: ")
        << static_cast<int64_t>(copies)
        << " copies need a batch to split, and @" << entryName
        << " has no `loom.input` argument of rank >= 1";
    return signalPassFailure();
  }
  if (batch % batchShards != 0 || (batch / batchShards) % copies != 0) {
    // Reported where the batch enters the model (its first reader), which
    // names the input better than the function's signature does.
    Location where = entry.getLoc();
    for (Operation &op : body)
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return batchDependent.contains(v); })) {
        where = op.getLoc();
        break;
      }
    auto diag = mlir::emitError(where, "loom-interleave-copies: ");
    if (batch % batchShards != 0)
      diag << "the batch of " << batch << " rows does not split into "
           << static_cast<int64_t>(batchShards)
           << " per-rank micro-batches (micro-batches x data-parallel ranks)";
    else
      diag << static_cast<int64_t>(copies)
           << " copies (fine_grain_interleave) do not divide the "
           << "per-rank micro-batch of " << batch / batchShards
           << " rows (the batch's " << batch << " rows over "
           << static_cast<int64_t>(batchShards)
           << " = micro-batches x data-parallel ranks)";
    return signalPassFailure();
  }
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return batchDependent.contains(v); }))
      batchDependent.insert(op.result_begin(), op.result_end());

  // 2. The stacks: maximal runs of layer ops.
  SmallVector<SmallVector<Operation *>> stacks;
  bool inLayer = false;
  for (Operation &op : body.without_terminator()) {
    if (std::optional<bool> layer = readsLayerParams(&op, entry))
      inLayer = *layer;
    if (!inLayer)
      continue;
    if (stacks.empty() || stacks.back().back()->getNextNode() != &op)
      stacks.emplace_back();
    stacks.back().push_back(&op);
  }
  if (stacks.empty()) {
    entry.emitError("loom-interleave-copies: found no transformer layer to "
                    "interleave: no op of @")
        << entryName
        << " reads a parameter named with a layer number (such as "
           "`transformer.h.0.attn.c_attn.weight`)";
    return signalPassFailure();
  }
  int64_t layerOps = 0;
  for (ArrayRef<Operation *> stack : stacks) {
    layerOps += stack.size();
    if (failed(interleave(stack, batch, batchDependent)))
      return signalPassFailure();
  }
  mlir::emitRemark(entry.getLoc(), "interleaved ")
      << static_cast<int64_t>(copies) << " copies of the batch ("
      << batch / copies << " of its " << batch << " rows each) through "
      << stacks.size() << " stack(s) of transformer layers (" << layerOps
      << " ops)";
}

LogicalResult
InterleaveCopiesPass::interleave(ArrayRef<Operation *> stack, int64_t batch,
                                 llvm::DenseSet<Value> &batchDependent) {
  int64_t n = copies;
  llvm::DenseSet<Operation *> inStack(stack.begin(), stack.end());
  OpBuilder builder(stack.front());
  Builder b(builder.getContext());
  SmallVector<IRMapping> mappings(n);
  // The values each copy has its own of.
  llvm::DenseSet<Value> perCopy;

  // 3. Split what the stack reads of the batch from before it.
  llvm::SetVector<Value> inputs;
  for (Operation *op : stack)
    for (Value operand : op->getOperands())
      if (batchDependent.contains(operand) &&
          (!operand.getDefiningOp() ||
           !inStack.contains(operand.getDefiningOp())))
        inputs.insert(operand);
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() == 0 || type.getDimSize(0) != batch) {
      Operation *user = *llvm::find_if(
          input.getUsers(), [&](Operation *u) { return inStack.contains(u); });
      return user->emitOpError("cannot be split into ")
             << n << " copies of the batch: it reads a value of type " << type
             << " that depends on the batch (of " << batch
             << " rows) without holding it in dim 0";
    }
    Location loc = input.getLoc();
    SmallVector<int64_t> strided{batch / n, n};
    llvm::append_range(strided, type.getShape().drop_front());
    Value grouped = ReshapeOp::create(
        builder, loc, RankedTensorType::get(strided, type.getElementType()),
        input);
    auto split = SplitOp::create(builder, loc, grouped, /*axis=*/1,
                                 SmallVector<int64_t>(n, 1));
    SmallVector<int64_t> copyShape(type.getShape());
    copyShape[0] = batch / n;
    auto copyType = RankedTensorType::get(copyShape, type.getElementType());
    for (int64_t c = 0; c < n; ++c) {
      Value copy =
          ReshapeOp::create(builder, loc, copyType, split.getResult(c));
      copy.getDefiningOp()->setAttr(kCopyAttrName, b.getI64IntegerAttr(c));
      mappings[c].map(input, copy);
      perCopy.insert(copy);
    }
  }

  // 4. The stack's ops, op i of every copy before op i + 1 of any.
  for (Operation *op : stack) {
    bool ofCopies = llvm::any_of(op->getOperands(), [&](Value v) {
      return perCopy.contains(mappings[0].lookupOrDefault(v));
    });
    if (!ofCopies) {
      Operation *shared = builder.clone(*op, mappings[0]);
      for (int64_t c = 1; c < n; ++c)
        mappings[c].map(op->getResults(), shared->getResults());
      continue;
    }
    for (int64_t c = 0; c < n; ++c) {
      Operation *clone = builder.clone(*op, mappings[c]);
      clone->setAttr(kCopyAttrName, b.getI64IntegerAttr(c));
      if (auto slice = dyn_cast<SliceOp>(clone)) {
        // Copies hold strided rows: on the batch dim only a slice with
        // stride 1 keeps its meaning (every row of a copy, as of the
        // batch); rescaleBatchSlice refuses the others.
        auto original = cast<SliceOp>(op);
        bool onBatch =
            cast<RankedTensorType>(original.getInput().getType())
                .getDimSize(0) !=
            cast<RankedTensorType>(slice.getInput().getType()).getDimSize(0);
        if (onBatch && slice.getStrides()[0] != 1)
          return op->emitOpError("cannot split this slice into ")
                 << n << " copies of the batch: it takes every "
                 << slice.getStrides()[0] << "-th row, and a copy holds "
                 << "every " << n << "-th";
        if (failed(rescaleBatchSlice(original, slice, "copies", "copy")))
          return failure();
      }
      if (failed(retypeForBatchSlice(clone, "copies")))
        return failure();
      perCopy.insert(clone->result_begin(), clone->result_end());
    }
  }

  // 5. Join what is used after the stack, and drop the old ops.
  for (Operation *op : stack) {
    for (Value result : op->getResults()) {
      bool usedAfter = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return !inStack.contains(user);
      });
      if (!usedAfter)
        continue;
      Value first = mappings[0].lookup(result);
      if (!perCopy.contains(first)) {
        result.replaceUsesWithIf(first, [&](OpOperand &use) {
          return !inStack.contains(use.getOwner());
        });
        continue;
      }
      auto type = cast<RankedTensorType>(result.getType());
      auto copyType = cast<RankedTensorType>(first.getType());
      if (type.getRank() == 0 || type.getDimSize(0) != batch ||
          copyType.getDimSize(0) != batch / n)
        return op->emitOpError("cannot join ")
               << n << " copies of the batch after the layers: its result "
               << "of type " << type << " is used after them without "
               << "holding the batch (of " << batch << " rows) in dim 0";
      Location loc = result.getLoc();
      SmallVector<int64_t> strided{batch / n, 1};
      llvm::append_range(strided, type.getShape().drop_front());
      auto pieceType = RankedTensorType::get(strided, type.getElementType());
      SmallVector<Value> pieces;
      for (int64_t c = 0; c < n; ++c)
        pieces.push_back(ReshapeOp::create(builder, loc, pieceType,
                                           mappings[c].lookup(result)));
      Value joined = ConcatOp::create(builder, loc, pieces, /*axis=*/1);
      Value whole = ReshapeOp::create(builder, loc, type, joined);
      // A later stack (a decoder reading the encoder's output) splits it
      // again.
      batchDependent.insert(whole);
      result.replaceUsesWithIf(whole, [&](OpOperand &use) {
        return !inStack.contains(use.getOwner());
      });
    }
  }
  for (Operation *op : llvm::reverse(stack)) {
    if (!op->use_empty())
      return op->emitOpError("is still used after its copies replaced it");
    op->erase();
  }
  return success();
}

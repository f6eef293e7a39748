//===- PartitionLoss.cpp - Partitioning the cross-entropy loss ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites loom.cross_entropy and loom.cross_entropy_grad, whose position
// and vocabulary factors are op-partitioned, into local ops and collectives
// (docs/Partitioning.md, "Loss and embedding"), plus the helpers the
// embedding rewrites share. Let Ap be the mesh axes of the position factors
// and Av those of the vocabulary factor:
//
//   1. Check the operands are the blocks the strategy's layouts say.
//   2. Av non-empty (vocab-parallel softmax): the row max is all-reduced
//      (max) over Av, the row sum of exp(x - max) all-reduced (sum) over Av,
//      and z = x - max - log(sum) are the rank's columns of the global
//      log-probabilities; the rank's first column comes from dist.axis_index.
//      The local forms of the ops take z and that offset.
//   3. Forward: with Ap empty, the local mean (only the rank holding a
//      label adds its loss) is all-reduced over Av. With Ap non-empty, the
//      local sum is all-reduced over Av + Ap, the label count over Ap, and
//      the loss is their quotient: exact on every rank, whatever the number
//      of labelled positions in each block.
//   4. Gradient: with Ap non-empty, dloss is divided by the all-reduced
//      label count and the summed local form used; the one-hot is
//      subtracted in the rank's columns only.
//   5. The summed (global) forms: positions are reduction factors there, so
//      the result stays partial over Ap, as the layouts say.
//
//===----------------------------------------------------------------------===//

#include "PartitionLossOps.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

Layout::AxisList mlir::loom::dist::getFactorsAxes(
    const OpPartitionContext &context, ArrayRef<int64_t> factors) {
  Layout::AxisList axes;
  for (const Mesh::Axis &axis : context.mesh.getAxes())
    for (int64_t factor : factors)
      if (llvm::is_contained(context.factorAxes[factor], axis.name))
        axes.push_back(axis.name);
  return axes;
}

Value mlir::loom::dist::buildBlockOffset(OpBuilder &builder, Location loc,
                                         const OpPartitionContext &context,
                                         const Layout::AxisList &axes,
                                         int64_t blockSize) {
  FlatSymbolRefAttr meshName = getMeshRef(context);
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  if (axes.empty())
    return constant(0);
  // Mixed radix, major axis first: ((i0 * n1 + i1) * n2 + i2) ...
  Value index;
  for (const std::string &axis : axes) {
    Value coordinate = AxisIndexOp::create(builder, loc, builder.getIndexType(),
                                           meshName,
                                           builder.getStringAttr(axis));
    if (!index) {
      index = coordinate;
      continue;
    }
    int64_t size = context.mesh.getGroupSize({axis});
    index = arith::MulIOp::create(builder, loc, index, constant(size));
    index = arith::AddIOp::create(builder, loc, index, coordinate);
  }
  if (blockSize == 1)
    return index;
  return arith::MulIOp::create(builder, loc, index, constant(blockSize));
}

Value mlir::loom::dist::buildAllReduce(OpBuilder &builder, Location loc,
                                       const OpPartitionContext &context,
                                       ReductionKind kind, Value value,
                                       const Layout::AxisList &axes) {
  if (axes.empty())
    return value;
  SmallVector<StringRef> names(axes.begin(), axes.end());
  return AllReduceOp::create(
      builder, loc, value.getType(),
      ReductionKindAttr::get(builder.getContext(), kind), value,
      getMeshRef(context),
      builder.getStrArrayAttr(names));
}

LogicalResult
mlir::loom::dist::checkLocalOperands(Operation *op,
                                     const OpPartitionContext &context) {
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    if (index >= context.globalOperandTypes.size())
      break;
    RankedTensorType global = context.globalOperandTypes[index];
    std::vector<int64_t> globalShape(global.getShape().begin(),
                                     global.getShape().end());
    auto expected = context.layouts.operands[index].getLocalShape(
        context.mesh, globalShape);
    if (!expected)
      return op->emitOpError("operand ")
             << index << ": " << expected.error();
    auto local = dyn_cast<RankedTensorType>(operand.getType());
    if (!local || local.getShape() != ArrayRef<int64_t>(*expected))
      return op->emitOpError("operand ")
             << index << " should be the local block of shape ["
             << llvm::make_range(expected->begin(), expected->end())
             << "] of " << global << ", got " << operand.getType();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

namespace {
/// What both cross-entropy rewrites derive from the strategy.
struct LossSplit {
  /// Axes of the position factors (Ap, mesh order) and of the vocabulary
  /// dim (Av, major first).
  Layout::AxisList positionAxes, vocabAxes;
  /// Columns of the local logits.
  int64_t localVocab = 0;
};
} // namespace

/// Steps 1 and 2's analysis: the split of an op whose operand 0 is the
/// logits [N..., V].
static FailureOr<LossSplit>
analyzeLossSplit(Operation *op, Value offset,
                 const OpPartitionContext &context) {
  if (offset)
    return op->emitOpError("is already in its local form (it has an offset) "
                           "and cannot be partitioned again");
  if (failed(checkLocalOperands(op, context)))
    return failure();
  auto logitsType = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t rank = logitsType.getRank();
  SmallVector<int64_t> positionFactors;
  for (int64_t d = 0; d < rank - 1; ++d)
    llvm::append_range(positionFactors,
                       context.rule.getOperandDimFactors(0, d));
  LossSplit split;
  split.positionAxes = getFactorsAxes(context, positionFactors);
  // The class dim's axes in layout order (major first), which the block
  // offset follows.
  split.vocabAxes = context.layouts.operands[0].getDimAxes(rank - 1);
  split.localVocab = logitsType.getShape().back();
  return split;
}

/// Step 2: this rank's columns of the global log-probabilities of `logits`
/// (local [N..., V/|Av|]): logits - max - log(sum(exp(logits - max))), with
/// the row max and the row sum all-reduced over the vocabulary axes.
static Value buildLogProbabilities(OpBuilder &builder, Location loc,
                                   const OpPartitionContext &context,
                                   Value logits,
                                   const Layout::AxisList &vocabAxes) {
  auto type = cast<RankedTensorType>(logits.getType());
  SmallVector<int64_t> rowShape(type.getShape());
  rowShape.back() = 1;
  auto rowType = RankedTensorType::get(rowShape, type.getElementType());
  auto lastAxis = builder.getDenseI64ArrayAttr({type.getRank() - 1});

  Value localMax = ReduceMaxOp::create(builder, loc, rowType, logits, lastAxis,
                                       builder.getUnitAttr());
  Value rowMax = buildAllReduce(builder, loc, context, ReductionKind::Max,
                                localMax, vocabAxes);
  Value shifted = SubOp::create(builder, loc, logits, rowMax);
  Value exps = ExpOp::create(builder, loc, shifted);
  Value localSum = ReduceSumOp::create(builder, loc, rowType, exps, lastAxis,
                                       builder.getUnitAttr());
  Value rowSum = buildAllReduce(builder, loc, context, ReductionKind::Sum,
                                localSum, vocabAxes);
  Value logSum = LogOp::create(builder, loc, rowSum);
  return SubOp::create(builder, loc, shifted, logSum);
}

/// The global count of labelled positions: the local count all-reduced over
/// the position axes.
static Value buildGlobalCount(OpBuilder &builder, Location loc,
                              const OpPartitionContext &context, Value labels,
                              IntegerAttr ignoreIndex, Type elementType,
                              const Layout::AxisList &positionAxes) {
  Value count = LabelCountOp::create(builder, loc,
                                     RankedTensorType::get({}, elementType),
                                     labels, ignoreIndex);
  return buildAllReduce(builder, loc, context, ReductionKind::Sum, count,
                        positionAxes);
}

/// The union of two axis lists, in mesh order.
static Layout::AxisList unionAxes(const Mesh &mesh, const Layout::AxisList &a,
                                  const Layout::AxisList &b) {
  Layout::AxisList result;
  for (const Mesh::Axis &axis : mesh.getAxes())
    if (llvm::is_contained(a, axis.name) || llvm::is_contained(b, axis.name))
      result.push_back(axis.name);
  return result;
}

LogicalResult
mlir::loom::dist::partitionCrossEntropy(Operation *op,
                                        const OpPartitionContext &context,
                                        OpBuilder &builder) {
  auto ce = dyn_cast<CrossEntropyOp>(op);
  if (!ce)
    return op->emitOpError("is not loom.cross_entropy");
  FailureOr<LossSplit> split = analyzeLossSplit(op, ce.getOffset(), context);
  if (failed(split))
    return failure();
  Location loc = op->getLoc();
  Value logits = ce.getLogits(), labels = ce.getLabels();
  Type elementType = ce.getResult().getType().getElementType();
  bool vocabSplit = !split->vocabAxes.empty();
  bool positionSplit = !split->positionAxes.empty();

  // Step 2.
  Value offset;
  if (vocabSplit) {
    logits = buildLogProbabilities(builder, loc, context, logits,
                                   split->vocabAxes);
    offset = buildBlockOffset(builder, loc, context, split->vocabAxes,
                              split->localVocab);
  }

  Value loss;
  if (ce.getSum()) {
    // Step 5: the sum over the rank's positions, still partial over Ap.
    Value part = CrossEntropyOp::create(builder, loc, logits, labels, offset,
                                        ce.getIgnoreIndexAttr(),
                                        builder.getUnitAttr());
    loss = buildAllReduce(builder, loc, context, ReductionKind::Sum, part,
                          split->vocabAxes);
  } else if (!positionSplit) {
    // Step 3, vocab only: every rank counts every label, so the local means
    // of the ranks add up to the mean.
    Value part = CrossEntropyOp::create(builder, loc, logits, labels, offset,
                                        ce.getIgnoreIndexAttr(), UnitAttr());
    loss = buildAllReduce(builder, loc, context, ReductionKind::Sum, part,
                          split->vocabAxes);
  } else {
    // Step 3, positions split: sum and count separately, divide once.
    Value part = CrossEntropyOp::create(builder, loc, logits, labels, offset,
                                        ce.getIgnoreIndexAttr(),
                                        builder.getUnitAttr());
    Value total = buildAllReduce(
        builder, loc, context, ReductionKind::Sum, part,
        unionAxes(context.mesh, split->vocabAxes, split->positionAxes));
    Value count = buildGlobalCount(builder, loc, context, labels,
                                   ce.getIgnoreIndexAttr(), elementType,
                                   split->positionAxes);
    loss = DivOp::create(builder, loc, total, count);
  }
  op->getResult(0).replaceAllUsesWith(loss);
  op->erase();
  return success();
}

LogicalResult
mlir::loom::dist::partitionCrossEntropyGrad(Operation *op,
                                            const OpPartitionContext &context,
                                            OpBuilder &builder) {
  auto grad = dyn_cast<CrossEntropyGradOp>(op);
  if (!grad)
    return op->emitOpError("is not loom.cross_entropy_grad");
  FailureOr<LossSplit> split = analyzeLossSplit(op, grad.getOffset(), context);
  if (failed(split))
    return failure();
  Location loc = op->getLoc();
  Value logits = grad.getLogits(), labels = grad.getLabels();
  Value dloss = grad.getDloss();
  Type elementType = cast<RankedTensorType>(dloss.getType()).getElementType();

  // Step 2.
  Value offset;
  if (!split->vocabAxes.empty()) {
    logits = buildLogProbabilities(builder, loc, context, logits,
                                   split->vocabAxes);
    offset = buildBlockOffset(builder, loc, context, split->vocabAxes,
                              split->localVocab);
  }

  // Step 4: a block of positions scales by the global count, not its own.
  bool sum = grad.getSum();
  if (!sum && !split->positionAxes.empty()) {
    Value count = buildGlobalCount(builder, loc, context, labels,
                                   grad.getIgnoreIndexAttr(), elementType,
                                   split->positionAxes);
    dloss = DivOp::create(builder, loc, dloss, count);
    sum = true;
  }
  Value dlogits = CrossEntropyGradOp::create(
      builder, loc, logits, labels, dloss, offset, grad.getIgnoreIndexAttr(),
      sum ? builder.getUnitAttr() : UnitAttr());
  op->getResult(0).replaceAllUsesWith(dlogits);
  op->erase();
  return success();
}

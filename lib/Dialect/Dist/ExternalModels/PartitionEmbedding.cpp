//===- PartitionEmbedding.cpp - Partitioning the embedding ops ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites loom.embedding and loom.embedding_grad, whose vocabulary factor
// is globally indexed (docs/Partitioning.md, "Loss and embedding"). Let Av
// be the mesh axes of the vocabulary factor:
//
//   1. Check the operands are the blocks the strategy's layouts say.
//   2. Av empty: the op runs on its blocks as it is (ids, positions and the
//      hidden dim split alike), with local types.
//   3. Av non-empty: the rank holds the table rows [offset, offset + V/|Av|)
//      with offset = (mixed-radix dist.axis_index over Av) * V/|Av|. The
//      lookup's local form reads the ids in that range and writes zeros for
//      the others, so its result is a partial sum over Av (the layout the
//      Reduction factor gives it); the gradient's local form scatters only
//      those ids, into a table block of V/|Av| rows.
//
//===----------------------------------------------------------------------===//

#include "PartitionLossOps.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::dist;

/// Step 1, then the vocabulary axes: those of the table rows in `layout`
/// (the table's or the table gradient's), major first as the block offset
/// needs them.
static FailureOr<Layout::AxisList>
analyzeVocabSplit(Operation *op, Value offset,
                  const OpPartitionContext &context, const Layout &layout) {
  if (offset)
    return op->emitOpError("is already in its local form (it has an offset) "
                           "and cannot be partitioned again");
  if (failed(checkLocalOperands(op, context)))
    return failure();
  return layout.getDimAxes(0);
}

LogicalResult
mlir::loom::dist::partitionEmbedding(Operation *op,
                                     const OpPartitionContext &context,
                                     OpBuilder &builder) {
  auto embedding = dyn_cast<EmbeddingOp>(op);
  if (!embedding)
    return op->emitOpError("is not loom.embedding");
  FailureOr<Layout::AxisList> vocabAxes =
      analyzeVocabSplit(op, embedding.getOffset(), context,
                        context.layouts.operands[0]);
  if (failed(vocabAxes))
    return failure();
  Location loc = op->getLoc();
  Value table = embedding.getTable();
  Value offset;
  if (!vocabAxes->empty()) {
    // Step 3.
    int64_t localRows = cast<RankedTensorType>(table.getType()).getDimSize(0);
    offset = buildBlockOffset(builder, loc, context, *vocabAxes, localRows);
  }
  Value result =
      EmbeddingOp::create(builder, loc, table, embedding.getIds(), offset);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

LogicalResult
mlir::loom::dist::partitionEmbeddingGrad(Operation *op,
                                         const OpPartitionContext &context,
                                         OpBuilder &builder) {
  auto grad = dyn_cast<EmbeddingGradOp>(op);
  if (!grad)
    return op->emitOpError("is not loom.embedding_grad");
  FailureOr<Layout::AxisList> vocabAxes =
      analyzeVocabSplit(op, grad.getOffset(), context,
                        context.layouts.results[0]);
  if (failed(vocabAxes))
    return failure();
  Location loc = op->getLoc();
  // The rank's rows of the table gradient.
  int64_t vocab = grad.getVocabSize();
  int64_t blocks = context.mesh.getGroupSize(*vocabAxes);
  if (vocab % blocks != 0)
    return op->emitOpError("vocab factor of size ")
           << vocab << " is not divisible by its mesh axes ["
           << llvm::make_range(vocabAxes->begin(), vocabAxes->end())
           << "] (" << blocks << " blocks)";
  int64_t localRows = vocab / blocks;
  Value offset;
  if (!vocabAxes->empty())
    offset = buildBlockOffset(builder, loc, context, *vocabAxes, localRows);
  Value result =
      EmbeddingGradOp::create(builder, loc, grad.getDy(), grad.getIds(),
                              offset, static_cast<uint64_t>(localRows));
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

//===- Embedding.cpp - loom embedding ops ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the embedding lookup and its gradient, in the house order:
// verify, infer, sharding rule, cost. The vocabulary factor of both is
// globally indexed: a device owning a block of table rows handles only the
// ids in its block (see the op descriptions for what the results then hold),
// which the local form's `offset` operand locates.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto tableType = dyn_cast<RankedTensorType>(adaptor.getTable().getType());
  auto idsType = dyn_cast<RankedTensorType>(adaptor.getIds().getType());
  if (!tableType || !idsType)
    return emitOptionalError(location, "expects ranked tensor operands");

  // C1.
  if (tableType.getRank() != 2)
    return emitOptionalError(
        location, "expects a table of rank 2 [vocab, hidden], got ", tableType);

  SmallVector<int64_t> shape(idsType.getShape());
  shape.push_back(tableType.getDimSize(1));
  inferred.push_back(RankedTensorType::get(shape, tableType.getElementType()));
  return success();
}

OpShardingRule EmbeddingOp::getShardingRule() {
  using Builder = OpShardingRuleBuilder;
  ArrayRef<int64_t> table = getTable().getType().getShape();
  ArrayRef<int64_t> ids = getIds().getType().getShape();
  int64_t rank = ids.size();
  Builder builder(getOperation()->getOperandTypes(),
                  getOperation()->getResultTypes());
  // Operands: table, ids and (in the local form) the scalar offset, which
  // no factor occupies.
  auto operandDims = [&](int64_t tableDim, int64_t idsDim) {
    SmallVector<int64_t> dims(getNumOperands(), Builder::kNoDim);
    dims[0] = tableDim;
    dims[1] = idsDim;
    return dims;
  };
  // Each id's row lands at the id's position.
  for (int64_t d = 0; d < rank; ++d)
    builder.addFactor(operandDims(Builder::kNoDim, d), {d}, ids[d]);
  builder.addFactor(operandDims(1, Builder::kNoDim), {rank}, table[1]);
  // Vocab-parallel: a device looks up only the ids among its rows (so it
  // needs its global row range) and writes zeros for the rest, so the result
  // is a partial sum over the vocab axes.
  builder.addFactor(operandDims(0, Builder::kNoDim), {Builder::kNoDim},
                    table[0], FactorKind::Reduction, /*globalIndexed=*/true);
  return builder.build();
}

OpCost EmbeddingOp::getCost(const OpShapes &shapes) {
  // A gather: it reads the ids and one table row per id (not the whole
  // table, which may be far larger than the batch) and writes the result.
  // Under a vocab split the ids outside a device's rows read nothing; the
  // cost keeps the whole gather, as the ids' spread is unknown.
  int64_t elementBytes = getElementBytes(getTable().getType());
  int64_t resultBytes = getNumElements(shapes.results[0]) * elementBytes;
  OpCost cost;
  cost.opClass = OpClass::DataMovement;
  cost.bytesRead =
      getNumElements(shapes.operands[1]) * getElementBytes(getIds().getType()) +
      resultBytes;
  cost.bytesWritten = resultBytes;
  cost.outputBytes = resultBytes;
  return cost;
}

//===----------------------------------------------------------------------===//
// EmbeddingGradOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  auto dyType = dyn_cast<RankedTensorType>(adaptor.getDy().getType());
  auto idsType = dyn_cast<RankedTensorType>(adaptor.getIds().getType());
  if (!dyType || !idsType)
    return emitOptionalError(location, "expects ranked tensor operands");

  // C1.
  int64_t vocabSize = adaptor.getVocabSize();
  if (vocabSize <= 0)
    return emitOptionalError(location, "expects a positive vocab_size, got ",
                             vocabSize);

  // C2: dy has one more dim (hidden) than ids.
  if (dyType.getRank() != idsType.getRank() + 1)
    return emitOptionalError(location, "expects dy of rank ",
                             idsType.getRank() + 1, " (rank of ids + 1), got ",
                             dyType, " and ", idsType);

  // C3.
  if (dyType.getShape().drop_back() != idsType.getShape())
    return emitOptionalError(location,
                             "expects the leading dims of dy to equal the "
                             "shape of ids, got ",
                             dyType, " and ", idsType);

  inferred.push_back(RankedTensorType::get(
      {vocabSize, dyType.getShape().back()}, dyType.getElementType()));
  return success();
}

OpShardingRule EmbeddingGradOp::getShardingRule() {
  using Builder = OpShardingRuleBuilder;
  ArrayRef<int64_t> dy = getDy().getType().getShape();
  int64_t rank = getIds().getType().getRank();
  Builder builder(getOperation()->getOperandTypes(),
                  getOperation()->getResultTypes());
  // Operands: dy, ids and (in the local form) the scalar offset.
  auto operandDims = [&](int64_t dyDim, int64_t idsDim) {
    SmallVector<int64_t> dims(getNumOperands(), Builder::kNoDim);
    dims[0] = dyDim;
    dims[1] = idsDim;
    return dims;
  };
  // The table gradient sums over every position: splitting positions leaves
  // partial sums of it.
  for (int64_t d = 0; d < rank; ++d)
    builder.addFactor(operandDims(d, d), {Builder::kNoDim}, dy[d],
                      FactorKind::Reduction);
  builder.addFactor(operandDims(rank, Builder::kNoDim), {1}, dy[rank]);
  // A device owning a block of rows accumulates only the ids in its block,
  // so it needs the block's global row range.
  builder.addFactor(operandDims(Builder::kNoDim, Builder::kNoDim), {0},
                    getVocabSize(), FactorKind::Parallel,
                    /*globalIndexed=*/true);
  return builder.build();
}

OpCost EmbeddingGradOp::getCost(const OpShapes &shapes) {
  // A scatter-add: zero the table gradient, then read-modify-write one of its
  // rows per element row of dy (one addition per element of dy).
  int64_t elementBytes = getElementBytes(getDy().getType());
  int64_t dyBytes = getNumElements(shapes.operands[0]) * elementBytes;
  int64_t tableBytes = getNumElements(shapes.results[0]) * elementBytes;
  OpCost cost;
  cost.opClass = OpClass::DataMovement;
  cost.flops = getNumElements(shapes.operands[0]);
  cost.bytesRead =
      dyBytes +
      getNumElements(shapes.operands[1]) * getElementBytes(getIds().getType()) +
      dyBytes;
  cost.bytesWritten = tableBytes + dyBytes;
  cost.outputBytes = tableBytes;
  return cost;
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// The table's gradient scatter-adds dy by id; ids get none.
//

LogicalResult EmbeddingOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  // The local form's table is a block of rows, and its offset is no
  // differentiable input: the gradient keeps the block and the offset.
  int64_t vocab = getTable().getType().getShape()[0];
  operandGrads[0] =
      EmbeddingGradOp::create(builder, getLoc(), dy, getIds(), getOffset(),
                              static_cast<uint64_t>(vocab));
  return success();
}

LogicalResult EmbeddingGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

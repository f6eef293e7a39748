//===- RingAttention.cpp - dist ring attention ops ------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers of dist.ring_attention and dist.ring_attention_grad. `verify`
// checks what the types decide (C3-C6, C8); `verifySymbolUses` the group
// (C1, C2) and the zigzag chunking it implies (C7).
//
//===----------------------------------------------------------------------===//

#include "MeshChecks.h"

using namespace mlir;
using namespace mlir::loom::dist;

/// C3-C6 over the forward's operand and result types.
static LogicalResult verifyRingTypes(Operation *op, Value query, Value key,
                                     Value value, Value out, Value lse) {
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  auto v = cast<RankedTensorType>(value.getType());
  auto o = cast<RankedTensorType>(out.getType());
  auto l = cast<RankedTensorType>(lse.getType());
  // C3.
  for (auto [name, type] : {std::pair{"query", q}, {"key", k}, {"value", v}})
    if (type.getRank() != 4)
      return op->emitOpError() << "expects `" << name
                               << "` of rank 4, got rank " << type.getRank();
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return op->emitOpError()
           << "expects `key` and `value` of the element type of `query` ("
           << q.getElementType() << ")";
  for (int64_t dim : {0, 1, 2})
    if (k.getDimSize(dim) != v.getDimSize(dim))
      return op->emitOpError()
             << "expects `key` and `value` to agree on dim " << dim << ", got "
             << k.getDimSize(dim) << " and " << v.getDimSize(dim);
  // C4.
  for (int64_t dim : {0, 2, 3})
    if (q.getDimSize(dim) != k.getDimSize(dim))
      return op->emitOpError()
             << "expects `query` and `key` to agree on dim " << dim << ", got "
             << q.getDimSize(dim) << " and " << k.getDimSize(dim);
  if (k.getDimSize(1) <= 0 || q.getDimSize(1) % k.getDimSize(1) != 0)
    return op->emitOpError()
           << "expects the key/value heads (" << k.getDimSize(1)
           << ") to divide the query heads (" << q.getDimSize(1) << ")";
  // C5.
  Type lseElement = q.getElementType().isF64()
                        ? Type(Float64Type::get(op->getContext()))
                        : Type(Float32Type::get(op->getContext()));
  SmallVector<int64_t> lseShape = {q.getDimSize(0), q.getDimSize(1),
                                   q.getDimSize(2)};
  if (l.getShape() != ArrayRef<int64_t>(lseShape) ||
      l.getElementType() != lseElement)
    return op->emitOpError()
           << "expects `lse` of type "
           << RankedTensorType::get(lseShape, lseElement) << ", got " << l;
  // C6.
  auto outType = RankedTensorType::get(
      {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
      q.getElementType());
  if (o != outType)
    return op->emitOpError()
           << "expects `out` of type " << outType << ", got " << o;
  return success();
}

/// C1, C2 and C7.
static LogicalResult verifyRingGroup(Operation *op, FlatSymbolRefAttr mesh,
                                     ArrayAttr axes, Value query,
                                     SymbolTableCollection &tables) {
  FailureOr<int64_t> n = verifyMeshGroup(op, mesh, axes, tables);
  if (failed(n))
    return failure();
  int64_t seq = cast<RankedTensorType>(query.getType()).getDimSize(2);
  if (seq % 2 != 0)
    return op->emitOpError()
           << "expects an even sequence block (two zigzag chunks of the "
           << 2 * *n << " the group of " << *n << " cuts), got " << seq;
  return success();
}

LogicalResult RingAttentionOp::verify() {
  return verifyRingTypes(*this, getQuery(), getKey(), getValue(), getResult(),
                         getLse());
}

LogicalResult RingAttentionOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyRingGroup(*this, getMeshAttr(), getAxes(), getQuery(), tables);
}

LogicalResult RingAttentionGradOp::verify() {
  if (failed(verifyRingTypes(*this, getQuery(), getKey(), getValue(), getOut(),
                             getLse())))
    return failure();
  // C8.
  if (getDout().getType() != getOut().getType())
    return emitOpError() << "expects `dout` of the type of `out` ("
                         << getOut().getType() << "), got "
                         << getDout().getType();
  for (auto [name, grad, operand] :
       {std::tuple{"dquery", getDquery(), getQuery()},
        {"dkey", getDkey(), getKey()},
        {"dvalue", getDvalue(), getValue()}})
    if (grad.getType() != operand.getType())
      return emitOpError() << "expects `" << name << "` of type "
                           << operand.getType() << ", got " << grad.getType();
  return success();
}

LogicalResult
RingAttentionGradOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyRingGroup(*this, getMeshAttr(), getAxes(), getQuery(), tables);
}

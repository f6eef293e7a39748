//===- Attention.cpp - loom attention ops ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of fused attention, its gradient and rotary embeddings, in the
// house order: verify, infer, sharding rule, cost. The forward and backward
// attention ops share their operand checks (checkAttentionOperands, C1-C8),
// their factors (getAttentionRule: the same factors, with kinds that differ
// where the gradient sums) and their count of attended (query, key) pairs.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// Shared by AttentionOp and AttentionGradOp
//===----------------------------------------------------------------------===//

namespace {
/// The sizes of one attention problem: query [B, Hq, Sq, D], key
/// [B, Hkv, Skv, D], value [B, Hkv, Skv, Dv].
struct AttentionDims {
  int64_t batch, queryHeads, kvHeads, querySeq, kvSeq, headDim, valueDim;

  /// The shape of the scores, to which a mask broadcasts.
  std::array<int64_t, 4> getScoresShape() const {
    return {batch, queryHeads, querySeq, kvSeq};
  }
  /// The shape of the result (and of the gradient's `out` and `dout`).
  SmallVector<int64_t> getOutputShape() const {
    return {batch, queryHeads, querySeq, valueDim};
  }
};
} // namespace

/// Checks C1-C8 on the operands of an attention op (`mask` may be null) and
/// returns the problem's sizes.
static FailureOr<AttentionDims>
checkAttentionOperands(std::optional<Location> location, Value query, Value key,
                       Value value, Value mask, bool causal) {
  auto queryType = dyn_cast<RankedTensorType>(query.getType());
  auto keyType = dyn_cast<RankedTensorType>(key.getType());
  auto valueType = dyn_cast<RankedTensorType>(value.getType());
  auto maskType =
      mask ? dyn_cast<RankedTensorType>(mask.getType()) : RankedTensorType();
  if (!queryType || !keyType || !valueType || (mask && !maskType))
    return emitOptionalError(location, "expects ranked tensor operands");

  // C1.
  if (queryType.getRank() != 4 || keyType.getRank() != 4 ||
      valueType.getRank() != 4)
    return emitOptionalError(location,
                             "expects query, key and value of rank 4, got ",
                             queryType, ", ", keyType, " and ", valueType);

  // C2.
  Type elementType = queryType.getElementType();
  for (auto [name, type] :
       {std::make_pair("key", keyType), std::make_pair("value", valueType),
        std::make_pair("mask", maskType)}) {
    if (type && type.getElementType() != elementType)
      return emitOptionalError(location, "expects ", name,
                               " of the query's element type ", elementType,
                               ", got ", type.getElementType());
  }

  ArrayRef<int64_t> q = queryType.getShape(), k = keyType.getShape(),
                    v = valueType.getShape();
  // C3.
  if (k.take_front(3) != v.take_front(3))
    return emitOptionalError(
        location, "expects key and value to agree on [B, Hkv, Skv], got ",
        keyType, " and ", valueType);

  // C4.
  if (q[0] != k[0])
    return emitOptionalError(location,
                             "expects query and key of one batch size, got ",
                             q[0], " and ", k[0]);

  // C5: grouped-query heads.
  if (k[1] <= 0 || q[1] % k[1] != 0)
    return emitOptionalError(
        location, "expects the key/value head count ", k[1],
        " to be positive and divide the query head count ", q[1]);

  // C6.
  if (q[3] != k[3])
    return emitOptionalError(location,
                             "expects query and key of one head size, got ",
                             q[3], " and ", k[3]);

  // C7: the bottom-right-aligned causal mask would leave the first Sq - Skv
  // queries without any key.
  if (causal && q[2] > k[2])
    return emitOptionalError(
        location, "expects no more queries than keys with causal, got ", q[2],
        " queries and ", k[2], " keys");

  AttentionDims dims{q[0], q[1], k[1], q[2], k[2], q[3], v[3]};

  // C8.
  if (maskType) {
    std::array<int64_t, 4> scores = dims.getScoresShape();
    ArrayRef<int64_t> m = maskType.getShape();
    int64_t offset = 4 - static_cast<int64_t>(m.size());
    bool broadcasts =
        offset >= 0 && llvm::all_of(llvm::enumerate(m), [&](auto dimAndSize) {
          int64_t size = dimAndSize.value();
          return size == 1 || size == scores[dimAndSize.index() + offset];
        });
    if (!broadcasts)
      return emitOptionalError(location,
                               "expects a mask that broadcasts to the scores [",
                               scores[0], ", ", scores[1], ", ", scores[2],
                               ", ", scores[3], "], got ", maskType);
  }
  return dims;
}

/// Returns the attention scale: `scale` if set, else 1 / sqrt(D).
static double getAttentionScale(std::optional<APFloat> scale,
                                RankedTensorType queryType) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(queryType.getDimSize(3)));
}

namespace {
/// What an attention operand or result holds, which fixes its dims' factors.
enum class AttentionRole {
  /// [B, (hkv, g), Sq, D]: query, dquery.
  Query,
  /// [B, hkv, Skv, D]: key, dkey.
  Key,
  /// [B, hkv, Skv, Dv]: value, dvalue.
  Value,
  /// [B, (hkv, g), Sq, Dv]: the result, out, dout.
  Output,
  /// Broadcasts to the scores [B, (hkv, g), Sq, Skv].
  Mask,
};

/// One attention factor: its dim in each role other than Mask (kNoDim where
/// absent), the dim of the scores it spans (kNoDim if none), its size and
/// its kind.
struct AttentionFactor {
  std::array<int64_t, 4> roleDims;
  int64_t scoresDim;
  int64_t size;
  FactorKind kind;
  bool globalIndexed = false;
};
} // namespace

/// Returns the rule of an attention op whose operands and results hold the
/// given roles. `grad` selects the kinds of the backward pass, where the
/// factors that dkey, dvalue or dquery lack become sums.
static OpShardingRule getAttentionRule(Operation *op,
                                       ArrayRef<AttentionRole> operandRoles,
                                       ArrayRef<AttentionRole> resultRoles,
                                       bool causal, bool grad) {
  using Builder = OpShardingRuleBuilder;
  constexpr int64_t kNo = Builder::kNoDim;
  auto shapeOf = [](Value value) {
    return cast<RankedTensorType>(value.getType()).getShape();
  };
  ArrayRef<int64_t> q = shapeOf(op->getOperand(0)),
                    k = shapeOf(op->getOperand(1)),
                    v = shapeOf(op->getOperand(2));
  ArrayRef<int64_t> mask;
  for (auto [operand, role] : llvm::zip_equal(op->getOperands(), operandRoles))
    if (role == AttentionRole::Mask)
      mask = shapeOf(operand);
  std::array<int64_t, 4> scores = {q[0], q[1], q[2], k[2]};

  // A mask dim carries the factors of the scores dim it faces when it has
  // that dim's size, none when it broadcasts along it.
  auto maskDim = [&](int64_t scoresDim) -> int64_t {
    int64_t dim = scoresDim - (4 - static_cast<int64_t>(mask.size()));
    return scoresDim != kNo && dim >= 0 && mask[dim] == scores[scoresDim] ? dim
                                                                          : kNo;
  };
  auto dimsFor = [&](ArrayRef<AttentionRole> roles,
                     const AttentionFactor &factor) {
    return llvm::map_to_vector(roles, [&](AttentionRole role) {
      return role == AttentionRole::Mask
                 ? maskDim(factor.scoresDim)
                 : factor.roleDims[static_cast<int>(role)];
    });
  };

  // The backward pass sums over the query heads of a group (into dkey and
  // dvalue) and over Dv (into dquery and dkey, through dout @ value^T and
  // rowsum(dout * out), on which they depend linearly).
  FactorKind sumKind = grad ? FactorKind::Reduction : FactorKind::Parallel;
  int64_t groups = q[1] / k[1];
  // Order matters: hkv before g makes the query head dim (hkv, g), query
  // head h using key/value head h / g.
  SmallVector<AttentionFactor> factors = {
      // {dim in Query, Key, Value, Output}, dim of the scores, size, kind.
      {{0, 0, 0, 0}, 0, q[0], FactorKind::Parallel}, // B
      {{1, 1, 1, 1}, 1, k[1], FactorKind::Parallel}, // hkv
      {{1, kNo, kNo, 1}, 1, groups, sumKind},        // g
  };
  if (q[2] == k[2]) {
    // Self-attention (or equal lengths): one sequence factor splits queries,
    // keys and values alike, which is ring attention: key/value blocks
    // rotate between the devices of the split, every result keeps its
    // sequence block. The mask's key dim stays whole (below), since each
    // query block meets every key block. A causal op needs its blocks'
    // global offsets.
    factors.push_back(
        {{2, 2, 2, 2}, 2, q[2], FactorKind::OpPartitioned, causal}); // S
    if (!mask.empty() && maskDim(3) != kNo)
      factors.push_back({{kNo, kNo, kNo, kNo},
                         3,
                         k[2],
                         FactorKind::NeedReplication}); // mask's key dim
  } else {
    // Cross-attention: queries split freely (the backward pass sums dkey
    // and dvalue over them; a causal op needs their global offset); the
    // key/value split is ring attention, whose results lacking Skv (the
    // output, dquery) come out whole.
    factors.push_back({{2, kNo, kNo, 2}, 2, q[2], sumKind, causal}); // Sq
    factors.push_back(
        {{kNo, 2, 2, kNo}, 3, k[2], FactorKind::OpPartitioned, causal}); // Skv
  }
  // Contracted inside the softmax: a partial sum of scores is useless.
  factors.push_back(
      {{3, 3, kNo, kNo}, kNo, q[3], FactorKind::NeedReplication}); // D
  factors.push_back({{kNo, kNo, 3, 3}, kNo, v[3], sumKind});       // Dv

  Builder builder(op->getOperandTypes(), op->getResultTypes());
  for (const AttentionFactor &factor : factors)
    builder.addFactor(dimsFor(operandRoles, factor),
                      dimsFor(resultRoles, factor), factor.size, factor.kind,
                      factor.globalIndexed);
  return builder.build();
}

/// Returns how many (query, key) pairs an attention block of `querySeq`
/// queries and `kvSeq` keys computes: all of them, or with `causal` those
/// the bottom-right-aligned mask keeps (j <= i + kvSeq - querySeq), which is
/// what a block-skipping kernel computes. A local block is counted as a
/// whole problem: exact for batch and head splits, while the schedules of
/// op-partitioned sequence splits (ring steps) are the cost model's to price.
static double getAttendedPairs(int64_t querySeq, int64_t kvSeq, bool causal) {
  double sq = querySeq, skv = kvSeq;
  if (!causal)
    return sq * skv;
  // Query i attends i + skv - sq + 1 keys, at least 0 (possible only on
  // local blocks, as C7 holds globally).
  if (sq <= skv)
    return sq * skv - sq * (sq - 1) / 2;
  return skv * (skv + 1) / 2;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  FailureOr<AttentionDims> dims = checkAttentionOperands(
      location, adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(),
      adaptor.getMask(), adaptor.getCausal());
  if (failed(dims))
    return failure();
  Type elementType =
      cast<RankedTensorType>(adaptor.getQuery().getType()).getElementType();
  inferred.push_back(
      RankedTensorType::get(dims->getOutputShape(), elementType));
  return success();
}

double AttentionOp::getScaleOrDefault() {
  return getAttentionScale(getScale(), getQuery().getType());
}

OpShardingRule AttentionOp::getShardingRule() {
  using Role = AttentionRole;
  SmallVector<Role> operands = {Role::Query, Role::Key, Role::Value};
  if (getMask())
    operands.push_back(Role::Mask);
  return getAttentionRule(getOperation(), operands, {Role::Output}, getCausal(),
                          /*grad=*/false);
}

OpCost AttentionOp::getCost(const OpShapes &shapes) {
  ArrayRef<int64_t> q = shapes.operands[0], k = shapes.operands[1],
                    v = shapes.operands[2];
  double heads = static_cast<double>(q[0]) * q[1];
  double pairs = getAttendedPairs(q[2], k[2], getCausal());
  // Two products; scale, max, subtract, exp and sum per pair (plus the mask
  // addition); one division per output element.
  double perPair = 2.0 * (q[3] + v[3]) + 5 + (getMask() ? 1 : 0);
  double flops = heads * (pairs * perPair + static_cast<double>(q[2]) * v[3]);
  // Flash attention keeps the scores on chip: one pass over the operands.
  return getStreamingCost(getOperation(), shapes, OpClass::Attention, flops);
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<AttentionDims> dims = checkAttentionOperands(
      location, adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(),
      adaptor.getMask(), adaptor.getCausal());
  if (failed(dims))
    return failure();
  auto queryType = cast<RankedTensorType>(adaptor.getQuery().getType());
  SmallVector<int64_t> outputShape = dims->getOutputShape();
  for (auto [name, value] : {std::make_pair("out", adaptor.getOut()),
                             std::make_pair("dout", adaptor.getDout())}) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return emitOptionalError(location, "expects ranked tensor operands");
    // C2.
    if (type.getElementType() != queryType.getElementType())
      return emitOptionalError(
          location, "expects ", name, " of the query's element type ",
          queryType.getElementType(), ", got ", type.getElementType());
    // C9.
    if (type.getShape() != ArrayRef<int64_t>(outputShape))
      return emitOptionalError(
          location, "expects ", name, " of the forward's result shape [",
          outputShape[0], ", ", outputShape[1], ", ", outputShape[2], ", ",
          outputShape[3], "], got ", type);
  }
  // Each gradient has its operand's type.
  inferred.push_back(queryType);
  inferred.push_back(adaptor.getKey().getType());
  inferred.push_back(adaptor.getValue().getType());
  return success();
}

double AttentionGradOp::getScaleOrDefault() {
  return getAttentionScale(getScale(), getQuery().getType());
}

OpShardingRule AttentionGradOp::getShardingRule() {
  using Role = AttentionRole;
  SmallVector<Role> operands = {Role::Query, Role::Key, Role::Value,
                                Role::Output, Role::Output};
  if (getMask())
    operands.push_back(Role::Mask);
  return getAttentionRule(getOperation(), operands,
                          {Role::Query, Role::Key, Role::Value}, getCausal(),
                          /*grad=*/true);
}

OpCost AttentionGradOp::getCost(const OpShapes &shapes) {
  ArrayRef<int64_t> q = shapes.operands[0], k = shapes.operands[1],
                    v = shapes.operands[2];
  double heads = static_cast<double>(q[0]) * q[1];
  double pairs = getAttendedPairs(q[2], k[2], getCausal());
  // Five products (three with D, two with Dv); per pair, 6 flops recompute
  // the probabilities (plus the mask addition) and 3 form dscores; 2 per
  // element of out for rowsum(dout * out).
  double perPair = 2.0 * (3 * q[3] + 2 * v[3]) + 9 + (getMask() ? 1 : 0);
  double flops =
      heads * (pairs * perPair + 2.0 * static_cast<double>(q[2]) * v[3]);
  return getStreamingCost(getOperation(), shapes, OpClass::Attention, flops);
}

//===----------------------------------------------------------------------===//
// RopeOp
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto inputType = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
  auto positionsType =
      adaptor.getPositions()
          ? dyn_cast<RankedTensorType>(adaptor.getPositions().getType())
          : RankedTensorType();
  if (!inputType || (adaptor.getPositions() && !positionsType))
    return emitOptionalError(location, "expects ranked tensor operands");

  // C1.
  if (inputType.getRank() != 4)
    return emitOptionalError(
        location, "expects an input of rank 4 [B, H, S, D], got ", inputType);

  // C2: rotate_half pairs element i with element i + D/2.
  ArrayRef<int64_t> x = inputType.getShape();
  if (x[3] % 2 != 0)
    return emitOptionalError(location, "expects an even head size, got ", x[3]);

  // C3.
  if (positionsType) {
    ArrayRef<int64_t> p = positionsType.getShape();
    bool matches = (p.size() == 1 && p[0] == x[2]) ||
                   (p.size() == 2 && p[0] == x[0] && p[1] == x[2]);
    if (!matches)
      return emitOptionalError(location, "expects positions of shape [", x[0],
                               ", ", x[2], "] or [", x[2], "], got ",
                               positionsType);
  }

  // C4: written negated so that NaN fails too.
  double theta = adaptor.getTheta().convertToDouble();
  if (!(theta > 0))
    return emitOptionalError(location, "expects a positive theta, got ", theta);

  inferred.push_back(inputType);
  return success();
}

OpShardingRule RopeOp::getShardingRule() {
  using Builder = OpShardingRuleBuilder;
  constexpr int64_t kNo = Builder::kNoDim;
  ArrayRef<int64_t> x = getInput().getType().getShape();
  Value positions = getPositions();
  int64_t positionsRank =
      positions ? cast<RankedTensorType>(positions.getType()).getRank() : 0;
  // The factors' dims in the input (and result) and in positions, if any.
  auto addFactor = [&](Builder &builder, int64_t inputDim, int64_t positionsDim,
                       FactorKind kind, bool globalIndexed = false) {
    SmallVector<int64_t> operandDims = {inputDim};
    if (positions)
      operandDims.push_back(positionsDim);
    builder.addFactor(operandDims, {inputDim}, x[inputDim], kind,
                      globalIndexed);
  };

  Builder builder(getOperation()->getOperandTypes(),
                  getOperation()->getResultTypes());
  addFactor(builder, 0, positionsRank == 2 ? 0 : kNo, FactorKind::Parallel);
  addFactor(builder, 1, kNo, FactorKind::Parallel);
  // Without positions, a device must know the global index of its rows.
  addFactor(builder, 2, positionsRank - 1, FactorKind::Parallel,
            /*globalIndexed=*/!positions);
  // Element i pairs with element i + D/2.
  addFactor(builder, 3, kNo, FactorKind::NeedReplication);
  return builder.build();
}

OpCost RopeOp::getCost(const OpShapes &shapes) {
  ArrayRef<int64_t> x = shapes.operands[0];
  // The angles depend on the position rows only: one row per sequence index,
  // or one per (batch, sequence) index with positions [B, S].
  int64_t positionRows =
      shapes.operands.size() > 1 ? getNumElements(shapes.operands[1]) : x[2];
  double halfDim = x[3] / 2;
  // inv_freq: one power per frequency; per (position, frequency): the
  // angle's multiply, cos and sin; per element: two multiplies and an add
  // (rotate_half's negation is a sign flip).
  double flops = halfDim + 3.0 * positionRows * halfDim +
                 3.0 * static_cast<double>(getNumElements(x));
  return getStreamingCost(getOperation(), shapes, OpClass::Elementwise, flops);
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// Attention's VJP is the fused attention_grad (the mask, data, gets no
// gradient); rope's is the inverse rotation (positions get none).
//

LogicalResult AttentionOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  auto grad = AttentionGradOp::create(builder, getLoc(), getQuery(), getKey(),
                                      getValue(), getResult(), dy, getMask(),
                                      getCausal(), getScaleAttr());
  operandGrads[0] = grad.getDquery();
  operandGrads[1] = grad.getDkey();
  operandGrads[2] = grad.getDvalue();
  return success();
}

LogicalResult AttentionGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

LogicalResult RopeOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  operandGrads[0] = RopeOp::create(builder, getLoc(), dy, getPositions(),
                                   getThetaAttr(),
                                   getInverse() ? UnitAttr()
                                                : builder.getUnitAttr());
  return success();
}

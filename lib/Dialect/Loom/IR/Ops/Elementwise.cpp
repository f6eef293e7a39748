//===- Elementwise.cpp - loom elementwise ops -----------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Behaviour of the elementwise ops, in the house order: verify, infer,
// sharding rule, cost. Binary ops share one broadcasting rule for types
// (inferBroadcastBinary); every op here shares one sharding rule
// (getPointwiseRule) and one cost shape (getPointwiseCost), differing only in
// the FLOPs per element. Unary ops and the activation gradients have their
// result type inferred by ODS (SameOperandsAndResultType, AllTypesMatch).
//
// FLOPs count each arithmetic operation and each transcendental function
// (exp, log, sqrt, rsqrt, tanh, erf) of the formula in the op's description
// as 1, a comparison or select as 1, and constants folded ahead of time as 0.
//
//===----------------------------------------------------------------------===//

#include "Pointwise.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/IR/Vjp.h"
#include "mlir/Dialect/Traits.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::detail;

// add, sub, mul, div and the plain unary ops (neg, exp, log, sqrt, rsqrt,
// tanh, sigmoid, relu, silu) get their inference, rule and cost from their
// ODS base classes (Loom_BinaryOp, Loom_PlainUnaryOp), which call the helpers
// of Pointwise.h; their VJPs are below.

//===----------------------------------------------------------------------===//
// Unary math and activations
//===----------------------------------------------------------------------===//

/// FLOPs of `1 / (1 + e^-x)`: negate, exp, add, divide (as loom.sigmoid's
/// ODS entry counts them).
static constexpr double kSigmoidFlops = 4;

/// FLOPs of gelu(x) per element:
/// - none: x / sqrt(2), erf, 1 + ., 0.5 * x, times: 5;
/// - tanh: x^3 (2), 0.044715 * ., x + ., k * ., tanh, 1 + ., 0.5 * x,
///   times: 9.
static double getGeluFlops(GeluApproximation approximate) {
  return approximate == GeluApproximation::Tanh ? 9 : 5;
}

OpShardingRule GeluOp::getShardingRule() {
  return getPointwiseRule(getOperation());
}

OpCost GeluOp::getCost(const OpShapes &shapes) {
  return getPointwiseCost(getOperation(), shapes,
                          getGeluFlops(getApproximate()));
}

//===----------------------------------------------------------------------===//
// ScaleOp
//===----------------------------------------------------------------------===//

LogicalResult ScaleOp::verify() {
  // C1: an infinite or NaN factor makes every element inf or NaN.
  double factor = getFactor().convertToDouble();
  if (!std::isfinite(factor))
    return emitOpError("expects a finite factor, got ") << factor;
  return success();
}

OpShardingRule ScaleOp::getShardingRule() {
  // x * c is linear: a partial sum scales summand by summand.
  return getPointwiseRule(getOperation(), /*globalIndexed=*/false,
                          /*linear=*/true);
}

OpCost ScaleOp::getCost(const OpShapes &shapes) {
  return getPointwiseCost(getOperation(), shapes, 1);
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  // C1: a cast converts elements, never moves them.
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getType();
  if (inputType.getShape() != resultType.getShape())
    return emitOpError("expects the operand and result to have the same "
                       "shape, got ")
           << inputType << " and " << resultType;
  return success();
}

OpShardingRule CastOp::getShardingRule() {
  return getPointwiseRule(getOperation());
}

OpCost CastOp::getCost(const OpShapes &shapes) {
  // A conversion is not arithmetic: no FLOPs, only the traffic at the two
  // element sizes.
  return getPointwiseCost(getOperation(), shapes, 0);
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verify() {
  // C1: rate 1 would drop everything and divide by zero. Written as a
  // negated range test so that NaN fails too.
  double rate = getRate().convertToDouble();
  if (!(rate >= 0 && rate < 1))
    return emitOpError("expects rate to be in [0, 1), got ") << rate;
  return success();
}

OpShardingRule DropoutOp::getShardingRule() {
  // Parallel, although the op is random: the mask is a function of the
  // element's global index, so a shard that knows where it lies (globally
  // indexed) computes exactly its slice of the unsplit result.
  return getPointwiseRule(getOperation(), /*globalIndexed=*/true);
}

OpCost DropoutOp::getCost(const OpShapes &shapes) {
  // One comparison of the random word with the threshold and one multiply
  // by the scale. Philox's integer rounds (about 25 integer operations per
  // element) are not FLOPs; the op stays memory bound.
  return getPointwiseCost(getOperation(), shapes, 2);
}

//===----------------------------------------------------------------------===//
// ReluGradOp
//===----------------------------------------------------------------------===//

OpShardingRule ReluGradOp::getShardingRule() {
  return getPointwiseRule(getOperation());
}

OpCost ReluGradOp::getCost(const OpShapes &shapes) {
  // One comparison-and-select.
  return getPointwiseCost(getOperation(), shapes, 1);
}

//===----------------------------------------------------------------------===//
// SiluGradOp
//===----------------------------------------------------------------------===//

OpShardingRule SiluGradOp::getShardingRule() {
  return getPointwiseRule(getOperation());
}

OpCost SiluGradOp::getCost(const OpShapes &shapes) {
  // The sigmoid, then 1 - s, x * ., 1 + ., s * ., dy * .: 5 more.
  return getPointwiseCost(getOperation(), shapes, kSigmoidFlops + 5);
}

//===----------------------------------------------------------------------===//
// GeluGradOp
//===----------------------------------------------------------------------===//

/// FLOPs of gelu_grad per element:
/// - none: Phi (x / sqrt(2), erf, 1 + ., 0.5 * .: 4), phi (x^2, -0.5 * .,
///   exp, 1 / sqrt(2 pi) * .: 4), x * phi, Phi + ., dy * .: 11;
/// - tanh: u (x^2, x^3, 0.044715 * ., x + ., k * .: 5), tanh (1), du/dx
///   (3 * 0.044715 * x^2, 1 + ., k * .: 3), gelu' (1 + t, 0.5 * ., t^2,
///   1 - ., x * ., * du/dx, 0.5 * ., + : 8), dy * . (1): 18.
static double getGeluGradFlops(GeluApproximation approximate) {
  return approximate == GeluApproximation::Tanh ? 18 : 11;
}

OpShardingRule GeluGradOp::getShardingRule() {
  return getPointwiseRule(getOperation());
}

OpCost GeluGradOp::getCost(const OpShapes &shapes) {
  return getPointwiseCost(getOperation(), shapes,
                          getGeluGradFlops(getApproximate()));
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//
//
// Each VJP is the formula at the end of the op's description. Binary ops
// sum their gradients over the dims an operand was broadcast along.
//

/// Fills the gradients of a binary op from its unbroadcast gradients.
static void setBinaryGrads(OpBuilder &builder, Location loc, Value lhs,
                           Value rhs, Value dLhs, Value dRhs,
                           SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (!isFloatTensor(lhs))
    return;
  operandGrads[0] =
      sumToShape(builder, loc, dLhs, cast<RankedTensorType>(lhs.getType()));
  operandGrads[1] =
      sumToShape(builder, loc, dRhs, cast<RankedTensorType>(rhs.getType()));
}

/// `1 - v` for a float tensor `v` (the rank-0 constant broadcasts).
static Value oneMinus(OpBuilder &builder, Location loc, Value v) {
  Type elementType = cast<RankedTensorType>(v.getType()).getElementType();
  return SubOp::create(builder, loc, buildSplat(builder, loc, elementType, 1.0),
                       v);
}

LogicalResult AddOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getLhs())) {
    operandGrads.assign(2, Value());
    return success();
  }
  Location loc = getLoc();
  setBinaryGrads(builder, loc, getLhs(), getRhs(), dy, dy, operandGrads);
  return success();
}

LogicalResult SubOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getLhs())) {
    operandGrads.assign(2, Value());
    return success();
  }
  Location loc = getLoc();
  setBinaryGrads(builder, loc, getLhs(), getRhs(), dy,
                 NegOp::create(builder, loc, dy), operandGrads);
  return success();
}

LogicalResult MulOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getLhs())) {
    operandGrads.assign(2, Value());
    return success();
  }
  Location loc = getLoc();
  setBinaryGrads(builder, loc, getLhs(), getRhs(),
                 MulOp::create(builder, loc, dy, getRhs()),
                 MulOp::create(builder, loc, dy, getLhs()), operandGrads);
  return success();
}

LogicalResult DivOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Value dy = resultGrads[0];
  if (!dy || !isFloatTensor(getLhs())) {
    operandGrads.assign(2, Value());
    return success();
  }
  Location loc = getLoc();
  Value dRhs = NegOp::create(
      builder, loc,
      DivOp::create(builder, loc, MulOp::create(builder, loc, dy, getResult()),
                    getRhs()));
  setBinaryGrads(builder, loc, getLhs(), getRhs(),
                 DivOp::create(builder, loc, dy, getRhs()), dRhs, operandGrads);
  return success();
}

LogicalResult NegOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = NegOp::create(builder, loc, dy);
  return success();
}

LogicalResult ExpOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = MulOp::create(builder, loc, dy, y);
  return success();
}

LogicalResult LogOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = DivOp::create(builder, loc, dy, x);
  return success();
}

LogicalResult SqrtOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = ScaleOp::create(
      builder, loc, DivOp::create(builder, loc, dy, y), llvm::APFloat(0.5));
  return success();
}

LogicalResult RsqrtOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = ScaleOp::create(
      builder, loc,
      MulOp::create(
          builder, loc, dy,
          MulOp::create(builder, loc, y, MulOp::create(builder, loc, y, y))),
      llvm::APFloat(-0.5));
  return success();
}

LogicalResult TanhOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] =
      MulOp::create(builder, loc, dy,
                    oneMinus(builder, loc, MulOp::create(builder, loc, y, y)));
  return success();
}

LogicalResult SigmoidOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] =
      MulOp::create(builder, loc, dy,
                    MulOp::create(builder, loc, y, oneMinus(builder, loc, y)));
  return success();
}

LogicalResult ReluOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = ReluGradOp::create(builder, loc, dy, x);
  return success();
}

LogicalResult SiluOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = SiluGradOp::create(builder, loc, dy, x);
  return success();
}

LogicalResult GeluOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = GeluGradOp::create(builder, loc, dy, x, getApproximate());
  return success();
}

LogicalResult ScaleOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] = ScaleOp::create(builder, loc, dy, getFactorAttr());
  return success();
}

LogicalResult DropoutOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value x = getInput(), y = getResult();
  (void)x;
  (void)y;
  operandGrads[0] =
      DropoutOp::create(builder, loc, dy, getRateAttr(), getSeedAttr());
  return success();
}

LogicalResult CastOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  // Integer operands (and integer results) carry no gradient.
  if (!dy || !isFloatTensor(getInput()) || !isFloatTensor(getResult()))
    return success();
  operandGrads[0] =
      dy.getType() == getInput().getType()
          ? dy
          : CastOp::create(builder, getLoc(), getInput().getType(), dy)
                .getResult();
  return success();
}

LogicalResult ReluGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                   SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

LogicalResult SiluGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                   SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

LogicalResult GeluGradOp::buildVjp(OpBuilder &builder, ValueRange resultGrads,
                                   SmallVectorImpl<Value> &operandGrads) {
  return emitNoSecondOrder(*this);
}

//===- WidenParamGrads.cpp - Parameter gradients summed in f32 ------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Megatron's f32 gradient accumulation (`--grad-reduce-dtype f32`, the
// default of a mixed-precision step) as a rewrite of `@train_step` after
// loom-autodiff:
//
//   1. find each parameter's gradient cast: the `loom.cast` from the low
//      type to f32 that is the VJP of the forward cast narrowing the
//      parameter (the two share the forward op's `loom.fwd`);
//   2. rebuild the value it widens so that no sum in it is rounded to the
//      low type: a `matmul` becomes the same product of its operands cast
//      to f32 (exact widenings, so it is the GEMM of low-type A and B with
//      an f32 C, which the cost model prices at the low type's rate), an
//      `embedding_grad` the scatter-add of its widened gradient, a
//      `reduce_sum` the sum of its widened operand (of its rebuilt matmul,
//      for per-sample products); `add` and `reshape` (a tied table's parts,
//      a folded weight gradient's view) are rebuilt on their operands
//      rebuilt in turn, and compute in f32; any other value is
//      a leaf, widened by a cast right before the op that reads it (exact:
//      f32 holds every bf16 and f16 value; placed there, the f32 copy of an
//      activation lives only as long as that op needs it);
//   3. replace the cast by the rebuilt value and erase what is left unused;
//      a remark on the step counts what was rebuilt.
//
// Every sum over the batch that the partitioner may split (the weight
// gradient's contraction over tokens, the embedding's scatter-add, a
// bias's reduce_sum, the tied table's two parts) then yields f32 partial
// sums, so the data-parallel reduction runs in f32 and each rank's partial
// sum is never rounded to bf16: a data-parallel, ZeRO or pipelined step
// computes the single-device step's gradients up to the order of f32 (or
// f64) additions. The products still multiply low-type operands, so the
// GEMMs keep their tensor-core rate (docs/MixedPrecision.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/ResultTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "loom-widen-param-grads"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_WIDENPARAMGRADSPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

static Type getElementType(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

static bool isLowFloat(Type type) { return type.isBF16() || type.isF16(); }

static RankedTensorType withF32(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.clone(Float32Type::get(value.getContext()));
}

namespace {
struct WidenParamGradsPass
    : public loom::impl::WidenParamGradsPassBase<WidenParamGradsPass> {
  using WidenParamGradsPassBase::WidenParamGradsPassBase;
  void runOnOperation() override;

private:
  FailureOr<Value> widen(OpBuilder &builder, Value value, Operation *user);
  Value castToF32(OpBuilder &builder, Value value, Operation *user);
  int64_t rebuilt = 0;
  int64_t leaves = 0;
};
} // namespace

/// `value` (a low float type) widened to f32 by a cast right before
/// `user`, the op being rebuilt: exact, since f32 holds every bf16 and f16
/// value, and live only until the rebuilt op has read it (a cast after an
/// activation's forward definition would hold an f32 copy of it through
/// the whole forward).
Value WidenParamGradsPass::castToF32(OpBuilder &builder, Value value,
                                     Operation *user) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(user);
  ++leaves;
  auto cast = CastOp::create(builder, value.getLoc(), withF32(value), value);
  // It belongs where its reader does: the same forward op, micro-batch and
  // backward.
  cast->setDiscardableAttrs(user->getDiscardableAttrDictionary());
  return cast.getResult();
}

/// An f32 value equal to `value` computed without rounding any sum to the
/// low type, for `user` (which reads `value`). `value` has a low float
/// type; its producer is rebuilt right after the original, which the
/// caller erases once unused.
FailureOr<Value> WidenParamGradsPass::widen(OpBuilder &builder, Value value,
                                            Operation *user) {
  Operation *op = value.getDefiningOp();
  // A value another op reads keeps its rounding there; widening a copy
  // would not change what that reader sees, so the cast is exact and enough.
  bool rebuildable =
      op && value.hasOneUse() &&
      isa<MatmulOp, AddOp, ReduceSumOp, ReshapeOp, EmbeddingGradOp>(op);
  if (!rebuildable)
    return castToF32(builder, value, user);
  // The operands in f32. A product's and a scatter-add's are widened
  // exactly (their sums then run in f32, as a GEMM with low-type A and B
  // and an f32 C); what they read is an activation or its gradient, whose
  // own roundings stay. A reshape or a tied table's add rebuilds its
  // operands in turn: they combine sums of the parameter's gradient.
  // A reduce_sum sums per-sample products of a matmul (a weight's
  // gradient over broadcast batch dims) or an activation gradient (a
  // bias's): only the products are rebuilt.
  auto readsLeaf = [&](Value operand) {
    if (isa<MatmulOp, EmbeddingGradOp>(op))
      return true;
    if (isa<ReduceSumOp>(op))
      return !operand.getDefiningOp<MatmulOp>();
    return false;
  };
  IRMapping mapping;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !isLowFloat(type.getElementType()))
      continue;
    FailureOr<Value> wide = readsLeaf(operand) ? castToF32(builder, operand, op)
                                               : widen(builder, operand, op);
    if (failed(wide))
      return failure();
    mapping.map(operand, *wide);
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(op);
  Operation *clone = builder.clone(*op, mapping);
  if (auto reshape = dyn_cast<ReshapeOp>(clone)) {
    // A reshape states its result type: keep the shape, take f32.
    reshape.getResult().setType(withF32(reshape.getResult()));
  } else if (failed(reinferResultTypes(clone))) {
    return clone->emitOpError("cannot compute in f32 for the gradient "
                              "reduction type (--grad-reduce-dtype f32)");
  }
  ++rebuilt;
  return clone->getResult(0);
}

void WidenParamGradsPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto step = module.lookupSymbol<func::FuncOp>(entryName);
  if (!step || step.isExternal()) {
    module.emitError() << "loom-widen-param-grads: no function `" << entryName
                       << "` with a body (run loom-autodiff first)";
    return signalPassFailure();
  }
  // 1. The forward casts that narrow a parameter, by forward op index.
  llvm::DenseMap<int64_t, CastOp> narrowing;
  step.walk([&](CastOp cast) {
    auto arg = dyn_cast<BlockArgument>(cast.getInput());
    auto fwd = cast->getAttrOfType<IntegerAttr>(kFwdAttrName);
    if (!arg || !fwd || !step.getArgAttr(arg.getArgNumber(), kParamAttrName) ||
        !isLowFloat(getElementType(cast.getResult())))
      return;
    narrowing[fwd.getInt()] = cast;
  });
  // Their VJPs: backward casts back to f32 with the same forward index.
  SmallVector<CastOp> gradCasts;
  step.walk([&](CastOp cast) {
    auto fwd = cast->getAttrOfType<IntegerAttr>(kFwdAttrName);
    if (fwd && narrowing.count(fwd.getInt()) &&
        isLowFloat(getElementType(cast.getInput())) &&
        getElementType(cast.getResult()).isF32())
      gradCasts.push_back(cast);
  });
  // 2-3. Rebuild each in f32 and drop the rounded chain.
  OpBuilder builder(&getContext());
  for (CastOp cast : gradCasts) {
    FailureOr<Value> wide = widen(builder, cast.getInput(), cast);
    if (failed(wide))
      return signalPassFailure();
    cast.getResult().replaceAllUsesWith(*wide);
    llvm::SetVector<Operation *> dead;
    dead.insert(cast);
    while (!dead.empty()) {
      Operation *op = dead.pop_back_val();
      llvm::SetVector<Operation *> producers;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          producers.insert(def);
      op->erase();
      for (Operation *def : producers)
        if (isOpTriviallyDead(def))
          dead.insert(def);
    }
  }
  if (!gradCasts.empty())
    step.emitRemark() << "parameter gradients summed in f32: "
                      << gradCasts.size() << "; ops rebuilt in f32: " << rebuilt
                      << "; low-type operands widened: " << leaves;
}

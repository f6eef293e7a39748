//===- MixedPrecision.cpp - Cast @forward to a mixed-precision policy -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// torch.autocast as a compiler pass, before autodiff, with f32 master
// weights:
//
//   1. check that every float argument of `@forward` is f32;
//   2. walk `@forward` in order and look each op's kind up in the policy
//      table (`lookupPrecisionRule`, below: the only place that says where
//      an op computes); an op without a rule, or a backward/optimizer op, is
//      an error naming it;
//   3. give the op the operand types its rule asks for, casting a value at
//      most once per target type (the cast is built right before its first
//      user, so it dominates every later one, and is reused);
//   4. infer the op's result types again from its new operands;
//   5. cast returned values back to the function's result types.
//
// The backward is not touched: `loom-autodiff` runs afterwards and follows
// the casts through their VJPs, so the low-type ops get low-type backward
// ops and every parameter's gradient comes back to f32 through the VJP of
// the cast that narrowed it.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/MixedPrecision.h"
#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Dialect/Loom/Transforms/ResultTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "loom-mixed-precision"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_MIXEDPRECISIONPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

//===----------------------------------------------------------------------===//
// The policy table
//===----------------------------------------------------------------------===//

namespace {
class PolicyTable {
public:
  PolicyTable() {
    // autocast's lower-precision list: the GEMMs and the attention built on
    // them. The embedding lookup joins them (Megatron's bf16 embeddings):
    // its rows are copied, so the low type loses nothing the table's cast
    // did not already lose, and the residual stream starts in the low type.
    add<MatmulOp, AttentionOp, EmbeddingOp>(PrecisionRule::Low);
    // autocast's fp32 list: statistics (normalizations, sums, means),
    // softmax and the losses, and the pointwise functions whose range or
    // accuracy suffers in 8 mantissa bits (exp, log, rsqrt).
    add<LayerNormOp, RmsNormOp, SoftmaxOp, LogSoftmaxOp, CrossEntropyOp,
        LabelCountOp, ReduceSumOp, ReduceMeanOp, ExpOp, LogOp, RsqrtOp>(
        PrecisionRule::F32);
    // Everything else computes in the type of its inputs, as outside
    // autocast's lists; mixed inputs meet in the low type.
    add<AddOp, SubOp, MulOp, DivOp, NegOp, SqrtOp, TanhOp, SigmoidOp, ReluOp,
        SiluOp, GeluOp, ScaleOp, DropoutOp, RopeOp, ReduceMaxOp, ReshapeOp,
        TransposeOp, SliceOp, PadOp, ConcatOp, SplitOp>(PrecisionRule::Follow);
    // Ops that state their result type.
    add<CastOp, arith::ConstantOp>(PrecisionRule::AsWritten);
    // The training step's ops: loom-autodiff builds them after this pass.
    add<AttentionGradOp, ReluGradOp, SiluGradOp, GeluGradOp, EmbeddingGradOp,
        CrossEntropyGradOp, SoftmaxGradOp, LogSoftmaxGradOp, LayerNormGradOp,
        RmsNormGradOp, SgdUpdateOp, AdamwUpdateOp, NonfiniteCountOp, SelectOp,
        UpdateLossScaleOp>(PrecisionRule::AfterAutodiff);
  }

  std::optional<PrecisionRule> lookup(OperationName name) const {
    std::optional<RegisteredOperationName> registered = name.getRegisteredInfo();
    if (!registered)
      return std::nullopt;
    auto it = rules.find(registered->getTypeID());
    if (it == rules.end())
      return std::nullopt;
    return it->second;
  }

private:
  template <typename... Ops> void add(PrecisionRule rule) {
    (rules.try_emplace(TypeID::get<Ops>(), rule), ...);
  }

  llvm::DenseMap<TypeID, PrecisionRule> rules;
};
} // namespace

std::optional<PrecisionRule> mlir::loom::lookupPrecisionRule(OperationName name) {
  static const PolicyTable table;
  return table.lookup(name);
}

StringRef mlir::loom::stringifyPrecisionRule(PrecisionRule rule) {
  switch (rule) {
  case PrecisionRule::Low:
    return "low";
  case PrecisionRule::F32:
    return "f32";
  case PrecisionRule::Follow:
    return "follow";
  case PrecisionRule::AsWritten:
    return "as-written";
  case PrecisionRule::AfterAutodiff:
    return "after-autodiff";
  }
  return "?";
}

std::optional<Type> mlir::loom::getLowPrecisionType(MLIRContext *context,
                                                    StringRef precision) {
  if (precision == "f32")
    return Type();
  if (precision == "bf16-mixed")
    return Type(BFloat16Type::get(context));
  if (precision == "fp16-mixed")
    return Type(Float16Type::get(context));
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

static Type elementTypeOf(Value value) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  return tensor ? tensor.getElementType() : Type();
}

static bool isFloatTensor(Value value) {
  return isa_and_nonnull<FloatType>(elementTypeOf(value));
}

/// Infers `op`'s result types from its operands again (step 4). Ops without
/// InferTypeOpInterface state their result type (cast, label_count), except
/// reshape, whose written shape stays and whose element type follows.
static LogicalResult retype(Operation *op) {
  FailureOr<bool> inferred = reinferResultTypes(op);
  if (failed(inferred))
    return failure();
  if (*inferred)
    return success();
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    auto out = cast<RankedTensorType>(reshape.getResult().getType());
    reshape.getResult().setType(
        out.clone(elementTypeOf(reshape.getInput())));
  }
  return success();
}

namespace {
struct MixedPrecisionPass
    : public loom::impl::MixedPrecisionPassBase<MixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// `value` as element type `type`: the value itself, or its one cast,
  /// built before `user` the first time it is asked for (step 3).
  Value castTo(OpBuilder &builder, Value value, Type type, Operation *user) {
    if (elementTypeOf(value) == type)
      return value;
    Value &slot = casts[{value, type}];
    if (!slot) {
      builder.setInsertionPoint(user);
      auto tensor = cast<RankedTensorType>(value.getType());
      slot = CastOp::create(builder, user->getLoc(), tensor.clone(type), value)
                 .getResult();
      ++numCasts;
    }
    return slot;
  }

  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
  int64_t numCasts = 0;
};
} // namespace

void MixedPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::optional<Type> low = getLowPrecisionType(&getContext(), precision);
  if (!low) {
    module.emitError() << "unknown precision `" << precision
                       << "`; expected f32, bf16-mixed or fp16-mixed";
    return signalPassFailure();
  }
  // f32: the model already computes in its master type.
  if (!*low)
    return;

  auto entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (!entry || entry.isExternal()) {
    module.emitError() << "expected a `func.func @" << entryName
                       << "` with a body to apply precision `" << precision
                       << "` to";
    return signalPassFailure();
  }
  Type f32 = Float32Type::get(&getContext());

  // 1. The master type: every float argument (parameters and float inputs)
  // is f32, so that `low` and `f32` are the only float types the rules
  // meet.
  for (BlockArgument arg : entry.getArguments()) {
    if (isFloatTensor(arg) && elementTypeOf(arg) != f32) {
      emitError(arg.getLoc())
          << "precision `" << precision << "` expects an f32 model (f32 "
          << "master weights), but argument " << arg.getArgNumber()
          << " of @" << entryName << " is " << arg.getType();
      return signalPassFailure();
    }
  }

  OpBuilder builder(&getContext());
  int64_t numLowOps = 0, numF32Ops = 0;
  // 2. The ops in order; a cast built before the current op is not visited.
  for (Operation &opRef : llvm::make_early_inc_range(entry.getOps())) {
    Operation *op = &opRef;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // 5. The signature stays: returned values go back to their type.
      for (auto [i, type] :
           llvm::enumerate(entry.getFunctionType().getResults())) {
        Value value = ret.getOperand(i);
        if (value.getType() != type)
          ret.setOperand(i, castTo(builder, value,
                                   cast<RankedTensorType>(type)
                                       .getElementType(),
                                   ret));
      }
      continue;
    }
    std::optional<PrecisionRule> rule = lookupPrecisionRule(op->getName());
    if (!rule) {
      op->emitOpError() << "has no rule in the mixed-precision policy "
                           "(lib/Dialect/Loom/Transforms/MixedPrecision.cpp)";
      return signalPassFailure();
    }
    if (*rule == PrecisionRule::AfterAutodiff) {
      op->emitOpError() << "belongs to a training step; loom-mixed-precision "
                           "runs on @"
                        << entryName << " before loom-autodiff";
      return signalPassFailure();
    }
    if (*rule == PrecisionRule::AsWritten)
      continue;

    // 3. The type the float operands take, and which of them move.
    Type from, to;
    switch (*rule) {
    case PrecisionRule::Low:
      from = f32, to = *low;
      break;
    case PrecisionRule::F32:
      from = *low, to = f32;
      break;
    case PrecisionRule::Follow:
      if (llvm::any_of(op->getOperands(), [&](Value v) {
            return elementTypeOf(v) == *low;
          }))
        from = f32, to = *low;
      break;
    default:
      break;
    }
    bool changed = false;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!to || elementTypeOf(operand.get()) != from)
        continue;
      operand.set(castTo(builder, operand.get(), to, op));
      changed = true;
    }
    // 4. Result types from the operands' types, which this op or the ops
    // before it (a producer now low) changed.
    if (failed(retype(op))) {
      op->emitOpError() << "cannot infer its result types under precision `"
                        << precision << "`";
      return signalPassFailure();
    }
    if (llvm::any_of(op->getResults(),
                     [&](Value v) { return elementTypeOf(v) == *low; }))
      ++numLowOps;
    else if (changed)
      ++numF32Ops;
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op->getName() << ": "
                            << stringifyPrecisionRule(*rule) << " -> " << to
                            << "\n");
  }
  entry.emitRemark() << "precision " << precision << ": " << numCasts
                     << " casts, " << numLowOps << " ops in the low type, "
                     << numF32Ops << " ops cast up to f32";
}

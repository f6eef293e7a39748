//===- VerifyTrainStep.cpp - Check the contract of the autodiff phase -----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The autodiff phase hands the strategy search one function, @train_step,
// whose ops each name the forward op they belong to. This pass checks that
// contract, reporting every violation before failing:
//
//   1. find @train_step and require a body;
//   2. require the results to be named, `loss` first (rank-0 float) and
//      `step` last (rank-0 i64);
//   3. require every argument to be a parameter, an input or named,
//      exactly one to be the rank-0 i64 `step`, and `lr_scale` (the
//      learning-rate factor, when present) a rank-0 float;
//   4. require every other result to name an argument of its type (or be
//      `<argument>.grad`, the gradients `optimizer=none` returns, the
//      rank-0 float `grad_norm` clipping returns, or the rank-0 float
//      `found_inf` of a loss-scaled step);
//   5. require `loom.fwd` on every loom op and only loom/arith/func ops.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/IR/LoomOps.h"
#include "loom/Dialect/AttributeNames.h"
#include "loom/Dialect/Loom/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

using ::mlir::loom::kFwdAttrName;
using ::mlir::loom::kInputAttrName;
using ::mlir::loom::kLrScaleArgName;
using ::mlir::loom::kNameAttrName;
using ::mlir::loom::kParamAttrName;

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_VERIFYTRAINSTEPPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

static bool isRank0(Type type, bool wantFloat) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() != 0)
    return false;
  return wantFloat ? isa<FloatType>(tensor.getElementType())
                   : tensor.getElementType().isSignlessInteger(64);
}

namespace {
struct VerifyTrainStepPass
    : public loom::impl::VerifyTrainStepPassBase<VerifyTrainStepPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;

    // 1. The function.
    auto func = module.lookupSymbol<func::FuncOp>("train_step");
    if (!func || func.isExternal()) {
      module.emitError("loom-verify-train-step: no func.func @train_step "
                       "with a body");
      return signalPassFailure();
    }

    // 3. Arguments, by name.
    llvm::StringMap<Type> argNames;
    unsigned steps = 0;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      Type type = func.getArgumentTypes()[i];
      if (auto param = func.getArgAttrOfType<ParamAttr>(i, kParamAttrName)) {
        argNames[param.getName()] = type;
      } else if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName)) {
        argNames[name.getValue()] = type;
        if (name.getValue() == kLrScaleArgName &&
            !isRank0(type, /*wantFloat=*/true)) {
          func.emitError("loom-verify-train-step: argument `")
              << kLrScaleArgName << "` must be a rank-0 float tensor, got "
              << type;
          ok = false;
        }
        if (name.getValue() == "step") {
          ++steps;
          if (!isRank0(type, /*wantFloat=*/false)) {
            func.emitError("loom-verify-train-step: argument `step` must be "
                           "a rank-0 i64 tensor, got ")
                << type;
            ok = false;
          }
        }
      } else if (!func.getArgAttr(i, kInputAttrName)) {
        func.emitError("loom-verify-train-step: argument #")
            << i << " is neither a #loom.param, a #loom.input nor named";
        ok = false;
      }
    }
    if (steps != 1) {
      func.emitError("loom-verify-train-step: expected exactly one argument "
                     "named `step`, found ")
          << steps;
      ok = false;
    }

    // 2 and 4. Results.
    unsigned numResults = func.getNumResults();
    for (unsigned i = 0; i < numResults; ++i) {
      Type type = func.getResultTypes()[i];
      auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttrName);
      if (!name) {
        func.emitError("loom-verify-train-step: result #")
            << i << " has no `loom.name`";
        ok = false;
        continue;
      }
      if (i == 0) {
        if (name.getValue() != "loss" || !isRank0(type, /*wantFloat=*/true)) {
          func.emitError("loom-verify-train-step: result #0 must be the "
                         "rank-0 float `loss`");
          ok = false;
        }
        continue;
      }
      if (i + 1 == numResults) {
        if (name.getValue() != "step" || !isRank0(type, /*wantFloat=*/false)) {
          func.emitError("loom-verify-train-step: the last result must be "
                         "the rank-0 i64 `step`");
          ok = false;
        }
        continue;
      }
      // Clipping returns the global gradient norm, a loss-scaled step the
      // count of its non-finite gradient elements.
      if (name.getValue() == "grad_norm" ||
          name.getValue() == kFoundInfResultName) {
        if (!isRank0(type, /*wantFloat=*/true)) {
          func.emitError("loom-verify-train-step: result `")
              << name.getValue() << "` must be a rank-0 float";
          ok = false;
        }
        continue;
      }
      // `<param>.grad` results come from `optimizer=none`.
      StringRef argName = name.getValue();
      argName.consume_back(".grad");
      auto it = argNames.find(argName);
      if (it == argNames.end() || it->second != type) {
        func.emitError("loom-verify-train-step: result #")
            << i << " `" << name.getValue()
            << "` names no argument of type " << type;
        ok = false;
      }
    }

    // 5. Ops.
    func.walk([&](Operation *op) {
      if (op == func.getOperation())
        return;
      Dialect *dialect = op->getDialect();
      if (!isa_and_nonnull<LoomDialect, arith::ArithDialect, func::FuncDialect>(
              dialect)) {
        op->emitError("loom-verify-train-step: op from a dialect other than "
                      "loom, arith or func");
        ok = false;
        return;
      }
      if (isa<LoomDialect>(dialect) &&
          !isa_and_nonnull<IntegerAttr>(op->getAttr(kFwdAttrName))) {
        op->emitError("loom-verify-train-step: loom op without an integer "
                      "`loom.fwd` (the forward op it belongs to)");
        ok = false;
      }
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace

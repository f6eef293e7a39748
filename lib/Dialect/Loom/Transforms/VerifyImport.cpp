//===- VerifyImport.cpp - Check the contract of the import phase ----------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The import phase hands every later phase a single-device loss function.
// This pass checks that contract so that a malformed graph is rejected where
// the user can fix it, not deep inside autodiff or the search:
//
//   1. find the entry function (default `@forward`) and require a body;
//   2. require exactly one result, a rank-0 floating-point tensor (the loss);
//   3. require every argument and op result to be a statically shaped ranked
//      tensor of a Loom element type;
//   4. require every op to come from an allowed dialect;
//   5. require every argument's and op result's element count and byte size
//      to fit int64_t: every later size (the search's memory per device,
//      the planner's buffers, the emitted allocations) is computed from
//      them, and MLIR's getNumElements wraps silently (a parameter of
//      2^63 - 1 elements was planned as "6.5 KiB per device, fits").
//
// Every violation is reported (not just the first), then the pass fails.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Loom/Transforms/Passes.h"
#include "loom/Support/InputLimits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace loom {
#define GEN_PASS_DEF_VERIFYIMPORTPASS
#include "loom/Dialect/Loom/Transforms/Passes.h.inc"
} // namespace loom
} // namespace mlir

using namespace mlir;
using namespace mlir::loom;

/// Returns true for the element types Loom's runtimes implement.
static bool isLoomElementType(Type type) {
  return type.isF64() || type.isF32() || type.isBF16() || type.isF16() ||
         type.isSignlessInteger(64) || type.isSignlessInteger(32) ||
         type.isSignlessInteger(1);
}

/// Returns true if `type` is a tensor Loom can lay out over a mesh.
static bool isLoomTensorType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         isLoomElementType(tensor.getElementType()) && !tensor.getEncoding();
}

/// Why the size of `type` (a Loom tensor type) overflows int64_t, or an
/// empty string when it fits.
static std::string describeSizeOverflow(RankedTensorType type) {
  std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
  std::optional<int64_t> count = ::loom::support::getCheckedElementCount(shape);
  if (!count)
    return "its element count overflows int64";
  int64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  if (!::loom::support::getCheckedByteSize(*count, elementBytes))
    return std::to_string(*count) + " elements of " +
           std::to_string(elementBytes) + " bytes overflow int64";
  return "";
}

namespace {
struct VerifyImportPass
    : public mlir::loom::impl::VerifyImportPassBase<VerifyImportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();

    // 1. The entry function.
    auto entry = module.lookupSymbol<func::FuncOp>(entryName);
    if (!entry) {
      module.emitError() << "expected a `func.func @" << entryName
                         << "` computing the loss, found none";
      return signalPassFailure();
    }
    if (entry.isExternal()) {
      entry.emitError() << "expected `@" << entryName
                        << "` to have a body, found a declaration";
      return signalPassFailure();
    }

    bool ok = true;

    // 2. One result: the scalar loss.
    ArrayRef<Type> results = entry.getFunctionType().getResults();
    auto loss = results.size() == 1
                    ? dyn_cast<RankedTensorType>(results.front())
                    : RankedTensorType();
    if (!loss || loss.getRank() != 0 ||
        !isa<FloatType>(loss.getElementType())) {
      entry.emitError() << "expected `@" << entryName
                        << "` to return one rank-0 floating-point tensor "
                           "(the loss), found ("
                        << results << ")";
      ok = false;
    }

    // 3 and 5. Argument types.
    for (BlockArgument arg : entry.getArguments()) {
      if (isLoomTensorType(arg.getType())) {
        auto type = cast<RankedTensorType>(arg.getType());
        if (std::string overflow = describeSizeOverflow(type);
            !overflow.empty()) {
          entry.emitError() << "argument #" << arg.getArgNumber() << " ("
                            << type << "): " << overflow
                            << "; tensor sizes must fit int64 "
                               "(docs/Testing.md, \"Bad input\")";
          ok = false;
        }
        continue;
      }
      entry.emitError() << "argument #" << arg.getArgNumber()
                        << ": expected a statically shaped tensor of f64, f32, "
                           "bf16, f16, i64, i32 or i1, found "
                        << arg.getType();
      ok = false;
    }

    // 3 and 4. Every op and the values it defines.
    entry.walk([&](Operation *op) {
      if (!isa<LoomDialect, arith::ArithDialect, tensor::TensorDialect,
               func::FuncDialect>(op->getDialect())) {
        op->emitError() << "op from dialect `"
                        << op->getName().getDialectNamespace()
                        << "` is not allowed in an imported graph; expected "
                           "loom, arith, tensor or func";
        ok = false;
      }
      for (OpResult result : op->getResults()) {
        if (isLoomTensorType(result.getType())) {
          auto type = cast<RankedTensorType>(result.getType());
          if (std::string overflow = describeSizeOverflow(type);
              !overflow.empty()) {
            op->emitError() << "result #" << result.getResultNumber() << " ("
                            << type << "): " << overflow
                            << "; tensor sizes must fit int64 "
                               "(docs/Testing.md, \"Bad input\")";
            ok = false;
          }
          continue;
        }
        op->emitError() << "result #" << result.getResultNumber()
                        << ": expected a statically shaped tensor of f64, f32, "
                           "bf16, f16, i64, i32 or i1, found "
                        << result.getType();
        ok = false;
      }
    });

    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace

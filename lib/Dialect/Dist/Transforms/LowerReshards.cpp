//===- LowerReshards.cpp - dist-lower-reshards ---------------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Placeholder until the pass lands (being written in parallel).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Dist/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::loom::dist {
#define GEN_PASS_DEF_LOWERRESHARDSPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

namespace {
struct LowerReshardsPass : mlir::loom::dist::impl::LowerReshardsPassBase<LowerReshardsPass> {
  using LowerReshardsPassBase::LowerReshardsPassBase;
  void runOnOperation() override {
    getOperation().emitError("dist-lower-reshards is not implemented yet");
    signalPassFailure();
  }
};
} // namespace

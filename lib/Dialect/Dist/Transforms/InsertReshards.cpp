//===- InsertReshards.cpp - dist-insert-reshards ---------------------------------===//
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
#define GEN_PASS_DEF_INSERTRESHARDSPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

namespace {
struct InsertReshardsPass : mlir::loom::dist::impl::InsertReshardsPassBase<InsertReshardsPass> {
  using InsertReshardsPassBase::InsertReshardsPassBase;
  void runOnOperation() override {
    getOperation().emitError("dist-insert-reshards is not implemented yet");
    signalPassFailure();
  }
};
} // namespace

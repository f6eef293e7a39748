//===- VerifyPartitioned.cpp - dist-verify-partitioned ---------------------------------===//
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
#define GEN_PASS_DEF_VERIFYPARTITIONEDPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

namespace {
struct VerifyPartitionedPass : mlir::loom::dist::impl::VerifyPartitionedPassBase<VerifyPartitionedPass> {
  using VerifyPartitionedPassBase::VerifyPartitionedPassBase;
  void runOnOperation() override {
    getOperation().emitError("dist-verify-partitioned is not implemented yet");
    signalPassFailure();
  }
};
} // namespace

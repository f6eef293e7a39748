//===- PartitionSPMD.cpp - dist-partition-spmd ---------------------------------===//
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
#define GEN_PASS_DEF_PARTITIONSPMDPASS
#include "loom/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace mlir::loom::dist

using namespace mlir;
using namespace mlir::loom::dist;

namespace {
struct PartitionSPMDPass : mlir::loom::dist::impl::PartitionSPMDPassBase<PartitionSPMDPass> {
  using PartitionSPMDPassBase::PartitionSPMDPassBase;
  void runOnOperation() override {
    getOperation().emitError("dist-partition-spmd is not implemented yet");
    signalPassFailure();
  }
};
} // namespace

//===- CollectiveKinds.h - The cost kind of a dist collective ---*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Which collective of the cost model (CollectiveKind) a `dist` op is, by op
// class: the plan report and the pipeline timeline price collectives alike.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_IR_COLLECTIVEKINDS_H
#define LOOM_DIALECT_DIST_IR_COLLECTIVEKINDS_H

#include "loom/Analysis/Layout/Redistribution.h"
#include "loom/Dialect/Dist/IR/DistOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <optional>

namespace mlir::loom::dist {

/// The collective the cost model prices for `op`, if it is one.
inline std::optional<CollectiveKind> getCollectiveKind(Operation *op) {
  using Kind = std::optional<CollectiveKind>;
  return llvm::TypeSwitch<Operation *, Kind>(op)
      .Case([](AllGatherOp) { return CollectiveKind::AllGather; })
      .Case([](AllReduceOp) { return CollectiveKind::AllReduce; })
      .Case([](ReduceScatterOp) { return CollectiveKind::ReduceScatter; })
      .Case([](AllToAllOp) { return CollectiveKind::AllToAll; })
      .Default([](Operation *) { return Kind(); });
}

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_IR_COLLECTIVEKINDS_H

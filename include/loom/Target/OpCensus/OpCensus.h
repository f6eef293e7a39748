//===- OpCensus.h - Count the ops of each function --------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// An op census is a JSON summary of a module: for each function, how many ops
// of each kind it holds. It is how Loom reports the size of a graph (the op
// counts of @train_step, the collectives a partitioning inserted) in a form
// scripts and tests can read.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_OPCENSUS_OPCENSUS_H
#define LOOM_TARGET_OPCENSUS_OPCENSUS_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class ModuleOp;
namespace loom {

/// Writes the op census of `module` to `os` as JSON:
///   {"functions": [{"name": "forward", "arguments": 3, "results": 1,
///                   "total": 5, "ops": {"loom.add": 2, ...}}, ...]}
/// Functions appear in module order; `ops` counts every op nested in the
/// function's body (the function itself excluded), keyed by op name.
LogicalResult writeOpCensus(ModuleOp module, raw_ostream &os);

} // namespace loom
} // namespace mlir

#endif // LOOM_TARGET_OPCENSUS_OPCENSUS_H

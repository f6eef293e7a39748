//===- PlanReport.h - The searched plan, readable ---------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loomc --report`: what dist-search-strategy chose and predicted, for a
// person: the mesh and how its axes map onto nodes, the outer choices, the
// strategy of each forward op (one layer shown when layers are identical),
// the collectives of one step with their bytes and time, the predicted step
// time split into compute, communication and bubble, the memory per device
// with its breakdown, and the model FLOP utilization. The format is in
// docs/Search.md, "Report".
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_PLANREPORT_H
#define LOOM_DIALECT_DIST_TRANSFORMS_PLANREPORT_H

#include "loom/Analysis/Cost/ClusterSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::loom::dist {

/// Writes the report of `module`: after dist-search-strategy and, for the
/// collectives, dist-lower-reshards (before dist-partition-spmd). Fails
/// with an error on the module when it has no single mesh, no entry or no
/// `#dist.plan`.
LogicalResult writePlanReport(ModuleOp module, const ClusterSpec &cluster,
                              llvm::raw_ostream &os);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PLANREPORT_H

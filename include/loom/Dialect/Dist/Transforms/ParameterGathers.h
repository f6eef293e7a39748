//===- ParameterGathers.h - ZeRO-3 gathers per layer -----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Under ZeRO-3 a parameter is stored split over the data-parallel axes and
// every op that reads it reads a gathered copy (a `dist.reshard` of the
// argument). Layout assignment makes one such reshard per (parameter,
// layout) at the start of the step, so the gathered copies of all layers are
// live together from the first forward op to the last backward op. This
// re-issues each gather once per *unit* of use — a run of consecutive ops of
// one layer and micro-batch (its forward, or its backward) — and places it
// one unit ahead (prefetch), so a gathered copy lives from the previous
// unit's first op to its own unit's last op, and the step holds about two
// units of whole parameters at a time (docs/Partitioning.md, "ZeRO").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_PARAMETERGATHERS_H
#define LOOM_DIALECT_DIST_TRANSFORMS_PARAMETERGATHERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>

namespace mlir::loom::dist {

/// What scheduleParameterGathers did, for remarks and tests.
struct ParameterGatherStats {
  /// Units of use found (each gets its own gathers).
  int64_t units = 0;
  /// Gathers (reshards of parameter arguments) before and after.
  int64_t gathersBefore = 0;
  int64_t gathersAfter = 0;
};

/// Re-issues every `dist.reshard` of a `loom.param` argument of `func`
/// once per unit of use and moves it before the previous unit's first op
/// (see the file comment). Nothing else changes: the reshards keep their
/// layouts, so lowering turns each into the same collectives as before.
ParameterGatherStats scheduleParameterGathers(func::FuncOp func);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PARAMETERGATHERS_H

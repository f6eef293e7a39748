//===- Pointwise.h - Shared rules of the pointwise ops ----------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Type inference, sharding rule and cost shared by every pointwise op. The
// ODS base classes of the plain binary and unary ops (Ops/Elementwise.td)
// define those ops' methods with these helpers through
// `extraClassDefinition`, so the generated op definitions include this file;
// the other elementwise ops call them from Elementwise.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_LOOM_IR_OPS_POINTWISE_H
#define LOOM_LIB_DIALECT_LOOM_IR_OPS_POINTWISE_H

#include "loom/Interfaces/Cost.h"
#include "loom/Interfaces/ShardingRule.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir {
namespace loom {
namespace detail {

/// Infers the result of a binary elementwise op with numpy broadcasting.
/// Checks C1 (one element type) and C2 (broadcast-compatible shapes).
LogicalResult inferBroadcastBinary(std::optional<Location> location, Value lhs,
                                   Value rhs, SmallVectorImpl<Type> &inferred);

/// Returns the rule of a pointwise op: one parallel factor per result dim,
/// absent from operands that broadcast along it; `linear` for an op linear in
/// all its operands jointly (OpShardingRule::isLinear).
OpShardingRule getPointwiseRule(Operation *op, bool globalIndexed = false,
                                bool linear = false);

/// Returns the cost of a pointwise op doing `flopsPerElement` FLOPs per
/// result element and streaming its operands and results once.
OpCost getPointwiseCost(Operation *op, const OpShapes &shapes,
                        double flopsPerElement);

} // namespace detail
} // namespace loom
} // namespace mlir

#endif // LOOM_LIB_DIALECT_LOOM_IR_OPS_POINTWISE_H

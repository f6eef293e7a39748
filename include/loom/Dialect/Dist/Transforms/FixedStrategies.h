//===- FixedStrategies.h - User strategies as fixed factors -----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What the user fixed (`dist.strategy` attributes, strategy-file op entries,
// an expanded parallel config), resolved through each forward op's sharding
// rule into *fixed factors*. Layout assignment completes the free factors by
// following producers; the strategy search enumerates only candidates that
// keep the fixed ones. Both call resolveFixedStrategies, so a constraint
// means the same thing to both.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_FIXEDSTRATEGIES_H
#define LOOM_DIALECT_DIST_TRANSFORMS_FIXEDSTRATEGIES_H

#include "loom/Analysis/Strategy/FollowProducers.h"
#include "loom/Analysis/Strategy/ShardingSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace mlir::loom::dist {

/// The factors the user fixed, per forward op.
struct FixedStrategies {
  /// One entry per factor of the op's rule (std::nullopt where free).
  llvm::DenseMap<Operation *, FixedFactors> factors;
  /// Where each op's constraints came from, for messages.
  llvm::DenseMap<Operation *, std::vector<std::string>> origins;
  /// The pending-sum axes of ops whose `dist.strategy` attribute gives them
  /// (kept as given).
  llvm::DenseMap<Operation *, Layout::AxisList> partial;
  /// The forward op of each `loom.fwd` id: the first op carrying it.
  llvm::DenseMap<int64_t, Operation *> forwardOps;
};

/// The name users give argument `index` of `func`: its parameter name, its
/// `loom.name` (optimizer states, the step counter) or its input role; empty
/// when it has none.
std::string getArgumentName(func::FuncOp func, unsigned index);

/// The forward op of each `loom.fwd` id in `body`: the first op carrying it.
llvm::DenseMap<int64_t, Operation *> findForwardOps(Block &body);

/// Resolves `dist.strategy` attributes (which must name `meshRef`) and the
/// op entries of `spec` on the forward ops of `func`'s single block against
/// `mesh`. Emits an error naming the op, the operand and the dim, and fails,
/// on a bad or contradictory constraint.
FailureOr<FixedStrategies> resolveFixedStrategies(func::FuncOp func,
                                                  const Mesh &mesh,
                                                  FlatSymbolRefAttr meshRef,
                                                  const ShardingSpec &spec);

} // namespace mlir::loom::dist

#endif // LOOM_DIALECT_DIST_TRANSFORMS_FIXEDSTRATEGIES_H

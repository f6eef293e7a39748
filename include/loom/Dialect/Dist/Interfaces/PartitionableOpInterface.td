//===- PartitionableOpInterface.td - Partitioning an op -*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_TD
#define LOOM_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def PartitionableOpInterface : OpInterface<"PartitionableOpInterface"> {
  let cppNamespace = "::mlir::loom::dist";
  let description = [{
    Rewrites one op of the global program into the local ops every rank
    runs, given a strategy (mesh axes per sharding-rule factor), and tells
    the strategy search and layout assignment which strategies the rewrite
    implements. The sharding rule (ShardingRuleOpInterface) says what a
    split means; this interface says how the op carries it out, as upstream
    MLIR's `ShardingInterface::partition` does.

    Most ops need nothing: their factors are parallel, reduction or
    need-replication and none is globally indexed, so each rank runs the op
    unchanged on its blocks (the default `partition` gives the results their
    local types). Ops with op-partitioned or globally indexed factors need
    their own rewrite. Loom's ops get theirs as external models registered
    from the dist side (`registerPartitionModels`), so the `loom` dialect
    does not depend on `dist`; an op without the interface is partitioned
    as the defaults say (`partitionOp`, `isSplitSupported`).
  }];

  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        Whether `partition` implements a strategy that splits exactly the
        factors `splitFactors` of `rule` (this op's rule). The strategy
        search and layout assignment never choose a strategy for which this
        is false. By default a split of an op-partitioned or globally
        indexed factor is not implemented: the default rewrite only changes
        types.
      }],
      /*retTy=*/"bool",
      /*methodName=*/"isSplitSupported",
      /*args=*/(ins "const ::mlir::loom::OpShardingRule &":$rule,
                    "::llvm::ArrayRef<int64_t>":$splitFactors),
      /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        return ::mlir::loom::dist::isSplitSupportedByDefault(rule,
                                                            splitFactors);
      }]>,
    InterfaceMethod<
      /*desc=*/[{
        Whether `partition` implements the strategy `factorAxes` on `mesh`
        beyond which factors it splits (isSplitSupported): sizes the
        rewrite needs, such as ring attention's even sequence block per
        device. The strategy search and layout assignment skip a strategy
        for which this is false. By default every size is fine.
      }],
      /*retTy=*/"bool",
      /*methodName=*/"fitsMesh",
      /*args=*/(ins "const ::mlir::loom::OpShardingRule &":$rule,
                    "const ::mlir::loom::dist::FactorAxes &":$factorAxes,
                    "const ::mlir::loom::dist::Mesh &":$mesh),
      /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        return true;
      }]>,
    InterfaceMethod<
      /*desc=*/[{
        Rewrites this op into local ops that compute, on every rank, its
        block of each result under `context.layouts.results`. The operands
        are already local values; the result types are still global.
        `builder` is positioned before the op. A rewrite that replaces the
        op replaces all uses of its results and erases it. Emits an error
        on the op (naming the factor and the axes) and fails when it does
        not support the strategy. By default the results take their local
        types in place.
      }],
      /*retTy=*/"::llvm::LogicalResult",
      /*methodName=*/"partition",
      /*args=*/(ins "const ::mlir::loom::dist::OpPartitionContext &":$context,
                    "::mlir::OpBuilder &":$builder),
      /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        return ::mlir::loom::dist::setLocalResultTypes($_op, context);
      }]>,
  ];
}

#endif // LOOM_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_TD

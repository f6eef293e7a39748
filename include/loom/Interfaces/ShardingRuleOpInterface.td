//===- ShardingRuleOpInterface.td - How an op may be split -*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERFACES_SHARDINGRULEOPINTERFACE_TD
#define LOOM_INTERFACES_SHARDINGRULEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::mlir::loom";
  let description = [{
    Describes how an op's work may be divided over devices, independently of
    any mesh. Every dim of every operand and result is mapped to factors
    (most dims to one factor; a reshape dim that merges or splits dims to
    several); a factor split over mesh axes splits every dim it appears in
    alike. The factor's kind says what a split means: `parallel` (no
    communication), `reduction` (results become partial sums),
    `need_replication` (may not be split), `op_partitioned` (the op
    implements the split itself, e.g. ring attention).

    The strategy search enumerates assignments of mesh axes to factors; the
    partitioner derives every operand and result layout from one assignment.
    See include/loom/Interfaces/ShardingRule.h.
  }];

  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns the sharding rule of this op for its static types.",
      /*retTy=*/"::mlir::loom::OpShardingRule",
      /*methodName=*/"getShardingRule",
      /*args=*/(ins)>,
  ];
}

#endif // LOOM_INTERFACES_SHARDINGRULEOPINTERFACE_TD

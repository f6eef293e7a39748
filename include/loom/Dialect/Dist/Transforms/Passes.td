//===- Passes.td - dist dialect passes ---------------------*- tablegen -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The partition phase: layout assignment, redistribution, SPMD partitioning.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def InsertReshardsPass : Pass<"dist-insert-reshards", "::mlir::ModuleOp"> {
  let summary = "Give every value a layout and insert dist.reshard where "
                "a producer's layout differs from what a consumer needs";
  let description = [{
    Layout assignment for the global training step. Inputs: `dist.strategy`
    attributes on ops, `dist.annotate` ops, `dist.layout` argument
    attributes, and (through options) a strategy file and a parallel
    config, which are expanded into the former first. Ops left unset follow
    their producers (data parallel on the batch, from the inputs). See
    docs/Partitioning.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect"];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"train_step\"",
           "Function to partition (falls back to `forward` when absent)">,
    Option<"meshSpec", "mesh", "std::string", /*default=*/"\"\"",
           "Mesh to create when the module has none, e.g. `dp=2,tp=2`">,
    Option<"strategyFile", "strategy", "std::string", /*default=*/"\"\"",
           "Strategy file (JSON) with per-op splits">,
    Option<"parallelConfig", "parallel-config", "std::string",
           /*default=*/"\"\"",
           "MindSpore-style parallel config: inline JSON or a file path">,
    Option<"planJson", "plan-json", "std::string", /*default=*/"\"\"",
           "Write the plan (mesh, strategies, layouts, reshards) as JSON "
           "to this file ('-' for stdout)">,
  ];
}

def LowerReshardsPass : Pass<"dist-lower-reshards", "::mlir::ModuleOp"> {
  let summary = "Replace each dist.reshard by the cheapest chain of "
                "collectives";
  let description = [{
    Each `dist.reshard %g from L1 to L2` becomes a cast of the global value
    to its local type under L1 (`builtin.unrealized_conversion_cast`), the
    chain of collectives the redistribution planner finds, and a cast back.
    `dist-partition-spmd` folds the casts. See docs/Redistribution.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per reshard with its chain and cost">,
  ];
}

def PartitionSPMDPass : Pass<"dist-partition-spmd", "::mlir::ModuleOp"> {
  let summary = "Rewrite the global program into the per-rank program";
  let description = [{
    Turns every global tensor type into the local type its layout gives,
    folds the casts `dist-lower-reshards` left, passes rank-dependent block
    offsets to ops whose computation depends on them (through
    `dist.axis_index`), and expands op-partitioned factors
    (vocab-parallel embedding and cross-entropy, heads-split attention).
    See docs/Partitioning.md.
  }];
  let dependentDialects = ["::mlir::loom::dist::DistDialect",
                           "::mlir::arith::ArithDialect"];
}

def VerifyPartitionedPass : Pass<"dist-verify-partitioned",
                                 "::mlir::ModuleOp"> {
  let summary = "Check the contract of a partitioned module";
  let description = [{
    Ends the partition phase: no `dist.reshard`, `dist.annotate` or casts
    are left, every value is a local tensor, and every collective's shapes
    agree with its mesh. Changes nothing.
  }];
}

#endif // LOOM_DIALECT_DIST_TRANSFORMS_PASSES_TD

// RUN: loom-opt %s -verify-diagnostics -loom-recompute
// RUN: not loom-opt %s -loom-recompute='layers=0,x' 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not loom-opt %s -loom-recompute=entry=step 2>&1 | FileCheck %s --check-prefix=ENTRY

// The options: a layer list that is not a list of indices, a missing
// function (an index no layer has: recompute-layers.mlir).
// LIST: error: loom-recompute: layers: expected all, none, plan or a comma list of layer indices, found '0,x'
// ENTRY: error: loom-recompute: no function @step with one block

// Without a result named `loss` there is no forward to find.
// expected-error @+1 {{loom-recompute: @train_step has no result named `loss`}}
func.func @train_step(%w: tensor<3xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>}) -> (tensor<f64> {loom.name = "cost"}) {
  %y = loom.tanh %w {loom.fwd = 0 : i64} : tensor<3xf64>
  %l = loom.reduce_sum %y {axes = array<i64: 0>, loom.fwd = 1 : i64} : (tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}


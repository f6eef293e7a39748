// RUN: loom-opt %s -split-input-file -loom-autodiff=optimizer=sgd -loom-recompute 2>/dev/null | FileCheck %s
// RUN: loom-opt %s -split-input-file -loom-autodiff=optimizer=sgd -loom-recompute 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// Two residual layers named by their parameters (`h.0.w`, `h.1.w`) and a
// head (`head.w`, no layer): each layer's matmul and tanh run again right
// before the first backward op that reads them, the backward reads the
// clones, and the layer's output (the next layer's input, %[[H1]]) is kept
// rather than recomputed. The head is not a layer.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W0:[^:]*]]: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w"
// CHECK-SAME: %[[W1:[^:]*]]: tensor<4x4xf64> {loom.param = #loom.param<"h.1.w"
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf64> {loom.name = "x"}
// CHECK: %[[A0:.*]] = loom.matmul %[[X]], %[[W0]] {loom.fwd = 0 : i64}
// CHECK: %[[T0:.*]] = loom.tanh %[[A0]] {loom.fwd = 1 : i64}
// CHECK: %[[H1:.*]] = loom.add %[[X]], %[[T0]] {loom.fwd = 2 : i64}
// CHECK: %[[A1:.*]] = loom.matmul %[[H1]], %[[W1]] {loom.fwd = 3 : i64}
// CHECK: %[[T1:.*]] = loom.tanh %[[A1]] {loom.fwd = 4 : i64}
// CHECK: %[[H2:.*]] = loom.add %[[H1]], %[[T1]] {loom.fwd = 5 : i64}
// The head's backward reads the last residual stream, kept as it is.
// CHECK: loom.matmul %[[H2]], %{{.*}} {loom.fwd = 6 : i64, transpose_lhs}
// CHECK-NOT: loom.add {{.*}}loom.recompute
// CHECK: %[[A1R:.*]] = loom.matmul %[[H1]], %[[W1]] {loom.fwd = 3 : i64, loom.recompute}
// CHECK-NEXT: %[[T1R:.*]] = loom.tanh %[[A1R]] {loom.fwd = 4 : i64, loom.recompute}
// CHECK-NEXT: loom.mul %[[T1R]], %[[T1R]] {loom.fwd = 4 : i64}
// CHECK: %[[A0R:.*]] = loom.matmul %[[X]], %[[W0]] {loom.fwd = 0 : i64, loom.recompute}
// CHECK-NEXT: %[[T0R:.*]] = loom.tanh %[[A0R]] {loom.fwd = 1 : i64, loom.recompute}
// CHECK-NEXT: loom.mul %[[T0R]], %[[T0R]] {loom.fwd = 1 : i64}
// CHECK-NOT: loom.recompute
// CHECK: return

// REMARK: remark: recomputing layer 'h.0' before its backward: 2 of 3 forward ops cloned
// REMARK: remark: recomputing layer 'h.1' before its backward: 2 of 3 forward ops cloned
func.func @forward(%w0: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
                   %w1: tensor<4x4xf64> {loom.param = #loom.param<"h.1.w", init = zeros, decay = true>},
                   %wf: tensor<4x4xf64> {loom.param = #loom.param<"head.w", init = zeros, decay = true>},
                   %x: tensor<2x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %a0 = loom.matmul %x, %w0 : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %t0 = loom.tanh %a0 : tensor<2x4xf64>
  %h1 = loom.add %x, %t0 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %a1 = loom.matmul %h1, %w1 : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %t1 = loom.tanh %a1 : tensor<2x4xf64>
  %h2 = loom.add %h1, %t1 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %y = loom.matmul %h2, %wf : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %l = loom.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// -----

// A dropout inside a layer is cloned with its seed, so it redraws the same
// mask; the loss's reduction, which no backward op reads, is not cloned.
// CHECK-LABEL: func.func @train_step
// CHECK: loom.dropout %{{.*}} {loom.fwd = 1 : i64, rate = 5.000000e-01 : f64, seed = 7 : i64}
// CHECK: %[[AR:.*]] = loom.matmul {{.*}}loom.recompute
// CHECK-NEXT: %[[DR:.*]] = loom.dropout %[[AR]] {loom.fwd = 1 : i64, loom.recompute, rate = 5.000000e-01 : f64, seed = 7 : i64}
// CHECK-NEXT: loom.tanh %[[DR]] {loom.fwd = 2 : i64, loom.recompute}
// CHECK-NOT: loom.reduce_sum {{.*}}loom.recompute
// REMARK: remark: recomputing layer 'blocks.0' before its backward: 3 of 4 forward ops cloned
func.func @forward(%w0: tensor<4x4xf64> {loom.param = #loom.param<"blocks.0.w", init = zeros, decay = true>},
                   %x: tensor<2x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %a0 = loom.matmul %x, %w0 : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %d0 = loom.dropout %a0 {rate = 0.5 : f64, seed = 7 : i64} : tensor<2x4xf64>
  %t0 = loom.tanh %d0 : tensor<2x4xf64>
  %l = loom.reduce_sum %t0 {axes = array<i64: 0, 1>} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// -----

// A layer whose backward reads none of its values (a bias add: its VJP is
// the gradient itself) has nothing to recompute.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: loom.recompute
// REMARK: remark: no chosen layer keeps values for backward; nothing recomputed
func.func @forward(%b: tensor<4xf64> {loom.param = #loom.param<"layers.1.bias", init = zeros, decay = false>},
                   %x: tensor<2x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %y = loom.add %x, %b : (tensor<2x4xf64>, tensor<4xf64>) -> tensor<2x4xf64>
  %l = loom.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

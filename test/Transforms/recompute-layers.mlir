// RUN: loom-opt %s -loom-autodiff=optimizer=sgd -loom-recompute=layers=1 2>/dev/null | FileCheck %s --check-prefix=ONE
// RUN: loom-opt %s -loom-autodiff=optimizer=sgd -loom-recompute=layers=none 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: loom-opt %s -loom-autodiff=optimizer=sgd -loom-recompute='layers=1,0' 2>/dev/null | FileCheck %s --check-prefix=BOTH
// RUN: not loom-opt %s -loom-autodiff=optimizer=sgd -loom-recompute=layers=3 2>&1 | FileCheck %s --check-prefix=MISSING

// The `layers` option picks layers by the number in their parameter names.

// Only layer 1: layer 0's backward still reads the forward's tanh.
// ONE-LABEL: func.func @train_step
// ONE: %[[T0:.*]] = loom.tanh %{{.*}} {loom.fwd = 1 : i64}
// ONE: loom.tanh {{.*}}{loom.fwd = 4 : i64, loom.recompute}
// ONE-NOT: loom.recompute
// ONE: loom.mul %[[T0]], %[[T0]] {loom.fwd = 1 : i64}

// NONE-LABEL: func.func @train_step
// NONE-NOT: loom.recompute

// An index no layer has is an error naming the indices there are.
// MISSING: error: loom-recompute: layers: no layer 3 (parameter names have layer indices 0..1)

// BOTH-LABEL: func.func @train_step
// BOTH: loom.tanh {{.*}}{loom.fwd = 4 : i64, loom.recompute}
// BOTH: loom.tanh {{.*}}{loom.fwd = 1 : i64, loom.recompute}
func.func @forward(%w0: tensor<4x4xf64> {loom.param = #loom.param<"model.layers.0.w", init = zeros, decay = true>},
                   %w1: tensor<4x4xf64> {loom.param = #loom.param<"model.layers.1.w", init = zeros, decay = true>},
                   %x: tensor<2x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %a0 = loom.matmul %x, %w0 : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %t0 = loom.tanh %a0 : tensor<2x4xf64>
  %h1 = loom.add %x, %t0 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %a1 = loom.matmul %h1, %w1 : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %t1 = loom.tanh %a1 : tensor<2x4xf64>
  %h2 = loom.add %h1, %t1 : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %l = loom.reduce_sum %h2 {axes = array<i64: 0, 1>} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

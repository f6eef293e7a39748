// RUN: loom-opt %s -split-input-file -loom-autodiff='optimizer=sgd lr=1.0 weight-decay=0.0' -loom-verify-train-step 2>/dev/null | FileCheck %s

// A tied weight: both uses of %w contribute, summed by one add that belongs
// to the op whose VJP produced the second contribution (forward op 0, the
// mul, sees its own operand twice). The update belongs to the first user.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:.*]]: tensor<3xf64> {loom.param = #loom.param<"w"
// CHECK-SAME: %[[LRS:[^:]*]]: tensor<f64> {loom.name = "lr_scale"}
// CHECK-SAME: {loom.name = "step"}
// CHECK-SAME: -> (tensor<f64> {loom.name = "loss"}, tensor<3xf64> {loom.name = "w"}, tensor<i64> {loom.name = "step"})
// CHECK: %[[Y:.*]] = loom.mul %[[W]], %[[W]] {loom.fwd = 0 : i64}
// CHECK: %[[G1:.*]] = loom.mul %{{.*}}, %[[W]] {loom.fwd = 0 : i64}
// CHECK: %[[G2:.*]] = loom.mul %{{.*}}, %[[W]] {loom.fwd = 0 : i64}
// CHECK: %[[G:.*]] = loom.add %[[G1]], %[[G2]] {loom.fwd = 0 : i64}
// CHECK: loom.sgd_update %[[W]], %[[G]] lr_scale(%[[LRS]]) {{{.*}}loom.fwd = 0 : i64
func.func @forward(%w: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}) -> tensor<f64> {
  %y = loom.mul %w, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %l = loom.reduce_sum %y {axes = array<i64: 0>} : (tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// -----

// Broadcasting: the bias gradient sums over the broadcast batch dim; the
// matmul's weight gradient is a transposed product (no transpose op); the
// input, data, gets no gradient.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x3xf64>
// CHECK-SAME: %[[B:[^:]*]]: tensor<3xf64>
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf64> {loom.name = "x"}
// CHECK: %[[DY:.*]] = loom.add %{{.*}} {loom.fwd = 2 : i64} : (tensor<2x3xf64>, tensor<1x1xf64>) -> tensor<2x3xf64>
// CHECK: %[[DB:.*]] = loom.reduce_sum %[[DY]] {axes = array<i64: 0>, loom.fwd = 1 : i64} : (tensor<2x3xf64>) -> tensor<3xf64>
// CHECK: %[[DW:.*]] = loom.matmul %[[X]], %[[DY]] {loom.fwd = 0 : i64, transpose_lhs} : (tensor<2x4xf64>, tensor<2x3xf64>) -> tensor<4x3xf64>
// CHECK-NOT: loom.transpose
// CHECK: loom.sgd_update %[[W]], %[[DW]] lr_scale(%{{.*}}) {{{.*}}loom.fwd = 0 : i64
// CHECK: loom.sgd_update %[[B]], %[[DB]] lr_scale(%{{.*}}) {{{.*}}loom.fwd = 1 : i64
func.func @forward(%w: tensor<4x3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %b: tensor<3xf64> {loom.param = #loom.param<"b", init = zeros, decay = false>},
                   %x: tensor<2x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %h = loom.matmul %x, %w : (tensor<2x4xf64>, tensor<4x3xf64>) -> tensor<2x3xf64>
  %y = loom.add %h, %b : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  %l = loom.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<2x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// -----

// A parameter that does not reach the loss keeps its value; values that do
// not depend on a parameter get no backward ops.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[^:]*]]: tensor<3xf64>
// CHECK-SAME: %[[U:[^:]*]]: tensor<3xf64>
// CHECK-NOT: loom.exp {{.*}}loom.fwd = 1
// CHECK: %[[NEW:.*]] = loom.sgd_update %[[W]]
// CHECK-NOT: loom.sgd_update
// CHECK: return %{{.*}}, %[[NEW]], %[[U]], %{{.*}} :
func.func @forward(%w: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %u: tensor<3xf64> {loom.param = #loom.param<"unused", init = zeros, decay = true>},
                   %x: tensor<3xf64> {loom.name = "x"}) -> tensor<f64> {
  %e = loom.exp %x : tensor<3xf64>
  %y = loom.mul %e, %w : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %l = loom.reduce_sum %y {axes = array<i64: 0>} : (tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// RUN: loom-opt %s -split-input-file -verify-diagnostics=only-expected -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' 2>/dev/null | FileCheck %s

// A slice names absolute indices. Along the batch dim, on a micro-batch it
// takes from the micro-batch's rows what it took from the batch's: every
// second row of the batch of 8 is every second row of each micro-batch of
// 4, so its limit becomes 4 (it kept the batch's 8, and the micro-batch
// step failed to type). The other dims keep their indices. The backward,
// rebuilt through the slice's VJP, pads back into the micro-batch's rows.
// CHECK-LABEL: func.func @train_step
// CHECK: loom.slice %{{.*}} {limits = array<i64: 4, 3>, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64, starts = array<i64: 0, 1>, strides = array<i64: 2, 1>} : (tensor<4x3xf64>) -> tensor<2x2xf64>
// CHECK: loom.slice %{{.*}} {limits = array<i64: 4, 3>, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64, starts = array<i64: 0, 1>, strides = array<i64: 2, 1>} : (tensor<4x3xf64>) -> tensor<2x2xf64>
func.func @forward(%w: tensor<2xf64> {loom.param = #loom.param<"w", init = zeros, decay = false>}, %x: tensor<8x3xf64> {loom.name = "x"}) -> tensor<f64> {
  %0 = loom.slice %x {starts = array<i64: 0, 1>, limits = array<i64: 8, 3>, strides = array<i64: 2, 1>} : (tensor<8x3xf64>) -> tensor<4x2xf64>
  %1 = loom.mul %0, %w : (tensor<4x2xf64>, tensor<2xf64>) -> tensor<4x2xf64>
  %2 = loom.reduce_sum %1 {axes = array<i64: 0, 1>} : (tensor<4x2xf64>) -> tensor<f64>
  return %2 : tensor<f64>
}

// -----

// Rows 1 to 7 of the batch are not the same rows of every micro-batch.
func.func @forward(%w: tensor<2xf64> {loom.param = #loom.param<"w", init = zeros, decay = false>}, %x: tensor<8x3xf64> {loom.name = "x"}) -> tensor<f64> {
  // expected-error @+1 {{cannot split this slice into micro-batches: it takes rows [1, 8) step 1 of the batch's 8, which are not the same rows of every micro-batch of 4}}
  %0 = loom.slice %x {starts = array<i64: 1, 1>, limits = array<i64: 8, 3>, strides = array<i64: 1, 1>} : (tensor<8x3xf64>) -> tensor<7x2xf64>
  %1 = loom.mul %0, %w : (tensor<7x2xf64>, tensor<2xf64>) -> tensor<7x2xf64>
  %2 = loom.reduce_sum %1 {axes = array<i64: 0, 1>} : (tensor<7x2xf64>) -> tensor<f64>
  return %2 : tensor<f64>
}

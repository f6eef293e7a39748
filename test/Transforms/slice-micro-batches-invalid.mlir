// RUN: loom-opt %s -split-input-file -verify-diagnostics -loom-slice-micro-batches='micro-batches=3'
// RUN: not loom-opt %s -split-input-file -loom-slice-micro-batches='micro-batches=0' 2>&1 | FileCheck %s --check-prefix=ZERO

// ZERO: error: loom-slice-micro-batches: micro-batches must be >= 1, found 0

// Every batch argument splits into the micro-batches along dim 0, before
// anything is sized by their count.
// expected-error @+1 {{loom-slice-micro-batches: batch argument #2 of type 'tensor<4x3xf64>' does not split into 3 micro-batches along dim 0}}
func.func @train_step(%arg0: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}, %arg1: tensor<i64> {loom.name = "step"}, %arg2: tensor<4x3xf64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "loss"}, tensor<3xf64> {loom.name = "w"}, tensor<i64> {loom.name = "step"}) {
  %0 = loom.mul %arg2, %arg0 {loom.fwd = 0 : i64} : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4x3xf64>
  %1 = loom.reduce_sum %0 {axes = array<i64: 0, 1>, loom.fwd = 1 : i64} : (tensor<4x3xf64>) -> tensor<f64>
  %cst = arith.constant dense<1.000000e+00> : tensor<f64>
  %2 = loom.reshape %cst {loom.fwd = 1 : i64} : tensor<f64> to tensor<1x1xf64>
  %cst_0 = arith.constant {loom.fwd = 1 : i64} dense<0.000000e+00> : tensor<4x3xf64>
  %3 = loom.add %cst_0, %2 {loom.fwd = 1 : i64} : (tensor<4x3xf64>, tensor<1x1xf64>) -> tensor<4x3xf64>
  %4 = loom.mul %3, %arg2 {loom.fwd = 0 : i64} : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
  %5 = loom.reduce_sum %4 {axes = array<i64: 0>, loom.fwd = 0 : i64} : (tensor<4x3xf64>) -> tensor<3xf64>
  %new_param = loom.sgd_update %arg0, %5 {loom.fwd = 0 : i64, lr = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %cst_1 = arith.constant dense<1> : tensor<i64>
  %6 = loom.add %arg1, %cst_1 {loom.fwd = 1 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %1, %new_param, %6 : tensor<f64>, tensor<3xf64>, tensor<i64>
}

// -----

// Without a batch argument there is nothing to split.
// expected-error @+1 {{loom-slice-micro-batches: 3 micro-batches need a batch argument to split, and @train_step has none}}
func.func @train_step(%arg0: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}, %arg1: tensor<i64> {loom.name = "step"}) -> (tensor<f64> {loom.name = "loss"}, tensor<3xf64> {loom.name = "w"}, tensor<i64> {loom.name = "step"}) {
  %0 = loom.reduce_sum %arg0 {axes = array<i64: 0>, loom.fwd = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  %cst_1 = arith.constant dense<1> : tensor<i64>
  %1 = loom.add %arg1, %cst_1 {loom.fwd = 0 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %0, %arg0, %1 : tensor<f64>, tensor<3xf64>, tensor<i64>
}

// -----

// A function without the step counter is no step loom-autodiff built.
// expected-error @+1 {{loom-slice-micro-batches: @train_step has no `step` argument (a rank-0 i64 named `step`): not a step loom-autodiff built}}
func.func @train_step(%arg0: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}, %arg2: tensor<3x3xf64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "loss"}) {
  %0 = loom.mul %arg2, %arg0 {loom.fwd = 0 : i64} : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3x3xf64>
  %1 = loom.reduce_sum %0 {axes = array<i64: 0, 1>, loom.fwd = 1 : i64} : (tensor<3x3xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}

// -----

// A step split already cannot be split again.
// expected-error @+1 {{loom-slice-micro-batches: @train_step is split into 2 micro-batches already; only the one-micro-batch step loom-autodiff builds can be split (into 3)}}
func.func @train_step(%arg0: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}, %arg1: tensor<i64> {loom.name = "step"}, %arg2: tensor<6x3xf64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "loss"}, tensor<3xf64> {loom.name = "w"}, tensor<i64> {loom.name = "step"}) {
  %0 = loom.slice %arg2 {limits = array<i64: 3, 3>, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64, starts = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<6x3xf64>) -> tensor<3x3xf64>
  %1 = loom.slice %arg2 {limits = array<i64: 6, 3>, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64, starts = array<i64: 3, 0>, strides = array<i64: 1, 1>} : (tensor<6x3xf64>) -> tensor<3x3xf64>
  %2 = loom.mul %0, %arg0 {loom.fwd = 0 : i64, loom.micro_batch = 0 : i64} : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3x3xf64>
  %3 = loom.reduce_sum %2 {axes = array<i64: 0, 1>, loom.fwd = 1 : i64, loom.micro_batch = 0 : i64} : (tensor<3x3xf64>) -> tensor<f64>
  %cst_1 = arith.constant dense<1> : tensor<i64>
  %4 = loom.add %arg1, %cst_1 {loom.fwd = 1 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %3, %arg0, %4 : tensor<f64>, tensor<3xf64>, tensor<i64>
}

// -----

// The forward (the ops up to the loss's) carries the forward op ids.
func.func @train_step(%arg0: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}, %arg1: tensor<i64> {loom.name = "step"}, %arg2: tensor<3x3xf64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "loss"}, tensor<3xf64> {loom.name = "w"}, tensor<i64> {loom.name = "step"}) {
  // expected-error @+1 {{has no integer `loom.fwd`: @train_step is not the step loom-autodiff built}}
  %0 = loom.mul %arg2, %arg0 : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3x3xf64>
  %1 = loom.reduce_sum %0 {axes = array<i64: 0, 1>, loom.fwd = 1 : i64} : (tensor<3x3xf64>) -> tensor<f64>
  %cst_1 = arith.constant dense<1> : tensor<i64>
  %2 = loom.add %arg1, %cst_1 {loom.fwd = 1 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %1, %arg0, %2 : tensor<f64>, tensor<3xf64>, tensor<i64>
}

// -----

// A reshape that does not keep the batch dim leading cannot be split.
func.func @train_step(%arg0: tensor<6xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}, %arg1: tensor<i64> {loom.name = "step"}, %arg2: tensor<3x4xf64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "loss"}, tensor<6xf64> {loom.name = "w"}, tensor<i64> {loom.name = "step"}) {
  // expected-error @+1 {{cannot split this reshape into micro-batches}}
  %0 = loom.reshape %arg2 {loom.fwd = 0 : i64} : tensor<3x4xf64> to tensor<2x6xf64>
  %1 = loom.mul %0, %arg0 {loom.fwd = 1 : i64} : (tensor<2x6xf64>, tensor<6xf64>) -> tensor<2x6xf64>
  %2 = loom.reduce_sum %1 {axes = array<i64: 0, 1>, loom.fwd = 2 : i64} : (tensor<2x6xf64>) -> tensor<f64>
  %cst_1 = arith.constant dense<1> : tensor<i64>
  %3 = loom.add %arg1, %cst_1 {loom.fwd = 2 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %2, %arg0, %3 : tensor<f64>, tensor<6xf64>, tensor<i64>
}

// -----

// A parameter the loss depends on has an update in the step.
// expected-error @+1 {{loom-slice-micro-batches: found no update of parameter #0, which has a gradient}}
func.func @train_step(%arg0: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}, %arg1: tensor<i64> {loom.name = "step"}, %arg2: tensor<3x3xf64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "loss"}, tensor<3xf64> {loom.name = "w"}, tensor<i64> {loom.name = "step"}) {
  %0 = loom.mul %arg2, %arg0 {loom.fwd = 0 : i64} : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3x3xf64>
  %1 = loom.reduce_sum %0 {axes = array<i64: 0, 1>, loom.fwd = 1 : i64} : (tensor<3x3xf64>) -> tensor<f64>
  %cst_1 = arith.constant dense<1> : tensor<i64>
  %2 = loom.add %arg1, %cst_1 {loom.fwd = 1 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %1, %arg0, %2 : tensor<f64>, tensor<3xf64>, tensor<i64>
}

// -----

// The tail (sums of gradient parts, clipping, updates, step + 1) reads the
// forward's loss and the backward's gradient parts, nothing else.
func.func @train_step(%arg0: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>}, %arg1: tensor<i64> {loom.name = "step"}, %arg2: tensor<3x3xf64> {loom.name = "x"}) -> (tensor<f64> {loom.name = "loss"}, tensor<3xf64> {loom.name = "w"}, tensor<i64> {loom.name = "step"}) {
  %0 = loom.mul %arg2, %arg0 {loom.fwd = 0 : i64} : (tensor<3x3xf64>, tensor<3xf64>) -> tensor<3x3xf64>
  %1 = loom.reduce_sum %0 {axes = array<i64: 0, 1>, loom.fwd = 1 : i64} : (tensor<3x3xf64>) -> tensor<f64>
  %cst = arith.constant dense<1.000000e+00> : tensor<f64>
  %2 = loom.reshape %cst {loom.fwd = 1 : i64} : tensor<f64> to tensor<1x1xf64>
  %cst_0 = arith.constant {loom.fwd = 1 : i64} dense<0.000000e+00> : tensor<3x3xf64>
  %3 = loom.add %cst_0, %2 {loom.fwd = 1 : i64} : (tensor<3x3xf64>, tensor<1x1xf64>) -> tensor<3x3xf64>
  %4 = loom.mul %3, %arg2 {loom.fwd = 0 : i64} : (tensor<3x3xf64>, tensor<3x3xf64>) -> tensor<3x3xf64>
  %5 = loom.reduce_sum %4 {axes = array<i64: 0>, loom.fwd = 0 : i64} : (tensor<3x3xf64>) -> tensor<3xf64>
  %new_param = loom.sgd_update %arg0, %5 {loom.fwd = 0 : i64, lr = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // expected-error @+1 {{reads a value of the forward or backward that is neither the loss nor a gradient part: @train_step is not the step loom-autodiff built}}
  %6 = loom.reduce_sum %0 {axes = array<i64: 0>, loom.fwd = 0 : i64} : (tensor<3x3xf64>) -> tensor<3xf64>
  %cst_1 = arith.constant dense<1> : tensor<i64>
  %8 = loom.add %arg1, %cst_1 {loom.fwd = 1 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %1, %new_param, %8 : tensor<f64>, tensor<3xf64>, tensor<i64>
}

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

// -----

// A loss-scaled step whose gradient is not multiplied by `1 / loss_scale`
// (here by the scale itself): not the unscale loom-autodiff builds, so the
// accumulated gradient cannot be found.
// expected-error @+1 {{loom-slice-micro-batches: the gradient of parameter #0 of the loss-scaled step is not unscaled by 1 / loss_scale}}
func.func @train_step(%arg0: tensor<16x8xf32> {loom.param = #loom.param<"table", init = zeros, decay = true>}, %arg1: tensor<16x8xf32> {loom.name = "table.exp_avg"}, %arg2: tensor<16x8xf32> {loom.name = "table.exp_avg_sq"}, %arg3: tensor<f32> {loom.name = "lr_scale"}, %arg4: tensor<f32> {loom.initial_value = 6.553600e+04 : f64, loom.name = "loss_scale"}, %arg5: tensor<i64> {loom.name = "loss_scale.growth_tracker"}, %arg6: tensor<f32> {loom.name = "inject_nonfinite"}, %arg7: tensor<i64> {loom.name = "step"}, %arg8: tensor<3x4xi64> {loom.input = #loom.input<input_ids>}, %arg9: tensor<3x4xi64> {loom.input = #loom.input<labels>}) -> (tensor<f32> {loom.name = "loss"}, tensor<16x8xf32> {loom.name = "table"}, tensor<16x8xf32> {loom.name = "table.exp_avg"}, tensor<16x8xf32> {loom.name = "table.exp_avg_sq"}, tensor<f32> {loom.name = "loss_scale"}, tensor<i64> {loom.name = "loss_scale.growth_tracker"}, tensor<f32> {loom.name = "found_inf"}, tensor<i64> {loom.name = "step"}) {
  %0 = loom.embedding %arg0, %arg8 {loom.fwd = 0 : i64} : (tensor<16x8xf32>, tensor<3x4xi64>) -> tensor<3x4x8xf32>
  %1 = loom.matmul %0, %arg0 {loom.fwd = 1 : i64, transpose_rhs} : (tensor<3x4x8xf32>, tensor<16x8xf32>) -> tensor<3x4x16xf32>
  %2 = loom.cross_entropy %1, %arg9 {loom.fwd = 2 : i64} : (tensor<3x4x16xf32>, tensor<3x4xi64>) -> tensor<f32>
  %3 = loom.cross_entropy_grad %1, %arg9, %arg4 {loom.fwd = 2 : i64} : (tensor<3x4x16xf32>, tensor<3x4xi64>, tensor<f32>) -> tensor<3x4x16xf32>
  %4 = loom.matmul %3, %arg0 {loom.fwd = 1 : i64} : (tensor<3x4x16xf32>, tensor<16x8xf32>) -> tensor<3x4x8xf32>
  %5 = loom.reshape %0 {loom.fwd = 1 : i64} : tensor<3x4x8xf32> to tensor<12x8xf32>
  %6 = loom.reshape %3 {loom.fwd = 1 : i64} : tensor<3x4x16xf32> to tensor<12x16xf32>
  %7 = loom.matmul %6, %5 {loom.fwd = 1 : i64, transpose_lhs} : (tensor<12x16xf32>, tensor<12x8xf32>) -> tensor<16x8xf32>
  %8 = loom.embedding_grad %4, %arg8 {loom.fwd = 0 : i64, vocab_size = 16 : i64} : (tensor<3x4x8xf32>, tensor<3x4xi64>) -> tensor<16x8xf32>
  %9 = loom.add %8, %7 {loom.fwd = 0 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %cst = arith.constant dense<1.000000e+00> : tensor<f32>
  %10 = loom.div %cst, %arg4 {loom.fwd = 2 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %11 = loom.add %10, %arg6 {loom.fwd = 2 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %12 = loom.mul %9, %arg4 {loom.fwd = 0 : i64} : (tensor<16x8xf32>, tensor<f32>) -> tensor<16x8xf32>
  %13 = loom.nonfinite_count %12 {loom.fwd = 0 : i64} : (tensor<16x8xf32>) -> tensor<f32>
  %new_param, %new_exp_avg, %new_exp_avg_sq = loom.adamw_update %arg0, %12, %arg1, %arg2, %arg7 lr_scale(%arg3) {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, loom.fwd = 0 : i64, lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<i64>, tensor<f32>) -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>)
  %cst_0 = arith.constant dense<1> : tensor<i64>
  %14 = loom.add %arg7, %cst_0 {loom.fwd = 2 : i64} : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %15 = loom.select %13, %arg0, %new_param {loom.fwd = 0 : i64} : (tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %16 = loom.select %13, %arg1, %new_exp_avg {loom.fwd = 0 : i64} : (tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %17 = loom.select %13, %arg2, %new_exp_avg_sq {loom.fwd = 0 : i64} : (tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %18 = loom.select %13, %arg7, %14 {loom.fwd = 2 : i64} : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
  %new_scale, %new_growth_tracker = loom.update_loss_scale %arg4, %arg5, %13 {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64, loom.fwd = 2 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %2, %15, %16, %17, %new_scale, %new_growth_tracker, %13, %18 : tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<f32>, tensor<i64>, tensor<f32>, tensor<i64>
}

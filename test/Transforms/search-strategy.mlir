// RUN: loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g' | FileCheck %s

// Ids arrive split over dp, so the embedding and the sum follow them on the
// batch: the search writes their strategies and the plan's prediction.

// CHECK-LABEL: func.func @train_step(
// CHECK: loom.embedding {{.*}}dist.strategy = #dist.strategy<@mesh, {{\[\[}}"dp"], [], [], []]>
// CHECK: loom.reduce_sum {{.*}}dist.strategy = #dist.strategy<@mesh, {{\[\[}}"dp"], [], []]>
// CHECK-NOT: dist.strategy
// CHECK: dist.plan = #dist.plan<zero = {{[01]}}, recompute = false, step_time_s = {{[^,]+}}, compute_s = {{[^,]+}}, comm_s = {{[^,]+}}, bubble_s = 0.000000e+00, memory_bytes_per_device = {{[0-9]+}}, model_flops_per_step = {{[^,]+}}>
dist.mesh @mesh shape [4] axes ["dp"]
func.func @train_step(
    %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
    %buf: tensor<128x64xf32> {loom.name = "wte.momentum_buffer"},
    %ids: tensor<1024x1024xi64> {loom.input = #loom.input<input_ids>})
    -> (tensor<f32> {loom.name = "loss"}, tensor<128x64xf32> {loom.name = "wte"},
        tensor<128x64xf32> {loom.name = "wte.momentum_buffer"}) {
  %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64} : (tensor<128x64xf32>, tensor<1024x1024xi64>) -> tensor<1024x1024x64xf32>
  %s = loom.reduce_sum %e {axes = array<i64: 0, 1, 2>, loom.fwd = 1 : i64} : (tensor<1024x1024x64xf32>) -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<1024x1024x64xf32>
  %g = loom.embedding_grad %one, %ids {vocab_size = 128 : i64, loom.fwd = 0 : i64} : (tensor<1024x1024x64xf32>, tensor<1024x1024xi64>) -> tensor<128x64xf32>
  %new:2 = loom.sgd_update %wte, %g, %buf {lr = 0.1, momentum = 0.9, weight_decay = 0.0, loom.fwd = 0 : i64} : (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x64xf32>)
  return %s, %new#0, %new#1 : tensor<f32>, tensor<128x64xf32>, tensor<128x64xf32>
}

// -----

// A strategy the user wrote is kept: the embedding stays replicated although
// splitting it would be cheaper, and the sum is still searched.

// CHECK-LABEL: func.func @train_step(
// CHECK: loom.embedding {{.*}}dist.strategy = #dist.strategy<@mesh, {{\[\[}}], [], [], []]>
// CHECK: loom.reduce_sum {{.*}}dist.strategy = #dist.strategy<@mesh,
dist.mesh @mesh shape [4] axes ["dp"]
func.func @train_step(
    %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
    %ids: tensor<1024x1024xi64> {loom.input = #loom.input<input_ids>})
    -> (tensor<f32> {loom.name = "loss"}) {
  %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64, dist.strategy = #dist.strategy<@mesh, [[], [], [], []]>} : (tensor<128x64xf32>, tensor<1024x1024xi64>) -> tensor<1024x1024x64xf32>
  %s = loom.reduce_sum %e {axes = array<i64: 0, 1, 2>, loom.fwd = 1 : i64} : (tensor<1024x1024x64xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

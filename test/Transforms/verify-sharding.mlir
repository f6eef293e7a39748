// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-verify-sharding | FileCheck %s

// A searched module passes: one mesh, the plan and its prediction, and a
// valid strategy on each forward op (the backward op, a follower, needs none).
// CHECK-LABEL: func.func @train_step
module attributes {dist.plan = #dist.plan<zero = 0, recompute = false, step_time_s = 1.0, compute_s = 1.0, comm_s = 0.0, bubble_s = 0.0, memory_bytes_per_device = 0, model_flops_per_step = 0.0>} {
  dist.mesh @mesh shape [4] axes ["dp"]
  func.func @train_step(
      %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
      %ids: tensor<16x8xi64> {loom.input = #loom.input<input_ids>})
      -> (tensor<f32> {loom.name = "loss"}) {
    %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64, dist.strategy = #dist.strategy<@mesh, [["dp"], [], [], []]>} : (tensor<128x64xf32>, tensor<16x8xi64>) -> tensor<16x8x64xf32>
    %s = loom.reduce_sum %e {axes = array<i64: 0, 1, 2>, loom.fwd = 1 : i64, dist.strategy = #dist.strategy<@mesh, [["dp"], [], []]>} : (tensor<16x8x64xf32>) -> tensor<f32>
    %one = arith.constant dense<1.0> : tensor<16x8x64xf32>
    %g = loom.embedding_grad %one, %ids {vocab_size = 128 : i64, loom.fwd = 0 : i64} : (tensor<16x8x64xf32>, tensor<16x8xi64>) -> tensor<128x64xf32>
    return %s : tensor<f32>
  }
}

// -----

// A forward op the search left without a strategy breaks the contract.
module attributes {dist.plan = #dist.plan<zero = 0, recompute = false, step_time_s = 1.0, compute_s = 1.0, comm_s = 0.0, bubble_s = 0.0, memory_bytes_per_device = 0, model_flops_per_step = 0.0>} {
  dist.mesh @mesh shape [4] axes ["dp"]
  func.func @train_step(%x: tensor<16x8xf32>) -> tensor<f32> {
    // expected-error @+1 {{sharding contract: forward op has no dist.strategy}}
    %s = loom.reduce_sum %x {axes = array<i64: 0, 1>} : (tensor<16x8xf32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

// A strategy that does not divide the factor is reported with the rule's
// message.
module attributes {dist.plan = #dist.plan<zero = 0, recompute = false, step_time_s = 1.0, compute_s = 1.0, comm_s = 0.0, bubble_s = 0.0, memory_bytes_per_device = 0, model_flops_per_step = 0.0>} {
  dist.mesh @mesh shape [3] axes ["dp"]
  func.func @train_step(%x: tensor<16x8xf32>) -> tensor<f32> {
    // expected-error @+1 {{sharding contract: invalid strategy:}}
    %s = loom.reduce_sum %x {axes = array<i64: 0, 1>, dist.strategy = #dist.strategy<@mesh, [["dp"], []]>} : (tensor<16x8xf32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

// Without the search's plan the module was not searched; a dictionary in
// its place (what the search wrote before `#dist.plan`) is no plan either.
// expected-error @+1 {{sharding contract: the module has no `dist.plan` #dist.plan (run dist-search-strategy)}}
module attributes {dist.plan = {recompute = false, zero = 0 : i64}} {
  dist.mesh @mesh shape [2] axes ["dp"]
  func.func @train_step(%x: tensor<16x8xf32>) -> tensor<f32> {
    %s = loom.reduce_sum %x {axes = array<i64: 0, 1>, dist.strategy = #dist.strategy<@mesh, [["dp"], []]>} : (tensor<16x8xf32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}

// RUN: loom-opt %s -loom-sharding-pipeline='cluster=dgx-a100-80g' | FileCheck %s

// The sharding phase's pipeline: the search writes a strategy on each forward
// op and the plan's summary, and dist-verify-sharding accepts the result.
// CHECK: module attributes {dist.cluster = "{\22name\22: \22dgx-a100-80g\22
// CHECK-SAME: dist.plan = #dist.plan<zero = {{[01]}}, recompute = false, step_time_s =
// CHECK: func.func @train_step
// CHECK: loom.embedding {{.*}}dist.strategy = #dist.strategy<@mesh
// CHECK: loom.reduce_sum {{.*}}dist.strategy = #dist.strategy<@mesh
dist.mesh @mesh shape [4] axes ["dp"]
func.func @train_step(
    %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
    %ids: tensor<16x8xi64> {loom.input = #loom.input<input_ids>})
    -> (tensor<f32> {loom.name = "loss"}) {
  %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64} : (tensor<128x64xf32>, tensor<16x8xi64>) -> tensor<16x8x64xf32>
  %s = loom.reduce_sum %e {axes = array<i64: 0, 1, 2>, loom.fwd = 1 : i64} : (tensor<16x8x64xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

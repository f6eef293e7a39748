// RUN: not loom-opt %s -dist-search-strategy='cluster=host devices=3' 2>&1 | FileCheck %s

// When no candidate mesh can hold the model at all, the error says why for
// each mesh instead of blaming memory: 3 devices do not divide the batch of
// 8 (dp), and do not fill whole nodes of the 2-device `host` cluster (tp).

// CHECK: error: no plan fits in {{[0-9.]+}} GiB per device on any mesh of 3 devices; no candidate mesh could hold the model at all:
// CHECK-SAME: mesh {dp:3}: the data-parallel axes (3 devices) do not divide the batch
// CHECK-SAME: ; mesh {dp:1, tp:3} has 3 devices, which do not fill whole nodes of 2 devices of cluster `host`
module {
  func.func @train_step(
      %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
      %ids: tensor<8x4xi64> {loom.input = #loom.input<input_ids>})
      -> (tensor<f32> {loom.name = "loss"}) {
    %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64} : (tensor<128x64xf32>, tensor<8x4xi64>) -> tensor<8x4x64xf32>
    %s = loom.reduce_sum %e {axes = array<i64: 0, 1, 2>, loom.fwd = 1 : i64} : (tensor<8x4x64xf32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}

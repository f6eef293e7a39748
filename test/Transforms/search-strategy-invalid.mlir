// RUN: loom-opt %s -split-input-file -verify-diagnostics -mlir-print-op-on-diagnostic=false -dist-search-strategy='cluster=host memory-limit=0.000001'
// RUN: not loom-opt %s -split-input-file -dist-search-strategy 2>&1 | FileCheck %s --check-prefix=NOCLUSTER

// NOCLUSTER: error: dist-search-strategy needs a cluster: a preset (

// Without a mesh, `devices` picks one from the dp x tp factorizations; with
// neither the pass says what it needs.

// expected-error @+1 {{dist-search-strategy needs the devices}}
module {
  func.func @train_step(%ids: tensor<8x4xi64> {loom.input = #loom.input<input_ids>}) -> tensor<8x4xi64> {
    return %ids : tensor<8x4xi64>
  }
}

// -----

// A memory limit no plan fits in is an error that says how much the
// smallest plan needs, on which mesh, the parameters' total and the largest
// argument with its dims.

// expected-error-re @+1 {{no plan fits in 0.000 GiB per device: the smallest needs {{[0-9.]+}} GiB (mesh {dp:2}); raise --memory-limit or add devices; parameters 32.0 KiB in all; the largest argument is `input_ids` (tensor<1024x1024xi64>, 8.0 MiB)}}
module attributes {test.limit} {
  dist.mesh @mesh shape [2] axes ["dp"]
  func.func @train_step(
      %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
      %ids: tensor<1024x1024xi64> {loom.input = #loom.input<input_ids>})
      -> (tensor<f32> {loom.name = "loss"}) {
    %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64} : (tensor<128x64xf32>, tensor<1024x1024xi64>) -> tensor<1024x1024x64xf32>
    %s = loom.reduce_sum %e {axes = array<i64: 0, 1, 2>, loom.fwd = 1 : i64} : (tensor<1024x1024x64xf32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}

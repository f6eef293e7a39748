// RUN: loom-opt %s -verify-diagnostics -mlir-print-op-on-diagnostic=false -dist-search-strategy='cluster=dgx-h100 explain=true'

// Under `explain` each searched op says which strategy won and what the
// runner-up would have cost; the module says what each mesh cost.

// expected-remark @+1 {{mesh {dp:4}:}}
module {
  dist.mesh @mesh shape [4] axes ["dp"]
  func.func @train_step(
      %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
      %ids: tensor<1024x1024xi64> {loom.input = #loom.input<input_ids>})
      -> (tensor<f32> {loom.name = "loss"}) {
    // expected-remark @+1 {{strategy [["dp"], [], [], []]: }}
    %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64} : (tensor<128x64xf32>, tensor<1024x1024xi64>) -> tensor<1024x1024x64xf32>
    // expected-remark @+1 {{strategy [["dp"], [], []]: }}
    %s = loom.reduce_sum %e {axes = array<i64: 0, 1, 2>, loom.fwd = 1 : i64} : (tensor<1024x1024x64xf32>) -> tensor<f32>
    return %s : tensor<f32>
  }
}

// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-lower-reshards=explain | FileCheck %s

// Under `explain` each reshard says which chain it became and what it costs:
// one ring step of 10 µs plus half of 4 MiB at 100 GB/s.
// CHECK-LABEL: func.func @explained
// CHECK: dist.reduce_scatter
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @explained(%g: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-remark @+1 {{reshard from [[], []], partial = ["x"] to [["x"], []] costs 3.097152e-05 s (alpha-beta model) in 1 collective:}}
  %0 = dist.reshard %g from <@m, [[], []], partial = ["x"]> to <@m, [["x"], []]> : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// A reshard that folds away says so.
// CHECK-LABEL: func.func @folded
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @folded(%g: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-remark @+1 {{reshard from [["x"], []] to itself folds away}}
  %0 = dist.reshard %g from <@m, [["x"], []]> to <@m, [["x"], []]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

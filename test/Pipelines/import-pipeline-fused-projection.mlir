// RUN: loom-opt %s -loom-import-pipeline | FileCheck %s

// The import phase views a fused q/k/v projection before its contract
// check, so every frontend's graph reaches autodiff and the search in the
// builders' form (view-fused-projections.mlir has the cases).
// CHECK-LABEL: func.func @forward
// CHECK-SAME: tensor<3x1x4x4xf32> {loom.file_shape = array<i64: 12, 4>
// CHECK: loom.split %{{.+}} {axis = 0 : i64, sizes = array<i64: 1, 1, 1>}
func.func @forward(%x: tensor<2x3x4xf32>,
    %w: tensor<12x4xf32> {loom.param = #loom.param<"c_attn.weight", init = zeros, decay = true>}) -> tensor<f32> {
  %0 = loom.matmul %x, %w {transpose_rhs} : (tensor<2x3x4xf32>, tensor<12x4xf32>) -> tensor<2x3x12xf32>
  %q, %k, %v = loom.split %0 {axis = 2 : i64, sizes = array<i64: 4, 4, 4>} : (tensor<2x3x12xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
  %1 = loom.add %q, %k : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = loom.add %1, %v : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %3 = loom.reduce_sum %2 {axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}

// RUN: loom-opt %s -loom-import-pipeline | FileCheck %s

// The import phase ends in its contract verifier: a good graph passes
// through unchanged (import-pipeline-invalid.mlir has a bad one).
// CHECK-LABEL: func.func @forward
// CHECK-NEXT: loom.reduce_sum
// CHECK-NEXT: return
func.func @forward(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = loom.reduce_sum %x {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

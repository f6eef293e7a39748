// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | loom-opt | FileCheck %s

// A plain 2-D product prints without flags.
// CHECK-LABEL: func.func @matmul_2d
func.func @matmul_2d(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // CHECK: loom.matmul %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Transpose flags survive the round trip; batch dims broadcast (1 stretches
// to 3, a missing dim is added).
// CHECK-LABEL: func.func @matmul_batched_transposed
func.func @matmul_batched_transposed(%a: tensor<2x1x8x4xbf16>, %b: tensor<3x16x8xbf16>) -> tensor<2x3x4x16xbf16> {
  // CHECK: loom.matmul %{{.+}}, %{{.+}} {transpose_lhs, transpose_rhs} : (tensor<2x1x8x4xbf16>, tensor<3x16x8xbf16>) -> tensor<2x3x4x16xbf16>
  %0 = loom.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<2x1x8x4xbf16>, tensor<3x16x8xbf16>) -> tensor<2x3x4x16xbf16>
  return %0 : tensor<2x3x4x16xbf16>
}

// A bias add broadcasts a vector over the leading dims; integers add too.
// CHECK-LABEL: func.func @add_broadcast
func.func @add_broadcast(%x: tensor<8x128x768xf16>, %b: tensor<768xf16>, %i: tensor<4x1xi64>, %j: tensor<1x5xi64>) -> (tensor<8x128x768xf16>, tensor<4x5xi64>) {
  // CHECK: loom.add %{{.+}}, %{{.+}} : (tensor<8x128x768xf16>, tensor<768xf16>) -> tensor<8x128x768xf16>
  %0 = loom.add %x, %b : (tensor<8x128x768xf16>, tensor<768xf16>) -> tensor<8x128x768xf16>
  // CHECK: loom.add %{{.+}}, %{{.+}} : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
  %1 = loom.add %i, %j : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
  return %0, %1 : tensor<8x128x768xf16>, tensor<4x5xi64>
}

// Reducing every dim gives the rank-0 form of a loss; keepdims keeps size-1
// dims.
// CHECK-LABEL: func.func @reduce_sum
func.func @reduce_sum(%x: tensor<8x128x768xf64>) -> (tensor<f64>, tensor<8x1x1xf64>) {
  // CHECK: loom.reduce_sum %{{.+}} {axes = array<i64: 0, 1, 2>} : (tensor<8x128x768xf64>) -> tensor<f64>
  %0 = loom.reduce_sum %x {axes = array<i64: 0, 1, 2>} : (tensor<8x128x768xf64>) -> tensor<f64>
  // CHECK: loom.reduce_sum %{{.+}} {axes = array<i64: 1, 2>, keepdims} : (tensor<8x128x768xf64>) -> tensor<8x1x1xf64>
  %1 = loom.reduce_sum %x {axes = array<i64: 1, 2>, keepdims} : (tensor<8x128x768xf64>) -> tensor<8x1x1xf64>
  return %0, %1 : tensor<f64>, tensor<8x1x1xf64>
}

// ===== Reduction, softmax and normalization ops =====

// reduce_mean and reduce_max take the same axes and keepdims as reduce_sum;
// reduce_max also takes integers.
// CHECK-LABEL: func.func @reduce_mean_max
func.func @reduce_mean_max(%x: tensor<8x128x768xf32>, %i: tensor<4x6xi32>) -> (tensor<8x128x1xf32>, tensor<768xf32>, tensor<4xi32>) {
  // CHECK: loom.reduce_mean %{{.+}} {axes = array<i64: 2>, keepdims} : (tensor<8x128x768xf32>) -> tensor<8x128x1xf32>
  %0 = loom.reduce_mean %x {axes = array<i64: 2>, keepdims} : (tensor<8x128x768xf32>) -> tensor<8x128x1xf32>
  // CHECK: loom.reduce_max %{{.+}} {axes = array<i64: 0, 1>} : (tensor<8x128x768xf32>) -> tensor<768xf32>
  %1 = loom.reduce_max %x {axes = array<i64: 0, 1>} : (tensor<8x128x768xf32>) -> tensor<768xf32>
  // CHECK: loom.reduce_max %{{.+}} {axes = array<i64: 1>} : (tensor<4x6xi32>) -> tensor<4xi32>
  %2 = loom.reduce_max %i {axes = array<i64: 1>} : (tensor<4x6xi32>) -> tensor<4xi32>
  return %0, %1, %2 : tensor<8x128x1xf32>, tensor<768xf32>, tensor<4xi32>
}

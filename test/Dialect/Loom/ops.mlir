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

// The softmaxes and their gradients keep the input's type and name the axis.
// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x4x16x16xbf16>, %dy: tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) {
  // CHECK: %[[Y:.+]] = loom.softmax %{{.+}} {axis = 3 : i64} : (tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %y = loom.softmax %x {axis = 3 : i64} : (tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  // CHECK: loom.softmax_grad %[[Y]], %{{.+}} {axis = 3 : i64} : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %dx = loom.softmax_grad %y, %dy {axis = 3 : i64} : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  // CHECK: %[[L:.+]] = loom.log_softmax %{{.+}} {axis = 0 : i64} : (tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %l = loom.log_softmax %x {axis = 0 : i64} : (tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  // CHECK: loom.log_softmax_grad %[[L]], %{{.+}} {axis = 0 : i64} : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  %dl = loom.log_softmax_grad %l, %dy {axis = 0 : i64} : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> tensor<2x4x16x16xbf16>
  return %y, %dx, %l, %dl : tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>
}

// layer_norm with and without its affine parameters; the default eps (1e-5)
// is not printed, another one is (1e-6 has no short exact binary form, so it
// prints with the digits that round-trip).
// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<8x128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<8x128x768xf32>, tensor<8x128x768xf32>) {
  // CHECK: loom.layer_norm %{{.+}}, %{{.+}}, %{{.+}} : (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<8x128x768xf32>
  %0 = loom.layer_norm %x, %g, %b : (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<8x128x768xf32>
  // CHECK: loom.layer_norm %{{[^,]+}} {eps = 9.9999999999999995E-7 : f64} : (tensor<8x128x768xf32>) -> tensor<8x128x768xf32>
  %1 = loom.layer_norm %x {eps = 1.0e-6 : f64} : (tensor<8x128x768xf32>) -> tensor<8x128x768xf32>
  return %0, %1 : tensor<8x128x768xf32>, tensor<8x128x768xf32>
}

// The layer_norm gradient has dgamma and dbeta exactly when gamma is given.
// CHECK-LABEL: func.func @layer_norm_grad
func.func @layer_norm_grad(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  // CHECK: %dx, %dgamma, %dbeta = loom.layer_norm_grad %{{.+}}, %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  %dx, %dg, %db = loom.layer_norm_grad %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  // CHECK: loom.layer_norm_grad %{{.+}}, %{{[^,]+}} {eps = 1.000000e-03 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %dx2 = loom.layer_norm_grad %dy, %x {eps = 1.0e-3 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %dx, %dg, %db, %dx2 : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>
}

// rms_norm and its gradient, with and without gamma.
// CHECK-LABEL: func.func @rms_norm
func.func @rms_norm(%x: tensor<2x16x64xf16>, %g: tensor<64xf16>, %dy: tensor<2x16x64xf16>) -> (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<64xf16>, tensor<2x16x64xf16>) {
  // CHECK: loom.rms_norm %{{.+}}, %{{.+}} {eps = 9.9999999999999995E-7 : f64} : (tensor<2x16x64xf16>, tensor<64xf16>) -> tensor<2x16x64xf16>
  %0 = loom.rms_norm %x, %g {eps = 1.0e-6 : f64} : (tensor<2x16x64xf16>, tensor<64xf16>) -> tensor<2x16x64xf16>
  // CHECK: loom.rms_norm %{{[^,]+}} : (tensor<2x16x64xf16>) -> tensor<2x16x64xf16>
  %1 = loom.rms_norm %x : (tensor<2x16x64xf16>) -> tensor<2x16x64xf16>
  // CHECK: %dx, %dgamma = loom.rms_norm_grad %{{.+}}, %{{.+}}, %{{.+}} {eps = 9.9999999999999995E-7 : f64} : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<64xf16>) -> (tensor<2x16x64xf16>, tensor<64xf16>)
  %dx, %dg = loom.rms_norm_grad %dy, %x, %g {eps = 1.0e-6 : f64} : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<64xf16>) -> (tensor<2x16x64xf16>, tensor<64xf16>)
  // CHECK: loom.rms_norm_grad %{{.+}}, %{{[^,]+}} : (tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16>
  %dx2 = loom.rms_norm_grad %dy, %x : (tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16>
  return %0, %1, %dx, %dg, %dx2 : tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<64xf16>, tensor<2x16x64xf16>
}

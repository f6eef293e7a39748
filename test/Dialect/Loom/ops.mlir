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

// ===== Elementwise and optimizer ops =====

// sub and mul broadcast like add (integers too); div is floating point only.
// CHECK-LABEL: func.func @binary_broadcast
func.func @binary_broadcast(%x: tensor<8x768xf32>, %m: tensor<8x1xf32>, %i: tensor<4x1xi32>, %j: tensor<5xi32>) -> (tensor<8x768xf32>, tensor<8x768xf32>, tensor<4x5xi32>) {
  // CHECK: loom.sub %{{.+}}, %{{.+}} : (tensor<8x768xf32>, tensor<8x1xf32>) -> tensor<8x768xf32>
  %0 = loom.sub %x, %m : (tensor<8x768xf32>, tensor<8x1xf32>) -> tensor<8x768xf32>
  // CHECK: loom.div %{{.+}}, %{{.+}} : (tensor<8x768xf32>, tensor<8x1xf32>) -> tensor<8x768xf32>
  %1 = loom.div %0, %m : (tensor<8x768xf32>, tensor<8x1xf32>) -> tensor<8x768xf32>
  // CHECK: loom.mul %{{.+}}, %{{.+}} : (tensor<4x1xi32>, tensor<5xi32>) -> tensor<4x5xi32>
  %2 = loom.mul %i, %j : (tensor<4x1xi32>, tensor<5xi32>) -> tensor<4x5xi32>
  return %0, %1, %2 : tensor<8x768xf32>, tensor<8x768xf32>, tensor<4x5xi32>
}

// Unary ops print their one type once.
// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  // CHECK: %[[NEG:.+]] = loom.neg %{{.+}} : tensor<2x3xbf16>
  // CHECK: %[[EXP:.+]] = loom.exp %[[NEG]] : tensor<2x3xbf16>
  // CHECK: %[[LOG:.+]] = loom.log %[[EXP]] : tensor<2x3xbf16>
  // CHECK: %[[SQRT:.+]] = loom.sqrt %[[LOG]] : tensor<2x3xbf16>
  // CHECK: %[[RSQRT:.+]] = loom.rsqrt %[[SQRT]] : tensor<2x3xbf16>
  // CHECK: %[[TANH:.+]] = loom.tanh %[[RSQRT]] : tensor<2x3xbf16>
  // CHECK: %[[SIG:.+]] = loom.sigmoid %[[TANH]] : tensor<2x3xbf16>
  // CHECK: %[[RELU:.+]] = loom.relu %[[SIG]] : tensor<2x3xbf16>
  // CHECK: loom.silu %[[RELU]] : tensor<2x3xbf16>
  %0 = loom.neg %x : tensor<2x3xbf16>
  %1 = loom.exp %0 : tensor<2x3xbf16>
  %2 = loom.log %1 : tensor<2x3xbf16>
  %3 = loom.sqrt %2 : tensor<2x3xbf16>
  %4 = loom.rsqrt %3 : tensor<2x3xbf16>
  %5 = loom.tanh %4 : tensor<2x3xbf16>
  %6 = loom.sigmoid %5 : tensor<2x3xbf16>
  %7 = loom.relu %6 : tensor<2x3xbf16>
  %8 = loom.silu %7 : tensor<2x3xbf16>
  return %8 : tensor<2x3xbf16>
}

// gelu's default form (`none`, erf) prints without the attribute; spelling
// it out parses to the same op.
// CHECK-LABEL: func.func @gelu
func.func @gelu(%x: tensor<8x3072xf32>, %dy: tensor<8x3072xf32>) -> (tensor<8x3072xf32>, tensor<8x3072xf32>, tensor<8x3072xf32>, tensor<8x3072xf32>) {
  // CHECK: loom.gelu %{{.+}} : tensor<8x3072xf32>
  %0 = loom.gelu %x : tensor<8x3072xf32>
  // CHECK: loom.gelu %{{.+}} : tensor<8x3072xf32>
  %1 = loom.gelu %x approximate = none : tensor<8x3072xf32>
  // CHECK: loom.gelu %{{.+}} approximate = tanh : tensor<8x3072xf32>
  %2 = loom.gelu %x approximate = tanh : tensor<8x3072xf32>
  // CHECK: loom.gelu_grad %{{.+}}, %{{.+}} approximate = tanh : tensor<8x3072xf32>
  %3 = loom.gelu_grad %dy, %x approximate = tanh : tensor<8x3072xf32>
  return %0, %1, %2, %3 : tensor<8x3072xf32>, tensor<8x3072xf32>, tensor<8x3072xf32>, tensor<8x3072xf32>
}

// The activation gradients take dy, then the activation's input.
// CHECK-LABEL: func.func @activation_grads
func.func @activation_grads(%dy: tensor<16xf16>, %x: tensor<16xf16>) -> (tensor<16xf16>, tensor<16xf16>, tensor<16xf16>) {
  // CHECK: loom.relu_grad %{{.+}}, %{{.+}} : tensor<16xf16>
  %0 = loom.relu_grad %dy, %x : tensor<16xf16>
  // CHECK: loom.silu_grad %{{.+}}, %{{.+}} : tensor<16xf16>
  %1 = loom.silu_grad %dy, %x : tensor<16xf16>
  // CHECK: loom.gelu_grad %{{.+}}, %{{.+}} : tensor<16xf16>
  %2 = loom.gelu_grad %dy, %x : tensor<16xf16>
  return %0, %1, %2 : tensor<16xf16>, tensor<16xf16>, tensor<16xf16>
}

// scale, dropout: attributes in the dictionary, literals default to f64/i64.
// CHECK-LABEL: func.func @scale_dropout
func.func @scale_dropout(%x: tensor<8x12x128x128xf32>) -> tensor<8x12x128x128xf32> {
  // CHECK: loom.scale %{{.+}} {factor = 1.250000e-01 : f64} : tensor<8x12x128x128xf32>
  %0 = loom.scale %x {factor = 0.125} : tensor<8x12x128x128xf32>
  // CHECK: loom.dropout %{{.+}} {rate = 1.000000e-01 : f64, seed = 17 : i64} : tensor<8x12x128x128xf32>
  %1 = loom.dropout %0 {rate = 0.1, seed = 17} : tensor<8x12x128x128xf32>
  return %1 : tensor<8x12x128x128xf32>
}

// Casts between float and integer types in both directions, and to i1.
// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<4x8xf32>, %ids: tensor<4x8xi64>) -> (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xi1>) {
  // CHECK: loom.cast %{{.+}} : tensor<4x8xf32> to tensor<4x8xbf16>
  %0 = loom.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  // CHECK: loom.cast %{{.+}} : tensor<4x8xi64> to tensor<4x8xf32>
  %1 = loom.cast %ids : tensor<4x8xi64> to tensor<4x8xf32>
  // CHECK: loom.cast %{{.+}} : tensor<4x8xi64> to tensor<4x8xi1>
  %2 = loom.cast %ids : tensor<4x8xi64> to tensor<4x8xi1>
  return %0, %1, %2 : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xi1>
}

// SGD with momentum has a buffer in and out; without momentum it has none.
// The default dampening is elided; nesterov is a unit flag.
// CHECK-LABEL: func.func @sgd_update
func.func @sgd_update(%p: tensor<768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) {
  // CHECK: loom.sgd_update %{{.+}}, %{{.+}}, %{{.+}} {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov, weight_decay = 1.000000e-04 : f64} : (tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<768xf32>, tensor<768xf32>)
  %0:2 = loom.sgd_update %p, %g, %b {lr = 0.1, momentum = 0.9, weight_decay = 1.0e-4, dampening = 0.0, nesterov} : (tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<768xf32>, tensor<768xf32>)
  // CHECK: loom.sgd_update %{{.+}}, %{{.+}} {lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64} : (tensor<768xf32>, tensor<768xf32>) -> tensor<768xf32>
  %1 = loom.sgd_update %p, %g {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<768xf32>, tensor<768xf32>) -> tensor<768xf32>
  return %0#0, %0#1, %1 : tensor<768xf32>, tensor<768xf32>, tensor<768xf32>
}

// AdamW takes the rank-0 step counter after the three state tensors. 0.999
// has no short exact decimal form, so it prints with 17 digits.
// CHECK-LABEL: func.func @adamw_update
func.func @adamw_update(%p: tensor<768x768xf32>, %g: tensor<768x768xf32>, %m: tensor<768x768xf32>, %v: tensor<768x768xf32>, %step: tensor<i64>) -> (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>) {
  // CHECK: loom.adamw_update %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, lr = 6.000000e-04 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<i64>) -> (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>)
  %0:3 = loom.adamw_update %p, %g, %m, %v, %step {lr = 6.0e-4, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.1} : (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<i64>) -> (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>)
  return %0#0, %0#1, %0#2 : tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>
}

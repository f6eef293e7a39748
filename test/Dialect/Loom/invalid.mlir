// RUN: loom-opt %s -split-input-file -verify-diagnostics

// Type inference reports the violated constraint, then the verifier adds the
// generic "failed to infer returned types"; both are expected below.

// matmul C1: a vector is not a matrix.
func.func @matmul_rank_one(%a: tensor<8xf32>, %b: tensor<8x4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of rank >= 2, got 'tensor<8xf32>' and 'tensor<8x4xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// matmul C2: mixed precision must be explicit (a loom.cast).
func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x4xbf16>) -> tensor<4x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'bf16'}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xbf16>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// matmul C3: with transpose_rhs, rhs [16, 8] contracts its dim 1 (8) with
// lhs dim 1 (4).
func.func @matmul_contraction(%a: tensor<2x4xf32>, %b: tensor<16x8xf32>) -> tensor<2x16xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects contracted dims of equal size, got lhs dim 1 (size 4) and rhs dim 1 (size 8)}}
  %0 = loom.matmul %a, %b {transpose_rhs} : (tensor<2x4xf32>, tensor<16x8xf32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// matmul C4: batch dims 2 and 3 do not broadcast.
func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<3x4x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible batch dims, got 'tensor<2x4x8xf32>' and 'tensor<3x8x4xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}

// -----

// matmul: a declared result type that disagrees with inference is rejected.
func.func @matmul_result_type(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<16x4xf32>'}}
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

// -----

// matmul: integer matrices are not supported (no GEMM kernels for them).
func.func @matmul_integer(%a: tensor<4x8xi32>, %b: tensor<8x4xi32>) -> tensor<4x4xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.matmul %a, %b : (tensor<4x8xi32>, tensor<8x4xi32>) -> tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}

// -----

// Every loom op needs static shapes: the cost model prices exact sizes.
func.func @add_dynamic(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.add %a, %a : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// add C1.
func.func @add_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'f16'}}
  %0 = loom.add %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// add C2: trailing dims 3 and 4 differ and neither is 1.
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible shapes, got 'tensor<2x3xf32>' and 'tensor<4xf32>'}}
  %0 = loom.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// reduce_sum C1.
func.func @reduce_no_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one axis}}
  %0 = loom.reduce_sum %x {axes = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reduce_sum C2: negative axes are not accepted (one spelling per reduction).
func.func @reduce_axis_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis -1 is out of range for an input of rank 2}}
  %0 = loom.reduce_sum %x {axes = array<i64: -1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// reduce_sum C3.
func.func @reduce_axis_order(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects strictly increasing axes, got 1 before 0}}
  %0 = loom.reduce_sum %x {axes = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// ===== Reduction, softmax and normalization ops =====

// reduce_mean C1.
func.func @reduce_mean_no_axes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one axis}}
  %0 = loom.reduce_mean %x {axes = array<i64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// reduce_mean C2: axis 2 does not exist in a rank-2 input.
func.func @reduce_mean_axis_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis 2 is out of range for an input of rank 2}}
  %0 = loom.reduce_mean %x {axes = array<i64: 2>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// reduce_mean C3: a repeated axis is not strictly increasing.
func.func @reduce_mean_axis_order(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects strictly increasing axes, got 1 before 1}}
  %0 = loom.reduce_mean %x {axes = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// reduce_mean: an integer mean would need a rounding rule, so it is refused.
func.func @reduce_mean_integer(%x: tensor<4x8xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x8xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// reduce_max C1.
func.func @reduce_max_no_axes(%x: tensor<4x8xi64>) -> tensor<4x8xi64> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one axis}}
  %0 = loom.reduce_max %x {axes = array<i64>} : (tensor<4x8xi64>) -> tensor<4x8xi64>
  return %0 : tensor<4x8xi64>
}

// -----

// reduce_max C2: negative axes are not accepted.
func.func @reduce_max_axis_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{axis -2 is out of range for an input of rank 2}}
  %0 = loom.reduce_max %x {axes = array<i64: -2>} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// reduce_max C3.
func.func @reduce_max_axis_order(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects strictly increasing axes, got 1 before 0}}
  %0 = loom.reduce_max %x {axes = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

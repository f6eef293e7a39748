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

// -----

// softmax C1: the axis must name a dim (negative axes are not accepted).
func.func @softmax_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis -1 to be in [0, 2)}}
  %0 = loom.softmax %x {axis = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// log_softmax C1: a scalar has no axis to normalize along.
func.func @log_softmax_axis(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis 0 to be in [0, 0)}}
  %0 = loom.log_softmax %x {axis = 0 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// softmax_grad C1: the gradient has the forward output's type.
func.func @softmax_grad_types(%y: tensor<4x8xf32>, %dy: tensor<4x8xbf16>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad of the same type as output, got 'tensor<4x8xbf16>' and 'tensor<4x8xf32>'}}
  %0 = loom.softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// softmax_grad C2.
func.func @softmax_grad_axis(%y: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis 2 to be in [0, 2)}}
  %0 = loom.softmax_grad %y, %dy {axis = 2 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// log_softmax_grad C1: the gradient has the forward output's shape.
func.func @log_softmax_grad_types(%y: tensor<4x8xf32>, %dy: tensor<8x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad of the same type as output, got 'tensor<8x4xf32>' and 'tensor<4x8xf32>'}}
  %0 = loom.log_softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// log_softmax_grad C2.
func.func @log_softmax_grad_axis(%y: tensor<4x8xf32>, %dy: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis 5 to be in [0, 2)}}
  %0 = loom.log_softmax_grad %y, %dy {axis = 5 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm C1: a scalar has no last dim to normalize over.
func.func @layer_norm_rank(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 1, got 'tensor<f32>'}}
  %0 = loom.layer_norm %x : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// layer_norm C2: a lone parameter is gamma without beta.
func.func @layer_norm_gamma_only(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects gamma and beta both present or both absent, got gamma only}}
  %0 = loom.layer_norm %x, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm C3: beta must span the last dim (8), not the first.
func.func @layer_norm_beta_type(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects beta of type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0 = loom.layer_norm %x, %g, %b : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm C4: eps = 0 would divide by zero on a constant row.
func.func @layer_norm_eps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects eps to be positive and finite, got 0.000000e+00}}
  %0 = loom.layer_norm %x {eps = 0.0 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// rms_norm C1.
func.func @rms_norm_rank(%x: tensor<f16>) -> tensor<f16> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 1, got 'tensor<f16>'}}
  %0 = loom.rms_norm %x : (tensor<f16>) -> tensor<f16>
  return %0 : tensor<f16>
}

// -----

// rms_norm C2: gamma has the input's element type.
func.func @rms_norm_gamma_type(%x: tensor<4x8xbf16>, %g: tensor<8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects gamma of type 'tensor<8xbf16>', got 'tensor<8xf32>'}}
  %0 = loom.rms_norm %x, %g : (tensor<4x8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// rms_norm C3: a negative eps could make the root imaginary.
func.func @rms_norm_eps(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects eps to be positive and finite, got -1.000000e-05}}
  %0 = loom.rms_norm %x {eps = -1.0e-5 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm_grad C1: the gradient has the input's type.
func.func @layer_norm_grad_types(%dy: tensor<4x8xf16>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad of the same type as input, got 'tensor<4x8xf16>' and 'tensor<4x8xf32>'}}
  %0 = loom.layer_norm_grad %dy, %x : (tensor<4x8xf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm_grad C2.
func.func @layer_norm_grad_rank(%dy: tensor<f32>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 1, got 'tensor<f32>'}}
  %0 = loom.layer_norm_grad %dy, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// layer_norm_grad C3: gamma is a vector, not a row.
func.func @layer_norm_grad_gamma(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects gamma of type 'tensor<8xf32>', got 'tensor<1x8xf32>'}}
  %0:3 = loom.layer_norm_grad %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<4x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// layer_norm_grad C4: eps must match a valid forward op's.
func.func @layer_norm_grad_eps(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects eps to be positive and finite, got -0.000000e+00}}
  %0 = loom.layer_norm_grad %dy, %x {eps = -0.0 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// layer_norm_grad: with gamma the op also returns dgamma and dbeta, so a
// single declared result disagrees with inference.
func.func @layer_norm_grad_results(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<4x8xf32>', 'tensor<8xf32>', 'tensor<8xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  %0 = loom.layer_norm_grad %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// rms_norm_grad C1.
func.func @rms_norm_grad_types(%dy: tensor<4x8xf32>, %x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad of the same type as input, got 'tensor<4x8xf32>' and 'tensor<2x8xf32>'}}
  %0 = loom.rms_norm_grad %dy, %x : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// rms_norm_grad C2.
func.func @rms_norm_grad_rank(%dy: tensor<bf16>, %x: tensor<bf16>) -> tensor<bf16> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects an input of rank >= 1, got 'tensor<bf16>'}}
  %0 = loom.rms_norm_grad %dy, %x : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// rms_norm_grad C3: gamma spans the last dim.
func.func @rms_norm_grad_gamma(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %g: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects gamma of type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0:2 = loom.rms_norm_grad %dy, %x, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// rms_norm_grad C4: an infinite eps is rejected like a non-positive one.
func.func @rms_norm_grad_eps(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects eps to be positive and finite, got INF}}
  %0 = loom.rms_norm_grad %dy, %x {eps = 0x7FF0000000000000 : f64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

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

// ===== Elementwise and optimizer ops =====

// sub C1: mixed precision must be explicit (a loom.cast).
func.func @sub_element_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'bf16'}}
  %0 = loom.sub %a, %b : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// sub C2: dims 2 and 3 differ and neither is 1.
func.func @sub_broadcast(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible shapes, got 'tensor<2x4xf32>' and 'tensor<3x4xf32>'}}
  %0 = loom.sub %a, %b : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// mul C1: an i1 mask must be cast before it scales a float tensor.
func.func @mul_element_types(%a: tensor<4xf32>, %m: tensor<4xi1>) -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'i1'}}
  %0 = loom.mul %a, %m : (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// mul C2: trailing dims 8 and 4 do not broadcast.
func.func @mul_broadcast(%a: tensor<2x8xf32>, %b: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible shapes, got 'tensor<2x8xf32>' and 'tensor<4xf32>'}}
  %0 = loom.mul %a, %b : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// div C1.
func.func @div_element_types(%a: tensor<4xf64>, %b: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f64' and 'f32'}}
  %0 = loom.div %a, %b : (tensor<4xf64>, tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// div C2: dims 5 and 6 differ.
func.func @div_broadcast(%a: tensor<5x1xf32>, %b: tensor<6x1xf32>) -> tensor<6x1xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects broadcast-compatible shapes, got 'tensor<5x1xf32>' and 'tensor<6x1xf32>'}}
  %0 = loom.div %a, %b : (tensor<5x1xf32>, tensor<6x1xf32>) -> tensor<6x1xf32>
  return %0 : tensor<6x1xf32>
}

// -----

// div: integer division is not defined (no rounding mode, no rule for 0).
func.func @div_integer(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Unary math is floating point only.
func.func @exp_integer(%a: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = loom.exp %a : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// A unary op's result has its operand's type (only the generic form can
// write a different one).
func.func @tanh_result_type(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// gelu: `approximate` is `none` or `tanh`, as in PyTorch.
func.func @gelu_approximate(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected `none` or `tanh`, got `sigmoid`}}
  %0 = loom.gelu %a approximate = sigmoid : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// gelu_grad: dy has the shape of gelu's input (generic form only).
func.func @gelu_grad_types(%dy: tensor<4xf32>, %x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.gelu_grad"(%dy, %x) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// scale C1: an infinite factor.
func.func @scale_infinite(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loom.scale' op expects a finite factor, got INF}}
  %0 = loom.scale %a {factor = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// cast C1: a cast changes the element type only; reshapes are separate.
func.func @cast_shape(%a: tensor<4x8xf32>) -> tensor<32xbf16> {
  // expected-error @+1 {{'loom.cast' op expects the operand and result to have the same shape, got 'tensor<4x8xf32>' and 'tensor<32xbf16>'}}
  %0 = loom.cast %a : tensor<4x8xf32> to tensor<32xbf16>
  return %0 : tensor<32xbf16>
}

// -----

// dropout C1: rate 1 would drop everything and divide by zero.
func.func @dropout_rate(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'loom.dropout' op expects rate to be in [0, 1), got 1.000000e+00}}
  %0 = loom.dropout %a {rate = 1.0, seed = 0} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// sgd_update C1: a bf16 gradient must be cast to the f32 master weight's type.
func.func @sgd_grad_type(%p: tensor<8xf32>, %g: tensor<8xbf16>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects grad to have the param's type 'tensor<8xf32>', got 'tensor<8xbf16>'}}
  %0 = loom.sgd_update %p, %g {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xbf16>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// sgd_update C2: momentum 0.9 needs a momentum buffer.
func.func @sgd_missing_buffer(%p: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects a momentum_buf exactly when momentum != 0, got none with momentum 9.000000e-01}}
  %0 = loom.sgd_update %p, %g {lr = 0.1, momentum = 0.9, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// sgd_update C3: a negative learning rate.
func.func @sgd_negative_lr(%p: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'loom.sgd_update' op expects lr, momentum and weight_decay >= 0, got -1.000000e-01, 0.000000e+00 and 0.000000e+00}}
  %0 = loom.sgd_update %p, %g {lr = -0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// sgd_update C4: Nesterov momentum is undamped.
func.func @sgd_nesterov(%p: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'loom.sgd_update' op expects momentum > 0 and dampening = 0 with nesterov, got momentum 9.000000e-01 and dampening 5.000000e-01}}
  %0:2 = loom.sgd_update %p, %g, %b {lr = 0.1, momentum = 0.9, weight_decay = 0.0, dampening = 0.5, nesterov} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update C1: the second moment has the wrong shape.
func.func @adamw_state_type(%p: tensor<8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<4xf32>, %step: tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects exp_avg_sq to have the param's type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %0:3 = loom.adamw_update %p, %g, %m, %v, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update C2: a negative eps.
func.func @adamw_negative_eps(%p: tensor<8xf32>, %step: tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'loom.adamw_update' op expects lr, eps and weight_decay >= 0, got 1.000000e-03, -1.000000e+00 and 1.000000e-02}}
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = -1.0, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update C3: beta2 = 1 never forgets and zeroes the bias correction.
func.func @adamw_beta(%p: tensor<8xf32>, %step: tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'loom.adamw_update' op expects beta1 and beta2 in [0, 1), got 9.000000e-01 and 1.000000e+00}}
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 1.0, eps = 1.0e-8, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// adamw_update: the step counter is a rank-0 i64 tensor.
func.func @adamw_step_type(%p: tensor<8xf32>, %step: tensor<1xi64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{operand #4 must be 0D tensor of 64-bit signless integer values}}
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1xi64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1, %0#2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

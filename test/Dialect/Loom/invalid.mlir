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

// ===== Shape ops =====

// -----

// reshape C1: a reshape never converts.
func.func @reshape_element_type(%x: tensor<4x6xf32>) -> tensor<24xf16> {
  // expected-error @+1 {{'loom.reshape' op expects input and result of one element type, got 'f32' and 'f16'}}
  %0 = loom.reshape %x : tensor<4x6xf32> to tensor<24xf16>
  return %0 : tensor<24xf16>
}

// -----

// reshape C2: 24 elements cannot become 25.
func.func @reshape_element_count(%x: tensor<4x6xf32>) -> tensor<5x5xf32> {
  // expected-error @+1 {{'loom.reshape' op expects input and result of one element count, got 24 ('tensor<4x6xf32>') and 25 ('tensor<5x5xf32>')}}
  %0 = loom.reshape %x : tensor<4x6xf32> to tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}

// -----

// transpose C1: a rank-3 input needs three permutation entries.
func.func @transpose_length(%x: tensor<2x3x4xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects one permutation entry per input dim (3), got 2}}
  %0 = loom.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// transpose C2: entry 3 names no dim of a rank-3 input.
func.func @transpose_range(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects permutation entry 3 to be in [0, 3)}}
  %0 = loom.transpose %x {permutation = array<i64: 1, 0, 3>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  return %0 : tensor<3x2x4xf32>
}

// -----

// transpose C3: a repeated entry leaves a dim out.
func.func @transpose_repeat(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects distinct permutation entries, got 1 twice}}
  %0 = loom.transpose %x {permutation = array<i64: 1, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<3x3x4xf32>
  return %0 : tensor<3x3x4xf32>
}

// -----

// slice C1: `limits` lacks an entry for dim 1.
func.func @slice_entries(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects one entry per input dim (2) in starts, limits and strides, got 2, 1 and 2}}
  %0 = loom.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 2>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// slice C2: a zero stride would take one element forever.
func.func @slice_stride(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects strides >= 1, got 0 in dim 1}}
  %0 = loom.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, strides = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// slice C3: the limit 9 runs past dim 1 (size 8).
func.func @slice_bounds(%x: tensor<4x8xf32>) -> tensor<4x7xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects 0 <= start <= limit <= size in dim 1, got start 2, limit 9, size 8}}
  %0 = loom.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 9>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

// pad C1: `interior` has one entry too many.
func.func @pad_entries(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects one entry per input dim (2) in low, high and interior, got 2, 2 and 3}}
  %0 = loom.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, 0>, interior = array<i64: 0, 0, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// pad C2: negative padding (cropping) is a slice's job.
func.func @pad_negative(%x: tensor<4x8xf32>) -> tensor<4x7xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects padding >= 0, got high -1 in dim 1}}
  %0 = loom.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, -1>, interior = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}

// -----

// pad C3: 2^62 elements plus 2^62 zeros do not fit in 64 bits.
func.func @pad_overflow(%x: tensor<4611686018427387904xi1>) -> tensor<4611686018427387904xi1> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects the padded size of dim 0 to fit in 64 bits}}
  %0 = loom.pad %x {low = array<i64: 0>, high = array<i64: 4611686018427387904>, interior = array<i64: 0>} : (tensor<4611686018427387904xi1>) -> tensor<4611686018427387904xi1>
  return %0 : tensor<4611686018427387904xi1>
}

// -----

// concat C1: there is nothing to concatenate.
func.func @concat_empty() -> tensor<4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one operand}}
  %0 = loom.concat {axis = 0 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// concat C2: mixed precision must be explicit (a loom.cast).
func.func @concat_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one element type, got 'f32' and 'f16'}}
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<4xf32>, tensor<4xf16>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// concat C3: a matrix and a vector do not line up.
func.func @concat_ranks(%a: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operands of one rank, got 'tensor<2x4xf32>' and 'tensor<4xf32>'}}
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// concat C4: negative axes are not accepted (one spelling per concat).
func.func @concat_axis(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis -1 to be in [0, 2)}}
  %0 = loom.concat %a, %b {axis = -1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// concat C5: along axis 0, dim 1 must agree (4 vs 5).
func.func @concat_dims(%a: tensor<2x4xf32>, %b: tensor<3x5xf32>) -> tensor<5x4xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects operand #1 to have size 4 in dim 1 like operand #0, got 5}}
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x5xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

// concat C6: two dims of 2^62 add up to more than 64 bits hold.
func.func @concat_overflow(%a: tensor<4611686018427387904xi1>) -> tensor<4611686018427387904xi1> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects the size of dim 0 of the result to fit in 64 bits}}
  %0 = loom.concat %a, %a {axis = 0 : i64} : (tensor<4611686018427387904xi1>, tensor<4611686018427387904xi1>) -> tensor<4611686018427387904xi1>
  return %0 : tensor<4611686018427387904xi1>
}

// -----

// split C1: a rank-2 input has no dim 2.
func.func @split_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects axis 2 to be in [0, 2)}}
  %0 = loom.split %x {axis = 2 : i64, sizes = array<i64: 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// split C2: a split into nothing has no results.
func.func @split_no_sizes(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects at least one size}}
  loom.split %x {axis = 1 : i64, sizes = array<i64>} : (tensor<4x8xf32>) -> ()
  return
}

// -----

// split C3: a negative piece, even one that keeps the sum right.
func.func @split_negative(%x: tensor<4x8xf32>) -> (tensor<4x9xf32>, tensor<4x1xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects sizes >= 0, got -1 at index 1}}
  %0:2 = loom.split %x {axis = 1 : i64, sizes = array<i64: 9, -1>} : (tensor<4x8xf32>) -> (tensor<4x9xf32>, tensor<4x1xf32>)
  return %0#0, %0#1 : tensor<4x9xf32>, tensor<4x1xf32>
}

// -----

// split C4: pieces of 3 and 4 leave one index of dim 1 (size 8) behind.
func.func @split_sum(%x: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{expects sizes adding up to 8 (the size of dim 1), got 7}}
  %0:2 = loom.split %x {axis = 1 : i64, sizes = array<i64: 3, 4>} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x4xf32>)
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<4x4xf32>
}

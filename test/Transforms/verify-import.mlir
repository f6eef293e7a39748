// RUN: loom-opt %s -split-input-file -verify-diagnostics -loom-verify-import | FileCheck %s

// A well-formed loss function passes through unchanged.
// CHECK-LABEL: func.func @forward
// CHECK: loom.matmul
// CHECK: loom.reduce_sum
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<f32> {
  %0 = loom.matmul %x, %w {transpose_rhs} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %1 = loom.add %0, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = loom.reduce_sum %1 {axes = array<i64: 0, 1>} : (tensor<4x16xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// Rule 1: the entry function must exist.
// expected-error @+1 {{expected a `func.func @forward` computing the loss, found none}}
module {
  func.func @loss(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

// Rule 1: a declaration is not a graph.
// expected-error @+1 {{expected `@forward` to have a body, found a declaration}}
func.func private @forward(%x: tensor<f32>) -> tensor<f32>

// -----

// Rule 2: the loss is a scalar, not a vector.
// expected-error @+1 {{expected `@forward` to return one rank-0 floating-point tensor (the loss), found ('tensor<4xf32>')}}
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Rule 2: an integer is not a loss; every violation is reported, so the bad
// argument is too (rule 3).
// expected-error @+2 {{expected `@forward` to return one rank-0 floating-point tensor (the loss), found ('tensor<i64>')}}
// expected-error @+1 {{argument #1: expected a statically shaped tensor of f64, f32, bf16, f16, i64, i32 or i1, found 'tensor<?xf32>'}}
func.func @forward(%x: tensor<i64>, %y: tensor<?xf32>) -> tensor<i64> {
  return %x : tensor<i64>
}

// -----

// Rule 3: f8 has no Loom kernels.
func.func @forward(%x: tensor<4xf32>) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<4xf8E4M3FN>
  // expected-error @-1 {{result #0: expected a statically shaped tensor of f64, f32, bf16, f16, i64, i32 or i1, found 'tensor<4xf8E4M3FN>'}}
  %0 = loom.reduce_sum %x {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Rule 4: ops outside the allowed dialects are rejected (here a cast left
// behind by a conversion).
func.func @forward(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{op from dialect `builtin` is not allowed in an imported graph; expected loom, arith, tensor or func}}
  %0 = builtin.unrealized_conversion_cast %x : tensor<f32> to tensor<f32>
  return %0 : tensor<f32>
}


// -----

// Rule 5: sizes must fit int64. A parameter of 2^63 - 1 elements (f32: its
// bytes overflow), an argument and a broadcast result whose element counts
// overflow; before, the search planned such a parameter as "6.5 KiB per
// device, fits".
// expected-error @+2 {{argument #1 ('tensor<9223372036854775807xf32>'): 9223372036854775807 elements of 4 bytes overflow int64; tensor sizes must fit int64}}
// expected-error @+1 {{argument #2 ('tensor<4294967296x4294967296xi1>'): its element count overflows int64}}
func.func @forward(%x: tensor<f32>, %w: tensor<9223372036854775807xf32>, %m: tensor<4294967296x4294967296xi1>, %a: tensor<4294967296x1xf32>, %b: tensor<4294967296xf32>) -> tensor<f32> {
  // expected-error @+1 {{result #0 ('tensor<4294967296x4294967296xf32>'): its element count overflows int64}}
  %0 = loom.add %a, %b : (tensor<4294967296x1xf32>, tensor<4294967296xf32>) -> tensor<4294967296x4294967296xf32>
  return %x : tensor<f32>
}

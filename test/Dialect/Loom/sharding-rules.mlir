// RUN: loom-opt %s -test-print-sharding-rules -o /dev/null | FileCheck %s

// One function per op (and per interesting variant); each rule is also
// checked against the op's shapes by the test pass.

// M and N are parallel; splitting K leaves partial sums.
// CHECK-LABEL: @matmul loom.matmul:
// CHECK-SAME: ([a, c], [c, b]) -> ([a, b]) {a=4, b=16, c=8} reduction={c}
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Transposes move K and N; a batch dim of size 1 that broadcasts has no
// factor, and a missing batch dim is simply absent.
// CHECK-LABEL: @matmul_batched_transposed loom.matmul:
// CHECK-SAME: ([a, 1, e, c], [b, d, e]) -> ([a, b, c, d]) {a=2, b=3, c=4, d=16, e=8} reduction={e}
func.func @matmul_batched_transposed(%a: tensor<2x1x8x4xf32>, %b: tensor<3x16x8xf32>) -> tensor<2x3x4x16xf32> {
  %0 = loom.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<2x1x8x4xf32>, tensor<3x16x8xf32>) -> tensor<2x3x4x16xf32>
  return %0 : tensor<2x3x4x16xf32>
}

// A weight shared by every batch element: the batch factor is absent from it.
// CHECK-LABEL: @matmul_shared_weight loom.matmul:
// CHECK-SAME: ([a, b, d], [c, d]) -> ([a, b, c]) {a=8, b=128, c=3072, d=768} reduction={d}
func.func @matmul_shared_weight(%x: tensor<8x128x768xf32>, %w: tensor<3072x768xf32>) -> tensor<8x128x3072xf32> {
  %0 = loom.matmul %x, %w {transpose_rhs} : (tensor<8x128x768xf32>, tensor<3072x768xf32>) -> tensor<8x128x3072xf32>
  return %0 : tensor<8x128x3072xf32>
}

// Pointwise: a bias broadcasts along the leading dims, which it lacks.
// CHECK-LABEL: @add loom.add:
// CHECK-SAME: ([a, b, c], [c]) -> ([a, b, c]) {a=8, b=128, c=768}
func.func @add(%x: tensor<8x128x768xf32>, %b: tensor<768xf32>) -> tensor<8x128x768xf32> {
  %0 = loom.add %x, %b : (tensor<8x128x768xf32>, tensor<768xf32>) -> tensor<8x128x768xf32>
  return %0 : tensor<8x128x768xf32>
}

// Size-1 dims that stretch get no factor in the operand that stretches.
// CHECK-LABEL: @add_outer loom.add:
// CHECK-SAME: ([a, 1], [1, b]) -> ([a, b]) {a=4, b=5}
func.func @add_outer(%i: tensor<4x1xi64>, %j: tensor<1x5xi64>) -> tensor<4x5xi64> {
  %0 = loom.add %i, %j : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
  return %0 : tensor<4x5xi64>
}

// Reduced dims are reduction factors present only in the input.
// CHECK-LABEL: @reduce_sum loom.reduce_sum:
// CHECK-SAME: ([a, b, c]) -> ([b]) {a=8, b=128, c=768} reduction={a, c}
func.func @reduce_sum(%x: tensor<8x128x768xf32>) -> tensor<128xf32> {
  %0 = loom.reduce_sum %x {axes = array<i64: 0, 2>} : (tensor<8x128x768xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// With keepdims the reduced dims stay as size 1, without a factor.
// CHECK-LABEL: @reduce_sum_keepdims loom.reduce_sum:
// CHECK-SAME: ([a, b]) -> ([a, 1]) {a=8, b=128} reduction={b}
func.func @reduce_sum_keepdims(%x: tensor<8x128xf32>) -> tensor<8x1xf32> {
  %0 = loom.reduce_sum %x {axes = array<i64: 1>, keepdims} : (tensor<8x128xf32>) -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// ===== Reduction, softmax and normalization ops =====

// A mean is a scaled sum: a split reduced dim leaves partial sums (each
// device divides by the global count); keepdims leaves a size-1 dim.
// CHECK-LABEL: @reduce_mean loom.reduce_mean:
// CHECK-SAME: ([a, b, c]) -> ([a, b, 1]) {a=8, b=128, c=768} reduction={c}
func.func @reduce_mean(%x: tensor<8x128x768xf32>) -> tensor<8x128x1xf32> {
  %0 = loom.reduce_mean %x {axes = array<i64: 2>, keepdims} : (tensor<8x128x768xf32>) -> tensor<8x128x1xf32>
  return %0 : tensor<8x128x1xf32>
}

// A pending max has no layout, so the reduced dim may not be split.
// CHECK-LABEL: @reduce_max loom.reduce_max:
// CHECK-SAME: ([a, b]) -> ([b]) {a=8, b=128} need_replication={a}
func.func @reduce_max(%x: tensor<8x128xf32>) -> tensor<128xf32> {
  %0 = loom.reduce_max %x {axes = array<i64: 0>} : (tensor<8x128xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

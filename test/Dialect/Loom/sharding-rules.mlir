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

// Attention scores: batch, heads and queries parallel; the key axis whole.
// CHECK-LABEL: @softmax loom.softmax:
// CHECK-SAME: ([a, b, c, d]) -> ([a, b, c, d]) {a=2, b=4, c=16, d=32} need_replication={d}
func.func @softmax(%x: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %0 = loom.softmax %x {axis = 3 : i64} : (tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  return %0 : tensor<2x4x16x32xf32>
}

// The axis need not be the last dim.
// CHECK-LABEL: @log_softmax loom.log_softmax:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=8, b=50} need_replication={a}
func.func @log_softmax(%x: tensor<8x50xf32>) -> tensor<8x50xf32> {
  %0 = loom.log_softmax %x {axis = 0 : i64} : (tensor<8x50xf32>) -> tensor<8x50xf32>
  return %0 : tensor<8x50xf32>
}

// The gradients sum over the axis inside the op: it stays whole.
// CHECK-LABEL: @softmax_grad loom.softmax_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=16} need_replication={b}
func.func @softmax_grad(%y: tensor<4x16xf32>, %dy: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// CHECK-LABEL: @log_softmax_grad loom.log_softmax_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=16} need_replication={b}
func.func @log_softmax_grad(%y: tensor<4x16xf32>, %dy: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.log_softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Rows are normalized independently; the hidden dim is whole, in the
// parameters too.
// CHECK-LABEL: @layer_norm loom.layer_norm:
// CHECK-SAME: ([a, b, c], [c], [c]) -> ([a, b, c]) {a=8, b=128, c=768} need_replication={c}
func.func @layer_norm(%x: tensor<8x128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<8x128x768xf32> {
  %0 = loom.layer_norm %x, %g, %b : (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<8x128x768xf32>
  return %0 : tensor<8x128x768xf32>
}

// CHECK-LABEL: @layer_norm_no_affine loom.layer_norm:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=8} need_replication={b}
func.func @layer_norm_no_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = loom.layer_norm %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: @rms_norm loom.rms_norm:
// CHECK-SAME: ([a, b, c], [c]) -> ([a, b, c]) {a=8, b=128, c=4096} need_replication={c}
func.func @rms_norm(%x: tensor<8x128x4096xbf16>, %g: tensor<4096xbf16>) -> tensor<8x128x4096xbf16> {
  %0 = loom.rms_norm %x, %g : (tensor<8x128x4096xbf16>, tensor<4096xbf16>) -> tensor<8x128x4096xbf16>
  return %0 : tensor<8x128x4096xbf16>
}

// A rank-1 input is one row: its only dim is the normalized one.
// CHECK-LABEL: @rms_norm_vector loom.rms_norm:
// CHECK-SAME: ([a], [a]) -> ([a]) {a=64} need_replication={a}
func.func @rms_norm_vector(%x: tensor<64xf32>, %g: tensor<64xf32>) -> tensor<64xf32> {
  %0 = loom.rms_norm %x, %g : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// dgamma and dbeta sum over the leading dims: splitting them leaves partial
// sums of dgamma and dbeta while dx is split.
// CHECK-LABEL: @layer_norm_grad loom.layer_norm_grad:
// CHECK-SAME: ([a, b, c], [a, b, c], [c]) -> ([a, b, c], [c], [c]) {a=8, b=128, c=768} reduction={a, b} need_replication={c}
func.func @layer_norm_grad(%dy: tensor<8x128x768xf32>, %x: tensor<8x128x768xf32>, %g: tensor<768xf32>) -> (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>) {
  %0:3 = loom.layer_norm_grad %dy, %x, %g : (tensor<8x128x768xf32>, tensor<8x128x768xf32>, tensor<768xf32>) -> (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>)
  return %0#0, %0#1, %0#2 : tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>
}

// Without gamma no result lacks the leading dims: they are parallel.
// CHECK-LABEL: @layer_norm_grad_no_affine loom.layer_norm_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=8} need_replication={b}
func.func @layer_norm_grad_no_affine(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = loom.layer_norm_grad %dy, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: @rms_norm_grad loom.rms_norm_grad:
// CHECK-SAME: ([a, b], [a, b], [b]) -> ([a, b], [b]) {a=16, b=64} reduction={a} need_replication={b}
func.func @rms_norm_grad(%dy: tensor<16x64xf32>, %x: tensor<16x64xf32>, %g: tensor<64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %0:2 = loom.rms_norm_grad %dy, %x, %g : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>)
  return %0#0, %0#1 : tensor<16x64xf32>, tensor<64xf32>
}

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

// ===== Elementwise and optimizer ops =====

// sub, mul, div: the pointwise rule of add; a broadcast bias lacks the
// leading factor, a stretched size-1 dim has none.
// CHECK-LABEL: @sub loom.sub:
// CHECK-SAME: ([a, b], [b]) -> ([a, b]) {a=4, b=6}
func.func @sub(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sub %x, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @mul loom.mul:
// CHECK-SAME: ([a, 1], [1, b]) -> ([a, b]) {a=4, b=5}
func.func @mul(%i: tensor<4x1xi32>, %j: tensor<1x5xi32>) -> tensor<4x5xi32> {
  %0 = loom.mul %i, %j : (tensor<4x1xi32>, tensor<1x5xi32>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}

// CHECK-LABEL: @div loom.div:
// CHECK-SAME: ([a, b], [a, 1]) -> ([a, b]) {a=2, b=3}
func.func @div(%x: tensor<2x3xf64>, %s: tensor<2x1xf64>) -> tensor<2x3xf64> {
  %0 = loom.div %x, %s : (tensor<2x3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// Unary math and activations: every dim is a parallel factor.
// CHECK-LABEL: @neg loom.neg:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @neg(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.neg %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @exp loom.exp:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @exp(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.exp %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @log loom.log:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @log(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.log %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @sqrt loom.sqrt:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @sqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sqrt %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @rsqrt loom.rsqrt:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @rsqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.rsqrt %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @tanh loom.tanh:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.tanh %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @sigmoid loom.sigmoid:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @sigmoid(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sigmoid %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @relu loom.relu:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @relu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.relu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @silu loom.silu:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @silu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.silu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @gelu loom.gelu:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @gelu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @gelu_tanh loom.gelu:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @gelu_tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu %x approximate = tanh : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// scale: pointwise.
// CHECK-LABEL: @scale loom.scale:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @scale(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.scale %x {factor = 0.125} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// cast: pointwise; only the element type changes.
// CHECK-LABEL: @cast loom.cast:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @cast(%x: tensor<4x6xf32>) -> tensor<4x6xbf16> {
  %0 = loom.cast %x : tensor<4x6xf32> to tensor<4x6xbf16>
  return %0 : tensor<4x6xbf16>
}

// dropout: parallel although random, because the mask is a function of the
// global element index (a shard draws exactly its slice of the mask).
// CHECK-LABEL: @dropout loom.dropout:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}
func.func @dropout(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.dropout %x {rate = 0.1, seed = 7} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Activation gradients: dy, x and dx share every factor.
// CHECK-LABEL: @relu_grad loom.relu_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=6}
func.func @relu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.relu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @silu_grad loom.silu_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=6}
func.func @silu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.silu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @gelu_grad loom.gelu_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=6}
func.func @gelu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Optimizer updates: pointwise over the parameter; every state tensor is
// split like the parameter (ZeRO-style sharding is a layout of this rule).
// CHECK-LABEL: @sgd_update loom.sgd_update:
// CHECK-SAME: ([a, b], [a, b], [a, b]) -> ([a, b], [a, b]) {a=16, b=64}
func.func @sgd_update(%p: tensor<16x64xf32>, %g: tensor<16x64xf32>, %b: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %0:2 = loom.sgd_update %p, %g, %b {lr = 0.1, momentum = 0.9, weight_decay = 0.0} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>)
  return %0#0, %0#1 : tensor<16x64xf32>, tensor<16x64xf32>
}

// The rank-0 step counter has no factor: every device reads all of it.
// CHECK-LABEL: @adamw_update loom.adamw_update:
// CHECK-SAME: ([a, b], [a, b], [a, b], [a, b], []) -> ([a, b], [a, b], [a, b]) {a=16, b=64}
func.func @adamw_update(%p: tensor<16x64xf32>, %step: tensor<i64>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) {
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<i64>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>)
  return %0#0, %0#1, %0#2 : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
}

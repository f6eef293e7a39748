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

// ===== Shape ops =====

// Reshape names its result type; splitting and merging heads round-trip.
// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<2x128x768xf32>, %t: tensor<8x1xi64>) -> (tensor<2x128x12x64xf32>, tensor<8xi64>) {
  // CHECK: loom.reshape %{{.+}} : tensor<2x128x768xf32> to tensor<2x128x12x64xf32>
  %0 = loom.reshape %x : tensor<2x128x768xf32> to tensor<2x128x12x64xf32>
  // CHECK: loom.reshape %{{.+}} : tensor<8x1xi64> to tensor<8xi64>
  %1 = loom.reshape %t : tensor<8x1xi64> to tensor<8xi64>
  return %0, %1 : tensor<2x128x12x64xf32>, tensor<8xi64>
}

// Result dim i is input dim permutation[i].
// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<2x128x12x64xbf16>) -> tensor<2x12x128x64xbf16> {
  // CHECK: loom.transpose %{{.+}} {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x128x12x64xbf16>) -> tensor<2x12x128x64xbf16>
  %0 = loom.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x128x12x64xbf16>) -> tensor<2x12x128x64xbf16>
  return %0 : tensor<2x12x128x64xbf16>
}

// A strided slice and the pad that undoes it (its VJP): rows 1, 3, 5 of 7
// come back to their places with interior and edge zeros.
// CHECK-LABEL: func.func @slice_and_pad
func.func @slice_and_pad(%x: tensor<7x768xf32>) -> (tensor<3x384xf32>, tensor<7x768xf32>) {
  // CHECK: loom.slice %{{.+}} {limits = array<i64: 7, 768>, starts = array<i64: 1, 384>, strides = array<i64: 2, 1>} : (tensor<7x768xf32>) -> tensor<3x384xf32>
  %0 = loom.slice %x {starts = array<i64: 1, 384>, limits = array<i64: 7, 768>, strides = array<i64: 2, 1>} : (tensor<7x768xf32>) -> tensor<3x384xf32>
  // CHECK: loom.pad %{{.+}} {high = array<i64: 1, 0>, interior = array<i64: 1, 0>, low = array<i64: 1, 384>} : (tensor<3x384xf32>) -> tensor<7x768xf32>
  %1 = loom.pad %0 {low = array<i64: 1, 384>, high = array<i64: 1, 0>, interior = array<i64: 1, 0>} : (tensor<3x384xf32>) -> tensor<7x768xf32>
  return %0, %1 : tensor<3x384xf32>, tensor<7x768xf32>
}

// Concat and split are each other's VJP; one operand or one result is fine.
// CHECK-LABEL: func.func @concat_and_split
func.func @concat_and_split(%q: tensor<8x768xf16>, %k: tensor<8x256xf16>) -> (tensor<8x1024xf16>, tensor<8x768xf16>, tensor<8x256xf16>, tensor<8x768xf16>) {
  // CHECK: loom.concat %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<8x768xf16>, tensor<8x256xf16>) -> tensor<8x1024xf16>
  %0 = loom.concat %q, %k {axis = 1 : i64} : (tensor<8x768xf16>, tensor<8x256xf16>) -> tensor<8x1024xf16>
  // CHECK: loom.split %{{.+}} {axis = 1 : i64, sizes = array<i64: 768, 256>} : (tensor<8x1024xf16>) -> (tensor<8x768xf16>, tensor<8x256xf16>)
  %1:2 = loom.split %0 {axis = 1 : i64, sizes = array<i64: 768, 256>} : (tensor<8x1024xf16>) -> (tensor<8x768xf16>, tensor<8x256xf16>)
  // CHECK: loom.concat %{{.+}} {axis = 0 : i64} : (tensor<8x768xf16>) -> tensor<8x768xf16>
  %2 = loom.concat %q {axis = 0 : i64} : (tensor<8x768xf16>) -> tensor<8x768xf16>
  return %0, %1#0, %1#1, %2 : tensor<8x1024xf16>, tensor<8x768xf16>, tensor<8x256xf16>, tensor<8x768xf16>
}

// ===== Transformer ops =====

// An embedding lookup appends the hidden dim to the ids' shape; its gradient
// names the vocabulary size, which dy does not carry.
// CHECK-LABEL: func.func @embedding
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<2x8xi64>, %id: tensor<i32>, %dy: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<16xf32>, tensor<100x16xf32>) {
  // CHECK: loom.embedding %{{.+}}, %{{.+}} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  %0 = loom.embedding %table, %ids : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  // CHECK: loom.embedding %{{.+}}, %{{.+}} : (tensor<100x16xf32>, tensor<i32>) -> tensor<16xf32>
  %1 = loom.embedding %table, %id : (tensor<100x16xf32>, tensor<i32>) -> tensor<16xf32>
  // CHECK: loom.embedding_grad %{{.+}}, %{{.+}} {vocab_size = 100 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<100x16xf32>
  %2 = loom.embedding_grad %dy, %ids {vocab_size = 100 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<100x16xf32>
  return %0, %1, %2 : tensor<2x8x16xf32>, tensor<16xf32>, tensor<100x16xf32>
}

// Grouped-query self-attention with the causal flag and an explicit scale;
// cross-attention (Sq != Skv) with a mask that broadcasts over batch and
// heads.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x8x16x32xbf16>, %k: tensor<2x2x16x32xbf16>, %v: tensor<2x2x16x64xbf16>, %kx: tensor<2x2x24x32xbf16>, %vx: tensor<2x2x24x64xbf16>, %mask: tensor<16x24xbf16>) -> (tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>) {
  // CHECK: loom.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = 1.250000e-01 : f64} : (tensor<2x8x16x32xbf16>, tensor<2x2x16x32xbf16>, tensor<2x2x16x64xbf16>) -> tensor<2x8x16x64xbf16>
  %0 = loom.attention %q, %k, %v {causal, scale = 0.125 : f64} : (tensor<2x8x16x32xbf16>, tensor<2x2x16x32xbf16>, tensor<2x2x16x64xbf16>) -> tensor<2x8x16x64xbf16>
  // CHECK: loom.attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x8x16x32xbf16>, tensor<2x2x24x32xbf16>, tensor<2x2x24x64xbf16>, tensor<16x24xbf16>) -> tensor<2x8x16x64xbf16>
  %1 = loom.attention %q, %kx, %vx, %mask : (tensor<2x8x16x32xbf16>, tensor<2x2x24x32xbf16>, tensor<2x2x24x64xbf16>, tensor<16x24xbf16>) -> tensor<2x8x16x64xbf16>
  return %0, %1 : tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>
}

// The attention gradient returns one gradient per float operand, each of its
// operand's type; the mask is optional here too.
// CHECK-LABEL: func.func @attention_grad
func.func @attention_grad(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x24x32xf32>, %v: tensor<2x2x24x64xf32>, %o: tensor<2x8x16x64xf32>, %do: tensor<2x8x16x64xf32>, %mask: tensor<2x1x16x24xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>) {
  // CHECK: loom.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {causal} : (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>)
  %0:3 = loom.attention_grad %q, %k, %v, %o, %do {causal} : (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>)
  // CHECK: loom.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {scale = 2.500000e-01 : f64} : (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x1x16x24xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>)
  %1:3 = loom.attention_grad %q, %k, %v, %o, %do, %mask {scale = 0.25 : f64} : (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x1x16x24xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>)
  return %1#0, %0#1, %0#2 : tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>
}

// rope's default theta is elided; positions, a custom theta and the inverse
// rotation (the VJP) print back.
// CHECK-LABEL: func.func @rope
func.func @rope(%x: tensor<2x4x16x8xf32>, %pos: tensor<2x16xi64>, %pos1: tensor<16xi32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) {
  // CHECK: loom.rope %{{.+}} : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %0 = loom.rope %x : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  // CHECK: loom.rope %{{.+}}, %{{.+}} {theta = 5.000000e+05 : f64} : (tensor<2x4x16x8xf32>, tensor<2x16xi64>) -> tensor<2x4x16x8xf32>
  %1 = loom.rope %x, %pos {theta = 500000.0 : f64} : (tensor<2x4x16x8xf32>, tensor<2x16xi64>) -> tensor<2x4x16x8xf32>
  // CHECK: loom.rope %{{.+}}, %{{.+}} {inverse} : (tensor<2x4x16x8xf32>, tensor<16xi32>) -> tensor<2x4x16x8xf32>
  %2 = loom.rope %x, %pos1 {inverse} : (tensor<2x4x16x8xf32>, tensor<16xi32>) -> tensor<2x4x16x8xf32>
  return %0, %1, %2 : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
}

// The local forms of the loss ops (what the partitioner emits): a summed
// loss, a block of log-probability columns at an offset, and the label
// count.
// CHECK-LABEL: func.func @cross_entropy_local
func.func @cross_entropy_local(%logits: tensor<2x8x50xf32>, %labels: tensor<2x8xi64>, %dloss: tensor<f32>, %o: index) -> (tensor<f32>, tensor<2x8x50xf32>, tensor<f32>) {
  // CHECK: loom.cross_entropy %{{.+}}, %{{.+}} offset %{{.+}} {sum} : (tensor<2x8x50xf32>, tensor<2x8xi64>, index) -> tensor<f32>
  %0 = loom.cross_entropy %logits, %labels offset %o {sum} : (tensor<2x8x50xf32>, tensor<2x8xi64>, index) -> tensor<f32>
  // CHECK: loom.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} offset %{{.+}} {ignore_index = 0 : i64, sum} : (tensor<2x8x50xf32>, tensor<2x8xi64>, tensor<f32>, index) -> tensor<2x8x50xf32>
  %1 = loom.cross_entropy_grad %logits, %labels, %dloss offset %o {ignore_index = 0 : i64, sum} : (tensor<2x8x50xf32>, tensor<2x8xi64>, tensor<f32>, index) -> tensor<2x8x50xf32>
  // CHECK: loom.label_count %{{.+}} {ignore_index = 0 : i64} : (tensor<2x8xi64>) -> tensor<f32>
  %2 = loom.label_count %labels {ignore_index = 0 : i64} : (tensor<2x8xi64>) -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<2x8x50xf32>, tensor<f32>
}

// The local forms of the embedding ops take the block's first row.
// CHECK-LABEL: func.func @embedding_offset
func.func @embedding_offset(%table: tensor<50x16xf32>, %ids: tensor<2x8xi64>, %dy: tensor<2x8x16xf32>, %o: i64) -> (tensor<2x8x16xf32>, tensor<50x16xf32>) {
  // CHECK: loom.embedding %{{.+}}, %{{.+}} offset %{{.+}} : (tensor<50x16xf32>, tensor<2x8xi64>, i64) -> tensor<2x8x16xf32>
  %0 = loom.embedding %table, %ids offset %o : (tensor<50x16xf32>, tensor<2x8xi64>, i64) -> tensor<2x8x16xf32>
  // CHECK: loom.embedding_grad %{{.+}}, %{{.+}} offset %{{.+}} {vocab_size = 50 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>, i64) -> tensor<50x16xf32>
  %1 = loom.embedding_grad %dy, %ids offset %o {vocab_size = 50 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>, i64) -> tensor<50x16xf32>
  return %0, %1 : tensor<2x8x16xf32>, tensor<50x16xf32>
}

// The loss is rank 0; the default ignore_index (-100) is elided, another one
// prints. The gradient has the logits' type.
// CHECK-LABEL: func.func @cross_entropy
func.func @cross_entropy(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>, %dloss: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<2x8x100xf32>) {
  // CHECK: loom.cross_entropy %{{.+}}, %{{.+}} : (tensor<2x8x100xf32>, tensor<2x8xi64>) -> tensor<f32>
  %0 = loom.cross_entropy %logits, %labels : (tensor<2x8x100xf32>, tensor<2x8xi64>) -> tensor<f32>
  // CHECK: loom.cross_entropy %{{.+}}, %{{.+}} {ignore_index = 0 : i64} : (tensor<2x8x100xf32>, tensor<2x8xi64>) -> tensor<f32>
  %1 = loom.cross_entropy %logits, %labels {ignore_index = 0 : i64} : (tensor<2x8x100xf32>, tensor<2x8xi64>) -> tensor<f32>
  // CHECK: loom.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x8x100xf32>, tensor<2x8xi64>, tensor<f32>) -> tensor<2x8x100xf32>
  %2 = loom.cross_entropy_grad %logits, %labels, %dloss : (tensor<2x8x100xf32>, tensor<2x8xi64>, tensor<f32>) -> tensor<2x8x100xf32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<2x8x100xf32>
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

// The learning-rate factor `lr_scale` follows the other operands, keyword
// first, with or without a momentum buffer.
// CHECK-LABEL: func.func @updates_with_lr_scale
func.func @updates_with_lr_scale(%p: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>, %step: tensor<i64>, %s: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // CHECK: loom.sgd_update %{{.+}}, %{{.+}}, %{{.+}} lr_scale(%{{.+}}) {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, weight_decay = 0.000000e+00 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>)
  %0:2 = loom.sgd_update %p, %g, %b lr_scale(%s) {lr = 0.1, momentum = 0.9, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>)
  // CHECK: loom.sgd_update %{{.+}}, %{{.+}} lr_scale(%{{.+}}) {lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = loom.sgd_update %p, %g lr_scale(%s) {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  // CHECK: loom.adamw_update %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} lr_scale(%{{.+}}) {beta1
  %2:3 = loom.adamw_update %p, %g, %b, %b, %step lr_scale(%s) {lr = 6.0e-4, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.1} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %0#0, %1, %2#0, %2#1 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// AdamW takes the rank-0 step counter after the three state tensors. 0.999
// has no short exact decimal form, so it prints with 17 digits.
// CHECK-LABEL: func.func @adamw_update
func.func @adamw_update(%p: tensor<768x768xf32>, %g: tensor<768x768xf32>, %m: tensor<768x768xf32>, %v: tensor<768x768xf32>, %step: tensor<i64>) -> (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>) {
  // CHECK: loom.adamw_update %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, lr = 6.000000e-04 : f64, weight_decay = 1.000000e-01 : f64} : (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<i64>) -> (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>)
  %0:3 = loom.adamw_update %p, %g, %m, %v, %step {lr = 6.0e-4, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.1} : (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<i64>) -> (tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>)
  return %0#0, %0#1, %0#2 : tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>
}

// The loss-scaling ops of an fp16-mixed step: the non-finite count of a
// gradient, a whole-tensor select of the old state (floats and the i64 step
// counter), and GradScaler's scale update.
// CHECK-LABEL: func.func @loss_scaling
func.func @loss_scaling(%g: tensor<4x8xf32>, %p: tensor<4x8xf32>, %step: tensor<i64>, %s: tensor<f32>) -> (tensor<f32>, tensor<4x8xf32>, tensor<i64>, tensor<f32>, tensor<i64>) {
  // CHECK: loom.nonfinite_count %{{.+}} : (tensor<4x8xf32>) -> tensor<f32>
  %0 = loom.nonfinite_count %g : (tensor<4x8xf32>) -> tensor<f32>
  // CHECK: loom.select %{{.+}}, %{{.+}}, %{{.+}} : (tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = loom.select %0, %p, %g : (tensor<f32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: loom.select %{{.+}}, %{{.+}}, %{{.+}} : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
  %2 = loom.select %0, %step, %step : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
  // CHECK: loom.update_loss_scale %{{.+}}, %{{.+}}, %{{.+}} {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  %3:2 = loom.update_loss_scale %s, %step, %0 {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %0, %1, %2, %3#0, %3#1 : tensor<f32>, tensor<4x8xf32>, tensor<i64>, tensor<f32>, tensor<i64>
}

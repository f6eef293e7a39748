// RUN: loom-opt %s -test-print-costs -o /dev/null | FileCheck %s

// One function per op: FLOPs and bytes for the op's global shapes, computed
// by hand in the comment above each case.

// 2*M*N*K = 2*4*16*8 = 1024 flops; reads (4*8 + 8*16)*4 bytes, writes 4*16*4.
// CHECK-LABEL: @matmul loom.matmul:
// CHECK-SAME: gemm flops=1024 read=640 written=256 output=256{{$}}
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Broadcast batch [2,1] x [3] -> [2,3]; 2*(2*3)*4*16*8 = 6144 flops; bf16 is
// 2 bytes: reads (64 + 384)*2, writes 384*2.
// CHECK-LABEL: @matmul_batched_bf16 loom.matmul:
// CHECK-SAME: gemm flops=6144 read=896 written=768 output=768{{$}}
func.func @matmul_batched_bf16(%a: tensor<2x1x8x4xbf16>, %b: tensor<3x16x8xbf16>) -> tensor<2x3x4x16xbf16> {
  %0 = loom.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<2x1x8x4xbf16>, tensor<3x16x8xbf16>) -> tensor<2x3x4x16xbf16>
  return %0 : tensor<2x3x4x16xbf16>
}

// One flop per output element; the broadcast bias is read once (4*6 + 6)*4.
// CHECK-LABEL: @add loom.add:
// CHECK-SAME: elementwise flops=24 read=120 written=96 output=96{{$}}
func.func @add(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = loom.add %x, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// One flop per input element; f64 is 8 bytes: reads 8*16*8, writes 8*8.
// CHECK-LABEL: @reduce_sum loom.reduce_sum:
// CHECK-SAME: reduction flops=128 read=1024 written=64 output=64{{$}}
func.func @reduce_sum(%x: tensor<8x16xf64>) -> tensor<8xf64> {
  %0 = loom.reduce_sum %x {axes = array<i64: 1>} : (tensor<8x16xf64>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// ===== Shape ops =====

// A row-major reshape is a view: nothing read or written; the result is
// 2*128*768 f32 = 786432 bytes.
// CHECK-LABEL: @reshape loom.reshape:
// CHECK-SAME: data_movement flops=0 read=0 written=0 output=786432{{$}}
func.func @reshape(%x: tensor<2x128x768xf32>) -> tensor<2x128x12x64xf32> {
  %0 = loom.reshape %x : tensor<2x128x768xf32> to tensor<2x128x12x64xf32>
  return %0 : tensor<2x128x12x64xf32>
}

// A copy: 4*8 bf16 read and written, 32*2 = 64 bytes each.
// CHECK-LABEL: @transpose loom.transpose:
// CHECK-SAME: data_movement flops=0 read=64 written=64 output=64{{$}}
func.func @transpose(%x: tensor<4x8xbf16>) -> tensor<8x4xbf16> {
  %0 = loom.transpose %x {permutation = array<i64: 1, 0>} : (tensor<4x8xbf16>) -> tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}

// Only the selected 4*8 f32 are read: 128 bytes, as many written.
// CHECK-LABEL: @slice loom.slice:
// CHECK-SAME: data_movement flops=0 read=128 written=128 output=128{{$}}
func.func @slice(%x: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %0 = loom.slice %x {starts = array<i64: 0, 4>, limits = array<i64: 8, 12>, strides = array<i64: 2, 1>} : (tensor<8x16xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Reads 4*8 f32 (128 bytes); writes all 4*11, zeros included (176 bytes).
// CHECK-LABEL: @pad loom.pad:
// CHECK-SAME: data_movement flops=0 read=128 written=176 output=176{{$}}
func.func @pad(%x: tensor<4x8xf32>) -> tensor<4x11xf32> {
  %0 = loom.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x11xf32>
  return %0 : tensor<4x11xf32>
}

// Reads both f16 operands, 2*32*2 = 128 bytes; writes 8*8*2 = 128.
// CHECK-LABEL: @concat loom.concat:
// CHECK-SAME: data_movement flops=0 read=128 written=128 output=128{{$}}
func.func @concat(%a: tensor<4x8xf16>, %b: tensor<4x8xf16>) -> tensor<8x8xf16> {
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<8x8xf16>
  return %0 : tensor<8x8xf16>
}

// Reads 8*8 i64 (512 bytes); writes (2*8 + 6*8)*8 = 512 over both results.
// CHECK-LABEL: @split loom.split:
// CHECK-SAME: data_movement flops=0 read=512 written=512 output=512{{$}}
func.func @split(%x: tensor<8x8xi64>) -> (tensor<2x8xi64>, tensor<6x8xi64>) {
  %0:2 = loom.split %x {axis = 0 : i64, sizes = array<i64: 2, 6>} : (tensor<8x8xi64>) -> (tensor<2x8xi64>, tensor<6x8xi64>)
  return %0#0, %0#1 : tensor<2x8xi64>, tensor<6x8xi64>
}

// ===== Transformer ops =====

// A gather: no flops; reads the ids (2*8*8 = 128 bytes) and one 16-float row
// per id (2*8*16*4 = 1024), writes the result (1024).
// CHECK-LABEL: @embedding loom.embedding:
// CHECK-SAME: data_movement flops=0 read=1152 written=1024 output=1024{{$}}
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<2x8xi64>) -> tensor<2x8x16xf32> {
  %0 = loom.embedding %table, %ids : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// A scatter-add: one addition per element of dy (256). Reads dy (1024),
// ids (128) and the 256 table elements it updates (1024): 2176. Writes the
// zeroed table (100*16*4 = 6400) and the updates (1024): 7424.
// CHECK-LABEL: @embedding_grad loom.embedding_grad:
// CHECK-SAME: data_movement flops=256 read=2176 written=7424 output=6400{{$}}
func.func @embedding_grad(%dy: tensor<2x8x16xf32>, %ids: tensor<2x8xi64>) -> tensor<100x16xf32> {
  %0 = loom.embedding_grad %dy, %ids {vocab_size = 100 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<100x16xf32>
  return %0 : tensor<100x16xf32>
}

// Causal self-attention, B*Hq = 16, Sq = Skv = 16, D = 32, Dv = 64, bf16:
// P = 16*17/2 = 136 pairs, each 2*(32 + 64) + 5 = 197 flops, plus one
// division per output element (16*64): 16*(136*197 + 1024) = 445056. Reads
// q 8192, k 2048 and v 4096 elements (28672 bytes), writes 16384 (32768).
// CHECK-LABEL: @attention_causal loom.attention:
// CHECK-SAME: attention flops=445056 read=28672 written=32768 output=32768{{$}}
func.func @attention_causal(%q: tensor<2x8x16x32xbf16>, %k: tensor<2x2x16x32xbf16>, %v: tensor<2x2x16x64xbf16>) -> tensor<2x8x16x64xbf16> {
  %0 = loom.attention %q, %k, %v {causal} : (tensor<2x8x16x32xbf16>, tensor<2x2x16x32xbf16>, tensor<2x2x16x64xbf16>) -> tensor<2x8x16x64xbf16>
  return %0 : tensor<2x8x16x64xbf16>
}

// Cross-attention with a mask, Sq = 16, Skv = 24, f32: P = 16*24 = 384
// pairs, each 192 + 5 + 1 (mask) = 198 flops: 16*(384*198 + 1024) =
// 1232896. Reads q 32768, k 12288, v 24576 and mask 1536 bytes (71168),
// writes 65536.
// CHECK-LABEL: @attention_cross_mask loom.attention:
// CHECK-SAME: attention flops=1232896 read=71168 written=65536 output=65536{{$}}
func.func @attention_cross_mask(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x24x32xf32>, %v: tensor<2x2x24x64xf32>, %m: tensor<16x24xf32>) -> tensor<2x8x16x64xf32> {
  %0 = loom.attention %q, %k, %v, %m : (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>, tensor<16x24xf32>) -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// Causal backward with Sq = 16 < Skv = 24 (bottom-right aligned): query i
// attends i + 9 keys, P = 16*24 - 16*15/2 = 264 pairs, each
// 2*(3*32 + 2*64) + 9 = 457 flops, plus 2 per element of out (2*16*64):
// 16*(264*457 + 2048) = 1963136. Reads q 32768, k 12288, v 24576, out and
// dout 65536 each (200704); writes dq, dk, dv (69632).
// CHECK-LABEL: @attention_grad_causal loom.attention_grad:
// CHECK-SAME: attention flops=1963136 read=200704 written=69632 output=69632{{$}}
func.func @attention_grad_causal(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x24x32xf32>, %v: tensor<2x2x24x64xf32>, %o: tensor<2x8x16x64xf32>, %do: tensor<2x8x16x64xf32>) -> tensor<2x8x16x32xf32> {
  %0:3 = loom.attention_grad %q, %k, %v, %o, %do {causal} : (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>)
  return %0#0 : tensor<2x8x16x32xf32>
}

// 1024 elements, D/2 = 4 frequencies, 16 position rows: 4 (inv_freq) +
// 3*16*4 (angles, cos, sin) + 3*1024 = 3268. Reads and writes 4096 bytes.
// CHECK-LABEL: @rope loom.rope:
// CHECK-SAME: elementwise flops=3268 read=4096 written=4096 output=4096{{$}}
func.func @rope(%x: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %0 = loom.rope %x : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// [B, S] positions give 32 position rows: 4 + 3*32*4 + 3072 = 3460; the
// positions add 32*8 bytes read.
// CHECK-LABEL: @rope_positions loom.rope:
// CHECK-SAME: elementwise flops=3460 read=4352 written=4096 output=4096{{$}}
func.func @rope_positions(%x: tensor<2x4x16x8xf32>, %p: tensor<2x16xi64>) -> tensor<2x4x16x8xf32> {
  %0 = loom.rope %x, %p : (tensor<2x4x16x8xf32>, tensor<2x16xi64>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// 1600 logits, 16 positions: 4*1600 + 3*16 + 1 = 6449. Reads 6400 + 128
// bytes, writes one f32.
// CHECK-LABEL: @cross_entropy loom.cross_entropy:
// CHECK-SAME: reduction flops=6449 read=6528 written=4 output=4{{$}}
func.func @cross_entropy(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>) -> tensor<f32> {
  %0 = loom.cross_entropy %logits, %labels : (tensor<2x8x100xf32>, tensor<2x8xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// 6*1600 + 16 + 1 = 9617. Reads logits, labels and dloss (6400 + 128 + 4),
// writes the 6400-byte gradient.
// CHECK-LABEL: @cross_entropy_grad loom.cross_entropy_grad:
// CHECK-SAME: reduction flops=9617 read=6532 written=6400 output=6400{{$}}
func.func @cross_entropy_grad(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>, %dloss: tensor<f32>) -> tensor<2x8x100xf32> {
  %0 = loom.cross_entropy_grad %logits, %labels, %dloss : (tensor<2x8x100xf32>, tensor<2x8xi64>, tensor<f32>) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// The local form is given log-probabilities: one accumulation per position
// and the final step, 16 + 1 = 17. Reads logits, labels and the 8-byte
// index offset (6400 + 128 + 8).
// CHECK-LABEL: @cross_entropy_offset loom.cross_entropy:
// CHECK-SAME: reduction flops=17 read=6536 written=4 output=4{{$}}
func.func @cross_entropy_offset(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>, %o: index) -> tensor<f32> {
  %0 = loom.cross_entropy %logits, %labels offset %o {sum} : (tensor<2x8x100xf32>, tensor<2x8xi64>, index) -> tensor<f32>
  return %0 : tensor<f32>
}

// Given log-probabilities, a logit costs an exp and the scaling: 2*1600 +
// 16 + 1 = 3217. Reads 6400 + 128 + 4 + 8.
// CHECK-LABEL: @cross_entropy_grad_offset loom.cross_entropy_grad:
// CHECK-SAME: reduction flops=3217 read=6540 written=6400 output=6400{{$}}
func.func @cross_entropy_grad_offset(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>, %dloss: tensor<f32>, %o: index) -> tensor<2x8x100xf32> {
  %0 = loom.cross_entropy_grad %logits, %labels, %dloss offset %o : (tensor<2x8x100xf32>, tensor<2x8xi64>, tensor<f32>, index) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// One compare-and-add per label (16); reads 128 bytes of labels, writes one
// f32.
// CHECK-LABEL: @label_count loom.label_count:
// CHECK-SAME: reduction flops=16 read=128 written=4 output=4{{$}}
func.func @label_count(%labels: tensor<2x8xi64>) -> tensor<f32> {
  %0 = loom.label_count %labels : (tensor<2x8xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// ===== Reduction, softmax and normalization ops =====

// One addition per input element (8*16 = 128) and one division per output
// element (8): 136 flops; reads 128*4 bytes, writes 8*4.
// CHECK-LABEL: @reduce_mean loom.reduce_mean:
// CHECK-SAME: reduction flops=136 read=512 written=32 output=32{{$}}
func.func @reduce_mean(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %0 = loom.reduce_mean %x {axes = array<i64: 1>} : (tensor<8x16xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// One comparison per input element: 128; i32 is 4 bytes: reads 128*4,
// writes 16*4.
// CHECK-LABEL: @reduce_max loom.reduce_max:
// CHECK-SAME: reduction flops=128 read=512 written=64 output=64{{$}}
func.func @reduce_max(%x: tensor<8x16xi32>) -> tensor<1x16xi32> {
  %0 = loom.reduce_max %x {axes = array<i64: 0>, keepdims} : (tensor<8x16xi32>) -> tensor<1x16xi32>
  return %0 : tensor<1x16xi32>
}

// Max, subtract, exp, sum, divide: 5 * 128 = 640 flops; 128*4 bytes each way.
// CHECK-LABEL: @softmax loom.softmax:
// CHECK-SAME: reduction flops=640 read=512 written=512 output=512{{$}}
func.func @softmax(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = loom.softmax %x {axis = 1 : i64} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// Max, subtract, exp, sum, subtract per element (5 * 128) and one log per
// row (4): 644 flops; f16 is 2 bytes: 128*2 each way.
// CHECK-LABEL: @log_softmax loom.log_softmax:
// CHECK-SAME: reduction flops=644 read=256 written=256 output=256{{$}}
func.func @log_softmax(%x: tensor<4x32xf16>) -> tensor<4x32xf16> {
  %0 = loom.log_softmax %x {axis = 1 : i64} : (tensor<4x32xf16>) -> tensor<4x32xf16>
  return %0 : tensor<4x32xf16>
}

// grad * output, sum, subtract, multiply: 4 * 128 = 512 flops; reads two
// tensors (2 * 128*4), writes one.
// CHECK-LABEL: @softmax_grad loom.softmax_grad:
// CHECK-SAME: reduction flops=512 read=1024 written=512 output=512{{$}}
func.func @softmax_grad(%y: tensor<4x32xf32>, %dy: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = loom.softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// Sum of grad, exp, multiply, subtract: 4 * 128 = 512 flops; bf16 is 2
// bytes: reads 2 * 128*2, writes 128*2.
// CHECK-LABEL: @log_softmax_grad loom.log_softmax_grad:
// CHECK-SAME: reduction flops=512 read=512 written=256 output=256{{$}}
func.func @log_softmax_grad(%y: tensor<4x32xbf16>, %dy: tensor<4x32xbf16>) -> tensor<4x32xbf16> {
  %0 = loom.log_softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x32xbf16>, tensor<4x32xbf16>) -> tensor<4x32xbf16>
  return %0 : tensor<4x32xbf16>
}

// N = 4*8*16 = 512 elements in R = 32 rows: 7 flops per element (mean sum,
// subtract, square, variance sum, scale, gamma, beta) and 4 per row (two
// divisions by D, add eps, rsqrt): 3584 + 128 = 3712. Reads (512 + 16 + 16)
// * 4 bytes, writes 512*4.
// CHECK-LABEL: @layer_norm loom.layer_norm:
// CHECK-SAME: reduction flops=3712 read=2176 written=2048 output=2048{{$}}
func.func @layer_norm(%x: tensor<4x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<4x8x16xf32> {
  %0 = loom.layer_norm %x, %g, %b : (tensor<4x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// Without gamma and beta, 5 flops per element: N = 64, R = 4: 320 + 16 = 336.
// CHECK-LABEL: @layer_norm_no_affine loom.layer_norm:
// CHECK-SAME: reduction flops=336 read=256 written=256 output=256{{$}}
func.func @layer_norm_no_affine(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.layer_norm %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Square, sum, scale, gamma: 4 per element; divide, add eps, rsqrt: 3 per
// row. N = 64, R = 4: 256 + 12 = 268; bf16: reads (64 + 16)*2, writes 64*2.
// CHECK-LABEL: @rms_norm loom.rms_norm:
// CHECK-SAME: reduction flops=268 read=160 written=128 output=128{{$}}
func.func @rms_norm(%x: tensor<4x16xbf16>, %g: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %0 = loom.rms_norm %x, %g : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}

// Without gamma, 3 per element: 192 + 12 = 204.
// CHECK-LABEL: @rms_norm_no_gamma loom.rms_norm:
// CHECK-SAME: reduction flops=204 read=256 written=256 output=256{{$}}
func.func @rms_norm_no_gamma(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.rms_norm %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Recomputing xhat (5), sum g (1), sum g * xhat (2), dx (4), g = grad * gamma
// (1), dgamma (2), dbeta (1): 16 per element; 4 + 2 per row. N = 64, R = 4:
// 1024 + 24 = 1048. Reads (64 + 64 + 16)*4, writes (64 + 16 + 16)*4.
// CHECK-LABEL: @layer_norm_grad loom.layer_norm_grad:
// CHECK-SAME: reduction flops=1048 read=576 written=384 output=384{{$}}
func.func @layer_norm_grad(%dy: tensor<4x16xf32>, %x: tensor<4x16xf32>, %g: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %0:3 = loom.layer_norm_grad %dy, %x, %g : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %0#0, %0#1, %0#2 : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// Without gamma, 12 per element: 768 + 24 = 792.
// CHECK-LABEL: @layer_norm_grad_no_affine loom.layer_norm_grad:
// CHECK-SAME: reduction flops=792 read=512 written=256 output=256{{$}}
func.func @layer_norm_grad_no_affine(%dy: tensor<4x16xf32>, %x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.layer_norm_grad %dy, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Recomputing the sum of squares (2) and xhat (1), sum g * xhat (2), dx (3),
// g = grad * gamma (1), dgamma (2): 11 per element; 3 + 1 per row. N = 64,
// R = 4: 704 + 16 = 720. Reads (64 + 64 + 16)*4, writes (64 + 16)*4.
// CHECK-LABEL: @rms_norm_grad loom.rms_norm_grad:
// CHECK-SAME: reduction flops=720 read=576 written=320 output=320{{$}}
func.func @rms_norm_grad(%dy: tensor<4x16xf32>, %x: tensor<4x16xf32>, %g: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %0:2 = loom.rms_norm_grad %dy, %x, %g : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>)
  return %0#0, %0#1 : tensor<4x16xf32>, tensor<16xf32>
}

// Without gamma, 8 per element: 512 + 16 = 528.
// CHECK-LABEL: @rms_norm_grad_no_gamma loom.rms_norm_grad:
// CHECK-SAME: reduction flops=528 read=512 written=256 output=256{{$}}
func.func @rms_norm_grad_no_gamma(%dy: tensor<4x16xf32>, %x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.rms_norm_grad %dy, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// ===== Elementwise and optimizer ops =====

// Binary ops: 1 flop per result element.
// sub: 4*6 = 24 flops; reads (24 + 6)*4 = 120, writes 24*4 = 96.
// CHECK-LABEL: @sub loom.sub:
// CHECK-SAME: elementwise flops=24 read=120 written=96 output=96{{$}}
func.func @sub(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sub %x, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// mul: [4,1] x [1,5] -> [4,5], 20 flops; i32 is 4 bytes: reads (4 + 5)*4,
// writes 20*4.
// CHECK-LABEL: @mul loom.mul:
// CHECK-SAME: elementwise flops=20 read=36 written=80 output=80{{$}}
func.func @mul(%i: tensor<4x1xi32>, %j: tensor<1x5xi32>) -> tensor<4x5xi32> {
  %0 = loom.mul %i, %j : (tensor<4x1xi32>, tensor<1x5xi32>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}

// div: 2*3 = 6 flops; f64: reads (6 + 2)*8 = 64, writes 6*8 = 48.
// CHECK-LABEL: @div loom.div:
// CHECK-SAME: elementwise flops=6 read=64 written=48 output=48{{$}}
func.func @div(%x: tensor<2x3xf64>, %s: tensor<2x1xf64>) -> tensor<2x3xf64> {
  %0 = loom.div %x, %s : (tensor<2x3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// Unary ops on 4x6 f32 (24 elements): read 96 and write 96 bytes; FLOPs
// are 24 times the per-element count in each comment.
// neg: 1 negation per element = 24 flops.
// CHECK-LABEL: @neg loom.neg:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96{{$}}
func.func @neg(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.neg %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// exp: 1 exp per element = 24 flops.
// CHECK-LABEL: @exp loom.exp:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96{{$}}
func.func @exp(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.exp %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// log: 1 log per element = 24 flops.
// CHECK-LABEL: @log loom.log:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96{{$}}
func.func @log(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.log %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// sqrt: 1 sqrt per element = 24 flops.
// CHECK-LABEL: @sqrt loom.sqrt:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96{{$}}
func.func @sqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sqrt %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// rsqrt: 1 rsqrt (one special function) per element = 24 flops.
// CHECK-LABEL: @rsqrt loom.rsqrt:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96{{$}}
func.func @rsqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.rsqrt %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// tanh: 1 tanh per element = 24 flops.
// CHECK-LABEL: @tanh loom.tanh:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96{{$}}
func.func @tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.tanh %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// sigmoid: 4: negate, exp, add, divide per element = 96 flops.
// CHECK-LABEL: @sigmoid loom.sigmoid:
// CHECK-SAME: elementwise flops=96 read=96 written=96 output=96{{$}}
func.func @sigmoid(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sigmoid %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// relu: 1 comparison per element = 24 flops.
// CHECK-LABEL: @relu loom.relu:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96{{$}}
func.func @relu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.relu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// silu: 5: the sigmoid's 4 and a multiply per element = 120 flops.
// CHECK-LABEL: @silu loom.silu:
// CHECK-SAME: elementwise flops=120 read=96 written=96 output=96{{$}}
func.func @silu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.silu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// gelu (erf): x / sqrt(2), erf, 1 + ., 0.5 * x, times = 5 per element = 120.
// CHECK-LABEL: @gelu loom.gelu:
// CHECK-SAME: elementwise flops=120 read=96 written=96 output=96{{$}}
func.func @gelu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// gelu (tanh): x^3 (2), 0.044715 * ., x + ., k * ., tanh, 1 + ., 0.5 * x,
// times = 9 per element = 216.
// CHECK-LABEL: @gelu_tanh loom.gelu:
// CHECK-SAME: elementwise flops=216 read=96 written=96 output=96{{$}}
func.func @gelu_tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu %x approximate = tanh : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// scale: 1 multiply per element = 24.
// CHECK-LABEL: @scale loom.scale:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96{{$}}
func.func @scale(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.scale %x {factor = 0.125} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// cast: no FLOPs; reads 24 f32 (96 bytes), writes 24 bf16 (48 bytes).
// CHECK-LABEL: @cast loom.cast:
// CHECK-SAME: elementwise flops=0 read=96 written=48 output=48{{$}}
func.func @cast(%x: tensor<4x6xf32>) -> tensor<4x6xbf16> {
  %0 = loom.cast %x : tensor<4x6xf32> to tensor<4x6xbf16>
  return %0 : tensor<4x6xbf16>
}

// dropout: a comparison and a multiply per element = 48 (Philox's integer
// work is not counted).
// CHECK-LABEL: @dropout loom.dropout:
// CHECK-SAME: elementwise flops=48 read=96 written=96 output=96{{$}}
func.func @dropout(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.dropout %x {rate = 0.1, seed = 7} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Activation gradients read dy and x (2*96 bytes) and write dx (96).
// relu_grad: 1 select = 1 per element = 24 flops.
// CHECK-LABEL: @relu_grad loom.relu_grad:
// CHECK-SAME: elementwise flops=24 read=192 written=96 output=96{{$}}
func.func @relu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.relu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// silu_grad: sigmoid (4), then 1 - s, x * ., 1 + ., s * ., dy * . (5) = 9 per element = 216 flops.
// CHECK-LABEL: @silu_grad loom.silu_grad:
// CHECK-SAME: elementwise flops=216 read=192 written=96 output=96{{$}}
func.func @silu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.silu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// gelu_grad: Phi (4), phi (4), x * phi, Phi + ., dy * . (3) = 11 per element = 264 flops.
// CHECK-LABEL: @gelu_grad loom.gelu_grad:
// CHECK-SAME: elementwise flops=264 read=192 written=96 output=96{{$}}
func.func @gelu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// gelu_grad_tanh: u (5), tanh (1), du/dx (3), gelu' (8), dy * . (1) = 18 per element = 432 flops.
// CHECK-LABEL: @gelu_grad_tanh loom.gelu_grad:
// CHECK-SAME: elementwise flops=432 read=192 written=96 output=96{{$}}
func.func @gelu_grad_tanh(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu_grad %dy, %x approximate = tanh : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// sgd_update, Nesterov momentum and weight decay on 768 f32: per element
// p - lr*g (2), g + wd*p (2), mu*b + (1-d)*g (3), g + mu*b (2) = 9, so 6912
// flops; reads p, g, b (3*3072 bytes), writes p', b' (2*3072).
// CHECK-LABEL: @sgd_update_nesterov loom.sgd_update:
// CHECK-SAME: optimizer flops=6912 read=9216 written=6144 output=6144{{$}}
func.func @sgd_update_nesterov(%p: tensor<768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<768xf32>, tensor<768xf32>) {
  %0:2 = loom.sgd_update %p, %g, %b {lr = 0.1, momentum = 0.9, weight_decay = 1.0e-4, nesterov} : (tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<768xf32>, tensor<768xf32>)
  return %0#0, %0#1 : tensor<768xf32>, tensor<768xf32>
}

// Plain SGD: p - lr*g = 2 per element = 1536 flops; reads p, g (2*3072),
// writes p' (3072).
// CHECK-LABEL: @sgd_update_plain loom.sgd_update:
// CHECK-SAME: optimizer flops=1536 read=6144 written=3072 output=3072{{$}}
func.func @sgd_update_plain(%p: tensor<768xf32>, %g: tensor<768xf32>) -> tensor<768xf32> {
  %0 = loom.sgd_update %p, %g {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<768xf32>, tensor<768xf32>) -> tensor<768xf32>
  return %0 : tensor<768xf32>
}

// adamw_update on 16x64 f32 (1024 elements, 4096 bytes each): 14 flops per
// element (decay 1, m' 3, v' 4, denominator 3, update 3) = 14336; reads four
// tensors and the 8-byte step (4*4096 + 8), writes three (3*4096).
// CHECK-LABEL: @adamw_update loom.adamw_update:
// CHECK-SAME: optimizer flops=14336 read=16392 written=12288 output=12288{{$}}
func.func @adamw_update(%p: tensor<16x64xf32>, %step: tensor<i64>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) {
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<i64>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>)
  return %0#0, %0#1, %0#2 : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
}

// ===== Loss-scaling ops =====

// One classify-and-add per element (1024); reads 4096 bytes, writes one f32.
// CHECK-LABEL: @nonfinite_count loom.nonfinite_count:
// CHECK-SAME: reduction flops=1024 read=4096 written=4 output=4{{$}}
func.func @nonfinite_count(%g: tensor<16x64xf32>) -> tensor<f32> {
  %0 = loom.nonfinite_count %g : (tensor<16x64xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// A copy of the chosen operand: no flops, 4096 bytes read (one operand, not
// both) and written.
// CHECK-LABEL: @select loom.select:
// CHECK-SAME: data_movement flops=0 read=4096 written=4096 output=4096{{$}}
func.func @select(%c: tensor<f32>, %p: tensor<16x64xf32>, %q: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = loom.select %c, %p, %q : (tensor<f32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// Three scalar flops; reads 4 + 8 + 4 bytes, writes 4 + 8.
// CHECK-LABEL: @update_loss_scale loom.update_loss_scale:
// CHECK-SAME: elementwise flops=3 read=16 written=12 output=12{{$}}
func.func @update_loss_scale(%s: tensor<f32>, %t: tensor<i64>, %n: tensor<f32>) -> (tensor<f32>, tensor<i64>) {
  %0:2 = loom.update_loss_scale %s, %t, %n {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %0#0, %0#1 : tensor<f32>, tensor<i64>
}

// RUN: loom-opt %s -test-print-costs -o /dev/null | FileCheck %s

// One function per op: FLOPs and bytes for the op's global shapes, computed
// by hand in the comment above each case.

// 2*M*N*K = 2*4*16*8 = 1024 flops; reads (4*8 + 8*16)*4 bytes, writes 4*16*4.
// CHECK-LABEL: @matmul loom.matmul:
// CHECK-SAME: gemm flops=1024 read=640 written=256 output=256
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Broadcast batch [2,1] x [3] -> [2,3]; 2*(2*3)*4*16*8 = 6144 flops; bf16 is
// 2 bytes: reads (64 + 384)*2, writes 384*2.
// CHECK-LABEL: @matmul_batched_bf16 loom.matmul:
// CHECK-SAME: gemm flops=6144 read=896 written=768 output=768
func.func @matmul_batched_bf16(%a: tensor<2x1x8x4xbf16>, %b: tensor<3x16x8xbf16>) -> tensor<2x3x4x16xbf16> {
  %0 = loom.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<2x1x8x4xbf16>, tensor<3x16x8xbf16>) -> tensor<2x3x4x16xbf16>
  return %0 : tensor<2x3x4x16xbf16>
}

// One flop per output element; the broadcast bias is read once (4*6 + 6)*4.
// CHECK-LABEL: @add loom.add:
// CHECK-SAME: elementwise flops=24 read=120 written=96 output=96
func.func @add(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = loom.add %x, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// One flop per input element; f64 is 8 bytes: reads 8*16*8, writes 8*8.
// CHECK-LABEL: @reduce_sum loom.reduce_sum:
// CHECK-SAME: reduction flops=128 read=1024 written=64 output=64
func.func @reduce_sum(%x: tensor<8x16xf64>) -> tensor<8xf64> {
  %0 = loom.reduce_sum %x {axes = array<i64: 1>} : (tensor<8x16xf64>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// ===== Reduction, softmax and normalization ops =====

// One addition per input element (8*16 = 128) and one division per output
// element (8): 136 flops; reads 128*4 bytes, writes 8*4.
// CHECK-LABEL: @reduce_mean loom.reduce_mean:
// CHECK-SAME: reduction flops=136 read=512 written=32 output=32
func.func @reduce_mean(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %0 = loom.reduce_mean %x {axes = array<i64: 1>} : (tensor<8x16xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// One comparison per input element: 128; i32 is 4 bytes: reads 128*4,
// writes 16*4.
// CHECK-LABEL: @reduce_max loom.reduce_max:
// CHECK-SAME: reduction flops=128 read=512 written=64 output=64
func.func @reduce_max(%x: tensor<8x16xi32>) -> tensor<1x16xi32> {
  %0 = loom.reduce_max %x {axes = array<i64: 0>, keepdims} : (tensor<8x16xi32>) -> tensor<1x16xi32>
  return %0 : tensor<1x16xi32>
}

// Max, subtract, exp, sum, divide: 5 * 128 = 640 flops; 128*4 bytes each way.
// CHECK-LABEL: @softmax loom.softmax:
// CHECK-SAME: reduction flops=640 read=512 written=512 output=512
func.func @softmax(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = loom.softmax %x {axis = 1 : i64} : (tensor<4x32xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// Max, subtract, exp, sum, subtract per element (5 * 128) and one log per
// row (4): 644 flops; f16 is 2 bytes: 128*2 each way.
// CHECK-LABEL: @log_softmax loom.log_softmax:
// CHECK-SAME: reduction flops=644 read=256 written=256 output=256
func.func @log_softmax(%x: tensor<4x32xf16>) -> tensor<4x32xf16> {
  %0 = loom.log_softmax %x {axis = 1 : i64} : (tensor<4x32xf16>) -> tensor<4x32xf16>
  return %0 : tensor<4x32xf16>
}

// grad * output, sum, subtract, multiply: 4 * 128 = 512 flops; reads two
// tensors (2 * 128*4), writes one.
// CHECK-LABEL: @softmax_grad loom.softmax_grad:
// CHECK-SAME: reduction flops=512 read=1024 written=512 output=512
func.func @softmax_grad(%y: tensor<4x32xf32>, %dy: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = loom.softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// Sum of grad, exp, multiply, subtract: 4 * 128 = 512 flops; bf16 is 2
// bytes: reads 2 * 128*2, writes 128*2.
// CHECK-LABEL: @log_softmax_grad loom.log_softmax_grad:
// CHECK-SAME: reduction flops=512 read=512 written=256 output=256
func.func @log_softmax_grad(%y: tensor<4x32xbf16>, %dy: tensor<4x32xbf16>) -> tensor<4x32xbf16> {
  %0 = loom.log_softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x32xbf16>, tensor<4x32xbf16>) -> tensor<4x32xbf16>
  return %0 : tensor<4x32xbf16>
}

// N = 4*8*16 = 512 elements in R = 32 rows: 7 flops per element (mean sum,
// subtract, square, variance sum, scale, gamma, beta) and 4 per row (two
// divisions by D, add eps, rsqrt): 3584 + 128 = 3712. Reads (512 + 16 + 16)
// * 4 bytes, writes 512*4.
// CHECK-LABEL: @layer_norm loom.layer_norm:
// CHECK-SAME: reduction flops=3712 read=2176 written=2048 output=2048
func.func @layer_norm(%x: tensor<4x8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<4x8x16xf32> {
  %0 = loom.layer_norm %x, %g, %b : (tensor<4x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// Without gamma and beta, 5 flops per element: N = 64, R = 4: 320 + 16 = 336.
// CHECK-LABEL: @layer_norm_no_affine loom.layer_norm:
// CHECK-SAME: reduction flops=336 read=256 written=256 output=256
func.func @layer_norm_no_affine(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.layer_norm %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Square, sum, scale, gamma: 4 per element; divide, add eps, rsqrt: 3 per
// row. N = 64, R = 4: 256 + 12 = 268; bf16: reads (64 + 16)*2, writes 64*2.
// CHECK-LABEL: @rms_norm loom.rms_norm:
// CHECK-SAME: reduction flops=268 read=160 written=128 output=128
func.func @rms_norm(%x: tensor<4x16xbf16>, %g: tensor<16xbf16>) -> tensor<4x16xbf16> {
  %0 = loom.rms_norm %x, %g : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}

// Without gamma, 3 per element: 192 + 12 = 204.
// CHECK-LABEL: @rms_norm_no_gamma loom.rms_norm:
// CHECK-SAME: reduction flops=204 read=256 written=256 output=256
func.func @rms_norm_no_gamma(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.rms_norm %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Recomputing xhat (5), sum g (1), sum g * xhat (2), dx (4), g = grad * gamma
// (1), dgamma (2), dbeta (1): 16 per element; 4 + 2 per row. N = 64, R = 4:
// 1024 + 24 = 1048. Reads (64 + 64 + 16)*4, writes (64 + 16 + 16)*4.
// CHECK-LABEL: @layer_norm_grad loom.layer_norm_grad:
// CHECK-SAME: reduction flops=1048 read=576 written=384 output=384
func.func @layer_norm_grad(%dy: tensor<4x16xf32>, %x: tensor<4x16xf32>, %g: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %0:3 = loom.layer_norm_grad %dy, %x, %g : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return %0#0, %0#1, %0#2 : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// Without gamma, 12 per element: 768 + 24 = 792.
// CHECK-LABEL: @layer_norm_grad_no_affine loom.layer_norm_grad:
// CHECK-SAME: reduction flops=792 read=512 written=256 output=256
func.func @layer_norm_grad_no_affine(%dy: tensor<4x16xf32>, %x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.layer_norm_grad %dy, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Recomputing the sum of squares (2) and xhat (1), sum g * xhat (2), dx (3),
// g = grad * gamma (1), dgamma (2): 11 per element; 3 + 1 per row. N = 64,
// R = 4: 704 + 16 = 720. Reads (64 + 64 + 16)*4, writes (64 + 16)*4.
// CHECK-LABEL: @rms_norm_grad loom.rms_norm_grad:
// CHECK-SAME: reduction flops=720 read=576 written=320 output=320
func.func @rms_norm_grad(%dy: tensor<4x16xf32>, %x: tensor<4x16xf32>, %g: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %0:2 = loom.rms_norm_grad %dy, %x, %g : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>)
  return %0#0, %0#1 : tensor<4x16xf32>, tensor<16xf32>
}

// Without gamma, 8 per element: 512 + 16 = 528.
// CHECK-LABEL: @rms_norm_grad_no_gamma loom.rms_norm_grad:
// CHECK-SAME: reduction flops=528 read=512 written=256 output=256
func.func @rms_norm_grad_no_gamma(%dy: tensor<4x16xf32>, %x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.rms_norm_grad %dy, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

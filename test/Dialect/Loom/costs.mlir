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

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

// ===== Shape ops =====

// A row-major reshape is a view: nothing read or written; the result is
// 2*128*768 f32 = 786432 bytes.
// CHECK-LABEL: @reshape loom.reshape:
// CHECK-SAME: data_movement flops=0 read=0 written=0 output=786432
func.func @reshape(%x: tensor<2x128x768xf32>) -> tensor<2x128x12x64xf32> {
  %0 = loom.reshape %x : tensor<2x128x768xf32> to tensor<2x128x12x64xf32>
  return %0 : tensor<2x128x12x64xf32>
}

// A copy: 4*8 bf16 read and written, 32*2 = 64 bytes each.
// CHECK-LABEL: @transpose loom.transpose:
// CHECK-SAME: data_movement flops=0 read=64 written=64 output=64
func.func @transpose(%x: tensor<4x8xbf16>) -> tensor<8x4xbf16> {
  %0 = loom.transpose %x {permutation = array<i64: 1, 0>} : (tensor<4x8xbf16>) -> tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}

// Only the selected 4*8 f32 are read: 128 bytes, as many written.
// CHECK-LABEL: @slice loom.slice:
// CHECK-SAME: data_movement flops=0 read=128 written=128 output=128
func.func @slice(%x: tensor<8x16xf32>) -> tensor<4x8xf32> {
  %0 = loom.slice %x {starts = array<i64: 0, 4>, limits = array<i64: 8, 12>, strides = array<i64: 2, 1>} : (tensor<8x16xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Reads 4*8 f32 (128 bytes); writes all 4*11, zeros included (176 bytes).
// CHECK-LABEL: @pad loom.pad:
// CHECK-SAME: data_movement flops=0 read=128 written=176 output=176
func.func @pad(%x: tensor<4x8xf32>) -> tensor<4x11xf32> {
  %0 = loom.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x11xf32>
  return %0 : tensor<4x11xf32>
}

// Reads both f16 operands, 2*32*2 = 128 bytes; writes 8*8*2 = 128.
// CHECK-LABEL: @concat loom.concat:
// CHECK-SAME: data_movement flops=0 read=128 written=128 output=128
func.func @concat(%a: tensor<4x8xf16>, %b: tensor<4x8xf16>) -> tensor<8x8xf16> {
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<8x8xf16>
  return %0 : tensor<8x8xf16>
}

// Reads 8*8 i64 (512 bytes); writes (2*8 + 6*8)*8 = 512 over both results.
// CHECK-LABEL: @split loom.split:
// CHECK-SAME: data_movement flops=0 read=512 written=512 output=512
func.func @split(%x: tensor<8x8xi64>) -> (tensor<2x8xi64>, tensor<6x8xi64>) {
  %0:2 = loom.split %x {axis = 0 : i64, sizes = array<i64: 2, 6>} : (tensor<8x8xi64>) -> (tensor<2x8xi64>, tensor<6x8xi64>)
  return %0#0, %0#1 : tensor<2x8xi64>, tensor<6x8xi64>
}

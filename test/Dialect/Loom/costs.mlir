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

// ===== Elementwise and optimizer ops =====

// Binary ops: 1 flop per result element.
// sub: 4*6 = 24 flops; reads (24 + 6)*4 = 120, writes 24*4 = 96.
// CHECK-LABEL: @sub loom.sub:
// CHECK-SAME: elementwise flops=24 read=120 written=96 output=96
func.func @sub(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sub %x, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// mul: [4,1] x [1,5] -> [4,5], 20 flops; i32 is 4 bytes: reads (4 + 5)*4,
// writes 20*4.
// CHECK-LABEL: @mul loom.mul:
// CHECK-SAME: elementwise flops=20 read=36 written=80 output=80
func.func @mul(%i: tensor<4x1xi32>, %j: tensor<1x5xi32>) -> tensor<4x5xi32> {
  %0 = loom.mul %i, %j : (tensor<4x1xi32>, tensor<1x5xi32>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}

// div: 2*3 = 6 flops; f64: reads (6 + 2)*8 = 64, writes 6*8 = 48.
// CHECK-LABEL: @div loom.div:
// CHECK-SAME: elementwise flops=6 read=64 written=48 output=48
func.func @div(%x: tensor<2x3xf64>, %s: tensor<2x1xf64>) -> tensor<2x3xf64> {
  %0 = loom.div %x, %s : (tensor<2x3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// Unary ops on 4x6 f32 (24 elements): read 96 and write 96 bytes; FLOPs
// are 24 times the per-element count in each comment.
// neg: 1 negation per element = 24 flops.
// CHECK-LABEL: @neg loom.neg:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96
func.func @neg(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.neg %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// exp: 1 exp per element = 24 flops.
// CHECK-LABEL: @exp loom.exp:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96
func.func @exp(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.exp %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// log: 1 log per element = 24 flops.
// CHECK-LABEL: @log loom.log:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96
func.func @log(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.log %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// sqrt: 1 sqrt per element = 24 flops.
// CHECK-LABEL: @sqrt loom.sqrt:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96
func.func @sqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sqrt %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// rsqrt: 1 rsqrt (one special function) per element = 24 flops.
// CHECK-LABEL: @rsqrt loom.rsqrt:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96
func.func @rsqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.rsqrt %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// tanh: 1 tanh per element = 24 flops.
// CHECK-LABEL: @tanh loom.tanh:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96
func.func @tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.tanh %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// sigmoid: 4: negate, exp, add, divide per element = 96 flops.
// CHECK-LABEL: @sigmoid loom.sigmoid:
// CHECK-SAME: elementwise flops=96 read=96 written=96 output=96
func.func @sigmoid(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sigmoid %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// relu: 1 comparison per element = 24 flops.
// CHECK-LABEL: @relu loom.relu:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96
func.func @relu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.relu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// silu: 5: the sigmoid's 4 and a multiply per element = 120 flops.
// CHECK-LABEL: @silu loom.silu:
// CHECK-SAME: elementwise flops=120 read=96 written=96 output=96
func.func @silu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.silu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// gelu (erf): x / sqrt(2), erf, 1 + ., 0.5 * x, times = 5 per element = 120.
// CHECK-LABEL: @gelu loom.gelu:
// CHECK-SAME: elementwise flops=120 read=96 written=96 output=96
func.func @gelu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// gelu (tanh): x^3 (2), 0.044715 * ., x + ., k * ., tanh, 1 + ., 0.5 * x,
// times = 9 per element = 216.
// CHECK-LABEL: @gelu_tanh loom.gelu:
// CHECK-SAME: elementwise flops=216 read=96 written=96 output=96
func.func @gelu_tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu %x approximate = tanh : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// scale: 1 multiply per element = 24.
// CHECK-LABEL: @scale loom.scale:
// CHECK-SAME: elementwise flops=24 read=96 written=96 output=96
func.func @scale(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.scale %x {factor = 0.125} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// cast: no FLOPs; reads 24 f32 (96 bytes), writes 24 bf16 (48 bytes).
// CHECK-LABEL: @cast loom.cast:
// CHECK-SAME: elementwise flops=0 read=96 written=48 output=48
func.func @cast(%x: tensor<4x6xf32>) -> tensor<4x6xbf16> {
  %0 = loom.cast %x : tensor<4x6xf32> to tensor<4x6xbf16>
  return %0 : tensor<4x6xbf16>
}

// dropout: a comparison and a multiply per element = 48 (Philox's integer
// work is not counted).
// CHECK-LABEL: @dropout loom.dropout:
// CHECK-SAME: elementwise flops=48 read=96 written=96 output=96
func.func @dropout(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.dropout %x {rate = 0.1, seed = 7} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Activation gradients read dy and x (2*96 bytes) and write dx (96).
// relu_grad: 1 select = 1 per element = 24 flops.
// CHECK-LABEL: @relu_grad loom.relu_grad:
// CHECK-SAME: elementwise flops=24 read=192 written=96 output=96
func.func @relu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.relu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// silu_grad: sigmoid (4), then 1 - s, x * ., 1 + ., s * ., dy * . (5) = 9 per element = 216 flops.
// CHECK-LABEL: @silu_grad loom.silu_grad:
// CHECK-SAME: elementwise flops=216 read=192 written=96 output=96
func.func @silu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.silu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// gelu_grad: Phi (4), phi (4), x * phi, Phi + ., dy * . (3) = 11 per element = 264 flops.
// CHECK-LABEL: @gelu_grad loom.gelu_grad:
// CHECK-SAME: elementwise flops=264 read=192 written=96 output=96
func.func @gelu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// gelu_grad_tanh: u (5), tanh (1), du/dx (3), gelu' (8), dy * . (1) = 18 per element = 432 flops.
// CHECK-LABEL: @gelu_grad_tanh loom.gelu_grad:
// CHECK-SAME: elementwise flops=432 read=192 written=96 output=96
func.func @gelu_grad_tanh(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu_grad %dy, %x approximate = tanh : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// sgd_update, Nesterov momentum and weight decay on 768 f32: per element
// p - lr*g (2), g + wd*p (2), mu*b + (1-d)*g (3), g + mu*b (2) = 9, so 6912
// flops; reads p, g, b (3*3072 bytes), writes p', b' (2*3072).
// CHECK-LABEL: @sgd_update_nesterov loom.sgd_update:
// CHECK-SAME: optimizer flops=6912 read=9216 written=6144 output=6144
func.func @sgd_update_nesterov(%p: tensor<768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<768xf32>, tensor<768xf32>) {
  %0:2 = loom.sgd_update %p, %g, %b {lr = 0.1, momentum = 0.9, weight_decay = 1.0e-4, nesterov} : (tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<768xf32>, tensor<768xf32>)
  return %0#0, %0#1 : tensor<768xf32>, tensor<768xf32>
}

// Plain SGD: p - lr*g = 2 per element = 1536 flops; reads p, g (2*3072),
// writes p' (3072).
// CHECK-LABEL: @sgd_update_plain loom.sgd_update:
// CHECK-SAME: optimizer flops=1536 read=6144 written=3072 output=3072
func.func @sgd_update_plain(%p: tensor<768xf32>, %g: tensor<768xf32>) -> tensor<768xf32> {
  %0 = loom.sgd_update %p, %g {lr = 0.1, momentum = 0.0, weight_decay = 0.0} : (tensor<768xf32>, tensor<768xf32>) -> tensor<768xf32>
  return %0 : tensor<768xf32>
}

// adamw_update on 16x64 f32 (1024 elements, 4096 bytes each): 14 flops per
// element (decay 1, m' 3, v' 4, denominator 3, update 3) = 14336; reads four
// tensors and the 8-byte step (4*4096 + 8), writes three (3*4096).
// CHECK-LABEL: @adamw_update loom.adamw_update:
// CHECK-SAME: optimizer flops=14336 read=16392 written=12288 output=12288
func.func @adamw_update(%p: tensor<16x64xf32>, %step: tensor<i64>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) {
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<i64>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>)
  return %0#0, %0#1, %0#2 : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
}

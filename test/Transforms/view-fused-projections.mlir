// RUN: loom-opt %s -split-input-file -loom-view-fused-projections | FileCheck %s

// nanoGPT's c_attn as an importer writes it (linear, bias, split of the last
// dim into q, k, v, each viewed as heads): the weight becomes the view
// [3, 1, H, H] and the bias [3, 1, 1, H], each with its file shape, the
// product [3, B, S, H] is split along dim 0 and the heads' reshapes read
// the parts directly.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x4x8xf64>
// CHECK-SAME: %[[W:[^:]+]]: tensor<3x1x8x8xf64> {loom.file_shape = array<i64: 24, 8>, loom.param = #loom.param<"h.0.attn.c_attn.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<3x1x1x8xf64> {loom.file_shape = array<i64: 24>, loom.param = #loom.param<"h.0.attn.c_attn.bias"
// CHECK: %[[P:.+]] = loom.matmul %[[X]], %[[W]] {transpose_rhs} : (tensor<2x4x8xf64>, tensor<3x1x8x8xf64>) -> tensor<3x2x4x8xf64>
// CHECK: %[[PB:.+]] = loom.add %[[P]], %[[B]] : (tensor<3x2x4x8xf64>, tensor<3x1x1x8xf64>) -> tensor<3x2x4x8xf64>
// CHECK: %[[S:.+]]:3 = loom.split %[[PB]] {axis = 0 : i64, sizes = array<i64: 1, 1, 1>}
// CHECK: loom.reshape %[[S]]#0 : tensor<1x2x4x8xf64> to tensor<2x4x2x4xf64>
// CHECK: loom.reshape %[[S]]#1 : tensor<1x2x4x8xf64> to tensor<2x4x2x4xf64>
// CHECK: loom.reshape %[[S]]#2 : tensor<1x2x4x8xf64> to tensor<2x4x2x4xf64>
// CHECK-NOT: loom.split
func.func @forward(%x: tensor<2x4x8xf64>,
    %w: tensor<24x8xf64> {loom.param = #loom.param<"h.0.attn.c_attn.weight", init = zeros, decay = true>},
    %b: tensor<24xf64> {loom.param = #loom.param<"h.0.attn.c_attn.bias", init = zeros, decay = false>}) -> tensor<f64> {
  %0 = loom.matmul %x, %w {transpose_rhs} : (tensor<2x4x8xf64>, tensor<24x8xf64>) -> tensor<2x4x24xf64>
  %1 = loom.add %0, %b : (tensor<2x4x24xf64>, tensor<24xf64>) -> tensor<2x4x24xf64>
  %q, %k, %v = loom.split %1 {axis = 2 : i64, sizes = array<i64: 8, 8, 8>} : (tensor<2x4x24xf64>) -> (tensor<2x4x8xf64>, tensor<2x4x8xf64>, tensor<2x4x8xf64>)
  %qh = loom.reshape %q : tensor<2x4x8xf64> to tensor<2x4x2x4xf64>
  %kh = loom.reshape %k : tensor<2x4x8xf64> to tensor<2x4x2x4xf64>
  %vh = loom.reshape %v : tensor<2x4x8xf64> to tensor<2x4x2x4xf64>
  %s = loom.add %qh, %kh : (tensor<2x4x2x4xf64>, tensor<2x4x2x4xf64>) -> tensor<2x4x2x4xf64>
  %t = loom.mul %s, %vh : (tensor<2x4x2x4xf64>, tensor<2x4x2x4xf64>) -> tensor<2x4x2x4xf64>
  %r = loom.reduce_sum %t {axes = array<i64: 0, 1, 2, 3>} : (tensor<2x4x2x4xf64>) -> tensor<f64>
  return %r : tensor<f64>
}

// -----

// Without a bias, on a rank-2 input, with two parts used by ops other than
// a reshape (SwiGLU's fused gate/up projection): the weight is [2, N, K]
// and each part is viewed back to the old piece's shape.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: tensor<2x6x4xf32> {loom.file_shape = array<i64: 12, 4>
// CHECK: %[[P:.+]] = loom.matmul %{{.+}}, %{{.+}} {transpose_rhs} : (tensor<5x4xf32>, tensor<2x6x4xf32>) -> tensor<2x5x6xf32>
// CHECK: %[[S:.+]]:2 = loom.split %[[P]] {axis = 0 : i64, sizes = array<i64: 1, 1>}
// CHECK: %[[G:.+]] = loom.reshape %[[S]]#0 : tensor<1x5x6xf32> to tensor<5x6xf32>
// CHECK: %[[U:.+]] = loom.reshape %[[S]]#1 : tensor<1x5x6xf32> to tensor<5x6xf32>
// CHECK: loom.mul %[[G]], %[[U]]
func.func @forward(%x: tensor<5x4xf32>,
    %w: tensor<12x4xf32> {loom.param = #loom.param<"mlp.gate_up.weight", init = zeros, decay = true>}) -> tensor<f32> {
  %0 = loom.matmul %x, %w {transpose_rhs} : (tensor<5x4xf32>, tensor<12x4xf32>) -> tensor<5x12xf32>
  %g, %u = loom.split %0 {axis = 1 : i64, sizes = array<i64: 6, 6>} : (tensor<5x12xf32>) -> (tensor<5x6xf32>, tensor<5x6xf32>)
  %m = loom.mul %g, %u : (tensor<5x6xf32>, tensor<5x6xf32>) -> tensor<5x6xf32>
  %r = loom.reduce_sum %m {axes = array<i64: 0, 1>} : (tensor<5x6xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Left alone: unequal parts (grouped-query attention's q, k, v), a weight
// used twice (tied), a split of another dim, a weight that is an input
// rather than a parameter, and one that already has a file shape.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: loom.file_shape = array<i64: 16, 4>
// CHECK-NOT: {axis = 0 : i64
// CHECK: return
func.func @forward(%x: tensor<5x4xf32>,
    %wqkv: tensor<16x4xf32> {loom.param = #loom.param<"qkv", init = zeros, decay = true>},
    %tied: tensor<8x4xf32> {loom.param = #loom.param<"tied", init = zeros, decay = true>},
    %data: tensor<8x4xf32> {loom.input = #loom.input<mask>},
    %viewed: tensor<8x4xf32> {loom.param = #loom.param<"viewed", init = zeros, decay = true>, loom.file_shape = array<i64: 4, 8>}) -> tensor<f32> {
  %0 = loom.matmul %x, %wqkv {transpose_rhs} : (tensor<5x4xf32>, tensor<16x4xf32>) -> tensor<5x16xf32>
  %q, %k, %v = loom.split %0 {axis = 1 : i64, sizes = array<i64: 8, 4, 4>} : (tensor<5x16xf32>) -> (tensor<5x8xf32>, tensor<5x4xf32>, tensor<5x4xf32>)
  %1 = loom.matmul %x, %tied {transpose_rhs} : (tensor<5x4xf32>, tensor<8x4xf32>) -> tensor<5x8xf32>
  %t0, %t1 = loom.split %1 {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<5x8xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>)
  %2 = loom.matmul %x, %tied {transpose_rhs} : (tensor<5x4xf32>, tensor<8x4xf32>) -> tensor<5x8xf32>
  %3 = loom.matmul %x, %data {transpose_rhs} : (tensor<5x4xf32>, tensor<8x4xf32>) -> tensor<5x8xf32>
  %d0, %d1 = loom.split %3 {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<5x8xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>)
  %4 = loom.matmul %x, %viewed {transpose_rhs} : (tensor<5x4xf32>, tensor<8x4xf32>) -> tensor<5x8xf32>
  %e0, %e1 = loom.split %4 {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<5x8xf32>) -> (tensor<5x4xf32>, tensor<5x4xf32>)
  %s0 = loom.add %q, %2 : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32>
  %s1 = loom.add %k, %v : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  %s2 = loom.add %t0, %t1 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  %s3 = loom.add %d0, %d1 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  %s4 = loom.add %e0, %e1 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  %a = loom.add %s1, %s2 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  %b = loom.add %a, %s3 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  %c = loom.add %b, %s4 : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  %r0 = loom.reduce_sum %c {axes = array<i64: 0, 1>} : (tensor<5x4xf32>) -> tensor<f32>
  %r1 = loom.reduce_sum %s0 {axes = array<i64: 0, 1>} : (tensor<5x8xf32>) -> tensor<f32>
  %r = loom.add %r0, %r1 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

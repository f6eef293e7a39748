// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=bf16-mixed | FileCheck %s
// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=fp16-mixed | FileCheck %s --check-prefix=FP16
// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=f32 | FileCheck %s --check-prefix=F32
// RUN: loom-opt %s -split-input-file -loom-mixed-precision | FileCheck %s --check-prefix=F32
// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=bf16-mixed -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// A remark per function counts what the policy did.
// REMARK: remark: precision bf16-mixed: 8 casts, 7 ops in the low type, 4 ops cast up to f32
// REMARK: remark: precision bf16-mixed: 5 casts, 5 ops in the low type, 0 ops cast up to f32
// REMARK: remark: precision bf16-mixed: 3 casts, 1 ops in the low type, 1 ops cast up to f32

// Every rule of the policy in one block: the embedding and the matmuls
// compute in bf16 (low); rms_norm, softmax, exp and cross_entropy in f32
// (their bf16 operands cast up); the bias add and the silu follow their
// bf16 operand, so the f32 bias is cast down; the mul of two f32 values
// stays f32. The parameters stay f32 and each value is cast once per type:
// `w` (two matmuls), the tied `table` (lookup and head) and the residual
// sum (softmax and exp) have one cast each.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[W:[^:]*]]: tensor<8x8xf32> {loom.param
// CHECK-SAME: %[[B:[^:]*]]: tensor<8xf32> {loom.param
// CHECK-SAME: %[[G:[^:]*]]: tensor<8xf32> {loom.param
// CHECK-SAME: %[[T:[^:]*]]: tensor<16x8xf32> {loom.param
// CHECK-SAME: -> tensor<f32>
// CHECK-NEXT: %[[T16:.*]] = loom.cast %[[T]] : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK-NEXT: %[[X:.*]] = loom.embedding %[[T16]], %{{.*}} : (tensor<16x8xbf16>, tensor<2x4xi64>) -> tensor<2x4x8xbf16>
// CHECK-NEXT: %[[X32:.*]] = loom.cast %[[X]] : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK-NEXT: %[[N:.*]] = loom.rms_norm %[[X32]], %[[G]] : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[N16:.*]] = loom.cast %[[N]] : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// CHECK-NEXT: %[[W16:.*]] = loom.cast %[[W]] : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK-NEXT: %[[H:.*]] = loom.matmul %[[N16]], %[[W16]] : (tensor<2x4x8xbf16>, tensor<8x8xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT: %[[B16:.*]] = loom.cast %[[B]] : tensor<8xf32> to tensor<8xbf16>
// CHECK-NEXT: %[[Y:.*]] = loom.add %[[H]], %[[B16]] : (tensor<2x4x8xbf16>, tensor<8xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT: %[[A:.*]] = loom.silu %[[Y]] : tensor<2x4x8xbf16>
// CHECK-NEXT: %[[H2:.*]] = loom.matmul %[[A]], %[[W16]] : (tensor<2x4x8xbf16>, tensor<8x8xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT: %[[R:.*]] = loom.add %[[X]], %[[H2]] : (tensor<2x4x8xbf16>, tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
// CHECK-NEXT: %[[R32:.*]] = loom.cast %[[R]] : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK-NEXT: %[[S:.*]] = loom.softmax %[[R32]] {axis = 2 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[E:.*]] = loom.exp %[[R32]] : tensor<2x4x8xf32>
// CHECK-NEXT: %[[M:.*]] = loom.mul %[[S]], %[[E]] : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[M16:.*]] = loom.cast %[[M]] : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// CHECK-NEXT: %[[L:.*]] = loom.matmul %[[M16]], %[[T16]] {transpose_rhs} : (tensor<2x4x8xbf16>, tensor<16x8xbf16>) -> tensor<2x4x16xbf16>
// CHECK-NEXT: %[[L32:.*]] = loom.cast %[[L]] : tensor<2x4x16xbf16> to tensor<2x4x16xf32>
// CHECK-NEXT: %[[LOSS:.*]] = loom.cross_entropy %[[L32]], %{{.*}} : (tensor<2x4x16xf32>, tensor<2x4xi64>) -> tensor<f32>
// CHECK-NEXT: return %[[LOSS]] : tensor<f32>
//
// The f32 policy changes nothing.
// F32-LABEL: func.func @forward
// F32-NOT: loom.cast
// F32: loom.embedding %{{.*}} : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
// F32-NOT: loom.cast
// F32: return
func.func @forward(%w: tensor<8x8xf32> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %b: tensor<8xf32> {loom.param = #loom.param<"b", init = zeros, decay = false>},
                   %g: tensor<8xf32> {loom.param = #loom.param<"g", init = ones, decay = false>},
                   %table: tensor<16x8xf32> {loom.param = #loom.param<"table", init = zeros, decay = true>},
                   %ids: tensor<2x4xi64> {loom.input = #loom.input<input_ids>},
                   %labels: tensor<2x4xi64> {loom.input = #loom.input<labels>}) -> tensor<f32> {
  %x = loom.embedding %table, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %n = loom.rms_norm %x, %g : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %h = loom.matmul %n, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %y = loom.add %h, %b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %a = loom.silu %y : tensor<2x4x8xf32>
  %h2 = loom.matmul %a, %w : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %r = loom.add %x, %h2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s = loom.softmax %r {axis = 2 : i64} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %e = loom.exp %r : tensor<2x4x8xf32>
  %m = loom.mul %s, %e : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %logits = loom.matmul %m, %table {transpose_rhs} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<2x4x16xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Attention computes in the low type; shape ops (transpose, and reshape,
// whose written shape stays) follow it; an f32 constant meets a low value
// through a cast; reduce_max follows (a maximum is exact in any type); the
// returned low value is cast back, so @forward still returns f32.
// CHECK-LABEL: func.func @forward
// CHECK: %[[O:.*]] = loom.attention %{{.*}}, %{{.*}}, %{{.*}} {causal} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16>
// CHECK-NEXT: %[[T:.*]] = loom.transpose %[[O]] {{.*}} -> tensor<1x4x2x8xbf16>
// CHECK-NEXT: %[[R:.*]] = loom.reshape %[[T]] : tensor<1x4x2x8xbf16> to tensor<4x16xbf16>
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[C16:.*]] = loom.cast %[[C]] : tensor<f32> to tensor<bf16>
// CHECK-NEXT: %[[S:.*]] = loom.mul %[[R]], %[[C16]] : (tensor<4x16xbf16>, tensor<bf16>) -> tensor<4x16xbf16>
// CHECK-NEXT: %[[MX:.*]] = loom.reduce_max %[[S]] {{.*}} -> tensor<bf16>
// CHECK-NEXT: %[[MX32:.*]] = loom.cast %[[MX]] : tensor<bf16> to tensor<f32>
// CHECK-NEXT: return %[[MX32]] : tensor<f32>
//
// fp16-mixed is the same policy with f16.
// FP16-LABEL: func.func @forward
// FP16: loom.attention {{.*}} -> tensor<1x2x4x8xf16>
// FP16: loom.reduce_max {{.*}} -> tensor<f16>
// FP16-NEXT: loom.cast %{{.*}} : tensor<f16> to tensor<f32>
//
// F32-LABEL: func.func @forward
// F32-NOT: loom.cast
// F32: return
func.func @forward(%q: tensor<1x2x4x8xf32> {loom.name = "q"},
                   %k: tensor<1x2x4x8xf32> {loom.name = "k"},
                   %v: tensor<1x2x4x8xf32> {loom.name = "v"}) -> tensor<f32> {
  %o = loom.attention %q, %k, %v {causal} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %t = loom.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x2x4x8xf32>) -> tensor<1x4x2x8xf32>
  %r = loom.reshape %t : tensor<1x4x2x8xf32> to tensor<4x16xf32>
  %c = arith.constant dense<2.0> : tensor<f32>
  %s = loom.mul %r, %c : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %mx = loom.reduce_max %s {axes = array<i64: 0, 1>} : (tensor<4x16xf32>) -> tensor<f32>
  return %mx : tensor<f32>
}

// -----

// Sums and means are statistics: f32, whatever their operand; a user's own
// cast is kept as written, and what follows it follows its type.
// CHECK-LABEL: func.func @forward
// CHECK: %[[H:.*]] = loom.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK-NEXT: %[[H32:.*]] = loom.cast %[[H]] : tensor<4x4xbf16> to tensor<4x4xf32>
// CHECK-NEXT: %[[M:.*]] = loom.reduce_mean %[[H32]] {{.*}} -> tensor<4xf32>
// CHECK-NEXT: %[[MH:.*]] = loom.cast %[[M]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[N:.*]] = loom.neg %[[MH]] : tensor<4xf16>
// CHECK-NEXT: %[[N32:.*]] = loom.cast %[[N]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: loom.reduce_sum %[[N32]] {{.*}} -> tensor<f32>
func.func @forward(%w: tensor<4x4xf32> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %x: tensor<4x4xf32> {loom.name = "x"}) -> tensor<f32> {
  %h = loom.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = loom.reduce_mean %h {axes = array<i64: 1>} : (tensor<4x4xf32>) -> tensor<4xf32>
  %mh = loom.cast %m : tensor<4xf32> to tensor<4xf16>
  %n = loom.neg %mh : tensor<4xf16>
  %n32 = loom.cast %n : tensor<4xf16> to tensor<4xf32>
  %l = loom.reduce_sum %n32 {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

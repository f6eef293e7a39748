// RUN: loom-opt %s -test-print-memory -o /dev/null | FileCheck %s
// RUN: loom-run %s --entry train_step --report-memory | FileCheck %s --check-prefix=RUN-SGD
// RUN: loom-run %s --entry grads --report-memory | FileCheck %s --check-prefix=RUN-GRADS
// RUN: loom-run %s --entry unused --report-memory | FileCheck %s --check-prefix=RUN-UNUSED
// RUN: loom-run %s --entry spmd --report-memory | FileCheck %s --check-prefix=RUN-SPMD

// dist::analyzeMemory's peak and breakdown on hand-written steps (f32, so 4
// bytes an element), and the interpreter's measured peak on the same
// functions: the two must be equal.

// One SGD step with momentum. Live bytes by op (w 64, momentum 64, x 32,
// h 32, t 32, loss 4, d 32, g 64, new w 64, new momentum 64): 192, 224, 196,
// 228, 260 (at g: the peak), then 196 at the update, which is the last
// reader of w and of its momentum and writes their new values in their
// storage (the in-place rule: one copy of each, not 324 with both), then
// 132 at the return.
// CHECK: @train_step peak=260 parameters=64 gradients=64 optimizer_states=64 activations=0 other=68
// RUN-SGD: peak live bytes: 260 (rank 0)
dist.mesh @m shape [2] axes ["tp"]

func.func @train_step(%w: tensor<4x4xf32> {loom.param = #loom.param<"w", init = zeros, decay = false>},
                      %m: tensor<4x4xf32> {loom.name = "w.momentum_buffer"},
                      %x: tensor<2x4xf32> {loom.name = "x"})
    -> (tensor<f32> {loom.name = "loss"}, tensor<4x4xf32> {loom.name = "w"},
        tensor<4x4xf32> {loom.name = "w.momentum_buffer"}) {
  %h = loom.matmul %x, %w {loom.fwd = 0 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %t = loom.tanh %h {loom.fwd = 1 : i64} : tensor<2x4xf32>
  %l = loom.reduce_sum %t {axes = array<i64: 0, 1>, loom.fwd = 2 : i64} : (tensor<2x4xf32>) -> tensor<f32>
  %d = loom.mul %t, %t {loom.fwd = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = loom.matmul %x, %d {loom.fwd = 0 : i64, transpose_lhs} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  %p2, %m2 = loom.sgd_update %w, %g, %m {loom.fwd = 0 : i64, lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, weight_decay = 0.0 : f64}
      : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return %l, %p2, %m2 : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// Gradients only, with a larger batch: the peak is in the backward (w 64,
// x 128, t 128, loss 4, d 128 = 452), where the forward's tanh is an
// activation (a forward result a backward op reads) and the backward's
// temporary d, the data and the loss are "other"; the gradient is not live
// yet.
// CHECK: @grads peak=452 parameters=64 gradients=0 optimizer_states=0 activations=128 other=260
// RUN-GRADS: peak live bytes: 452 (rank 0)
func.func @grads(%w: tensor<4x4xf32> {loom.param = #loom.param<"w", init = zeros, decay = false>},
                 %x: tensor<8x4xf32> {loom.name = "x"})
    -> (tensor<f32> {loom.name = "loss"}, tensor<4x4xf32> {loom.name = "w.grad"}) {
  %h = loom.matmul %x, %w {loom.fwd = 0 : i64} : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %t = loom.tanh %h {loom.fwd = 1 : i64} : tensor<8x4xf32>
  %l = loom.reduce_sum %t {axes = array<i64: 0, 1>, loom.fwd = 2 : i64} : (tensor<8x4xf32>) -> tensor<f32>
  %d = loom.mul %t, %t {loom.fwd = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %g = loom.matmul %x, %d {loom.fwd = 0 : i64, transpose_lhs} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %l, %g : tensor<f32>, tensor<4x4xf32>
}

// An argument nothing reads (b, 256 bytes, not loop-carried: no result
// shares its name) is live at the first op only, and a result nothing reads
// at its own op only: 64 + 256 + 64 at the first op, then 128, then 64.
// CHECK: @unused peak=384 parameters=0 gradients=0 optimizer_states=0 activations=0 other=384
// RUN-UNUSED: peak live bytes: 384 (rank 0)
func.func @unused(%a: tensor<16xf32> {loom.name = "a"}, %b: tensor<64xf32> {loom.name = "b"})
    -> (tensor<16xf32> {loom.name = "out"}) {
  %s = loom.tanh %a : tensor<16xf32>
  %dead = loom.exp %s : tensor<16xf32>
  return %s : tensor<16xf32>
}

// An SPMD program counts local types, per rank: x's 2x4 block (32) and its
// tanh (32), then the tanh and the gathered 4x4 (64) = 96 on every rank.
// CHECK: @spmd peak=96 parameters=0 gradients=0 optimizer_states=0 activations=0 other=96
// RUN-SPMD: peak live bytes: 96 (rank 0)
// RUN-SPMD: peak live bytes: 96 (rank 1)
func.func @spmd(%x: tensor<2x4xf32> {loom.name = "x", dist.layout = #dist.layout<@m, [["tp"], []]>})
    -> (tensor<4x4xf32> {loom.name = "y"}) {
  %t = loom.tanh %x : tensor<2x4xf32>
  %g = dist.all_gather %t on @m axes ["tp"] dim 0 : tensor<2x4xf32> -> tensor<4x4xf32>
  return %g : tensor<4x4xf32>
}

// RUN: loom-opt %s -test-print-memory=top=5 -o /dev/null | FileCheck %s

// `-test-print-memory=top=N` names the op at the peak and lists the N
// largest values live there with their category and kind, so a memory
// model can be compared with what the liveness peak holds (docs/Search.md,
// "Memory").

// A step whose backward recomputes its forward (clones marked
// `loom.recompute`) and gathers the recomputed value (a collective). At the
// peak (the backward add, 228 B) the parameter, the gathered value and the
// add's result (64 B each), the recomputed tanh (32 B, read again by the
// last matmul) and the loss (4 B) are live; the data input died at the
// recomputed matmul, its last reader.
// CHECK: @train_step peak=228 parameters=64 gradients=0 optimizer_states=0 activations=0 other=164
// CHECK-NEXT: peak at op 6 loom.add (fwd 1)
// CHECK-NEXT: 64 parameters argument 0 #loom.param<"w", init = zeros, decay = false> tensor<4x4xf32>
// CHECK-NEXT: 64 other collective dist.all_gather tensor<4x4xf32>
// CHECK-NEXT: 64 other backward loom.add fwd 1 tensor<4x4xf32>
// CHECK-NEXT: 32 other recompute loom.tanh fwd 1 tensor<2x4xf32>
// CHECK-NEXT: 4 other forward loom.reduce_sum fwd 2 tensor<f32>
dist.mesh @m shape [2] axes ["tp"]

func.func @train_step(%w: tensor<4x4xf32> {loom.param = #loom.param<"w", init = zeros, decay = false>},
                      %x: tensor<2x4xf32> {loom.name = "x"})
    -> (tensor<f32> {loom.name = "loss"}, tensor<2x4xf32> {loom.name = "d"}) {
  %h = loom.matmul %x, %w {loom.fwd = 0 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %t = loom.tanh %h {loom.fwd = 1 : i64} : tensor<2x4xf32>
  %l = loom.reduce_sum %t {axes = array<i64: 0, 1>, loom.fwd = 2 : i64} : (tensor<2x4xf32>) -> tensor<f32>
  %h2 = loom.matmul %x, %w {loom.fwd = 0 : i64, loom.recompute} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %t2 = loom.tanh %h2 {loom.fwd = 1 : i64, loom.recompute} : tensor<2x4xf32>
  %g = dist.all_gather %t2 on @m axes ["tp"] dim 0 : tensor<2x4xf32> -> tensor<4x4xf32>
  %e = loom.add %g, %g {loom.fwd = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = loom.matmul %t2, %e {loom.fwd = 0 : i64} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %l, %d : tensor<f32>, tensor<2x4xf32>
}

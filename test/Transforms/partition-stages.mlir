// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' -dist-assign-stages='stages=2 schedule=1f1b' -loom-partition-pipeline='mesh=dp=1' 2>/dev/null | FileCheck %s --check-prefixes=CHECK,ONE-F-ONE-B
// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' -dist-assign-stages='stages=2 schedule=gpipe' -loom-partition-pipeline='mesh=dp=1' 2>/dev/null | FileCheck %s --check-prefixes=CHECK,GPIPE

// The pipeline axis becomes the mesh's major axis; stage 0 owns the tied
// weight (it updates it) and sends it to stage 1 at the start; activations
// go forward and gradients back with unique tags; the head's part of the
// tied gradient is accumulated on stage 1 over both micro-batches and sent
// once; each result says which stage computes it.
// CHECK: dist.mesh @mesh shape [2, 1] axes ["pp", "dp"]
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f64> {{{.*}}dist.stage = 1 : i64, loom.name = "loss"}, tensor<4x4xf64> {{{.*}}dist.stage = 0 : i64, loom.name = "emb.w"}, tensor<4x4xf64> {{{.*}}dist.stage = 0 : i64, loom.name = "h.0.w"}, tensor<4x4xf64> {{{.*}}dist.stage = 1 : i64, loom.name = "h.1.w"}
// Stage 0 (the same order under both schedules: F0 F1 B0 B1).
// CHECK: dist.send %arg0 on @mesh axis "pp" to 1 {dist.stage = 0 : i64}
// CHECK: %[[A0:.*]] = loom.tanh {{.*}}loom.micro_batch = 0
// CHECK: dist.send %[[A0]] on @mesh axis "pp" to 1 {dist.stage = 0 : i64, tag = 1 : i64}
// CHECK: %[[A1:.*]] = loom.tanh {{.*}}loom.micro_batch = 1
// CHECK: dist.send %[[A1]] on @mesh axis "pp" to 1 {dist.stage = 0 : i64, tag = 3 : i64}
// CHECK: dist.recv on @mesh axis "pp" from 1 {dist.stage = 0 : i64, tag = 2 : i64}
// CHECK: dist.recv on @mesh axis "pp" from 1 {dist.stage = 0 : i64, tag = 5 : i64}
// CHECK: %[[HEAD:.*]] = dist.recv on @mesh axis "pp" from 1 {dist.stage = 0 : i64, tag = 4 : i64} : tensor<4x4xf64>
// CHECK: %[[G:.*]] = loom.add %{{.*}}, %[[HEAD]] {dist.stage = 0 : i64
// CHECK: loom.sgd_update %arg0, %[[G]] lr_scale(%[[LRS:arg[0-9]+]]) {dist.stage = 0 : i64
// Stage 1: 1F1B runs F0 B0 F1 B1, GPipe F0 F1 B0 B1.
// CHECK: dist.recv on @mesh axis "pp" from 0 {dist.stage = 1 : i64, tag = 1 : i64}
// ONE-F-ONE-B: dist.send %{{.*}} on @mesh axis "pp" to 0 {dist.stage = 1 : i64, tag = 2 : i64}
// ONE-F-ONE-B: dist.recv on @mesh axis "pp" from 0 {dist.stage = 1 : i64, tag = 3 : i64}
// GPIPE: dist.recv on @mesh axis "pp" from 0 {dist.stage = 1 : i64, tag = 3 : i64}
// GPIPE: dist.send %{{.*}} on @mesh axis "pp" to 0 {dist.stage = 1 : i64, tag = 2 : i64}
// CHECK: dist.send %{{.*}} on @mesh axis "pp" to 0 {dist.stage = 1 : i64, tag = 4 : i64} : tensor<4x4xf64>
// CHECK: loom.sgd_update %arg2, {{.*}} lr_scale(%[[LRS]]) {{{.*}}dist.stage = 1 : i64
// CHECK: return
func.func @forward(%e: tensor<4x4xf64> {loom.param = #loom.param<"emb.w", init = zeros, decay = true>},
                   %w0: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
                   %w1: tensor<4x4xf64> {loom.param = #loom.param<"h.1.w", init = zeros, decay = true>},
                   %x: tensor<4x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %a = loom.matmul %x, %e : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %b = loom.matmul %a, %w0 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %c = loom.tanh %b : tensor<4x4xf64>
  %d = loom.matmul %c, %w1 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %f = loom.tanh %d : tensor<4x4xf64>
  %g = loom.matmul %f, %e {transpose_rhs} : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %l = loom.reduce_sum %g {axes = array<i64: 0, 1>} : (tensor<4x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

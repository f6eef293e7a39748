// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' -dist-assign-stages='stages=2 schedule=1f1b' -loom-partition-pipeline='mesh=dp=1' -dist-derive-eval-step 2>/dev/null | FileCheck %s

// A 2-stage 1F1B pipeline over 2 micro-batches with a tied weight and
// dropout: @eval_step takes @train_step's arguments and returns its loss
// alone (stage 1); it keeps the forward of both micro-batches with the
// transfers the forward needs (the tied weight to stage 1, tag 0, and each
// micro-batch's activation, tags 1 and 3), but no gradient transfer, no
// update and no dropout. @train_step is left as it was.
// CHECK-LABEL: func.func @train_step
// CHECK: loom.dropout
// CHECK: loom.sgd_update
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: -> (tensor<f64> {{{.*}}dist.stage = 1 : i64, loom.name = "loss"})
// CHECK-NOT: loom.dropout
// CHECK-NOT: loom.sgd_update
// CHECK-NOT: _grad
// CHECK: dist.send %arg0 on @mesh axis "pp" to 1 {dist.stage = 0 : i64}
// CHECK-NOT: loom.dropout
// CHECK: dist.send %{{.*}} on @mesh axis "pp" to 1 {dist.stage = 0 : i64, tag = 1 : i64}
// CHECK: dist.send %{{.*}} on @mesh axis "pp" to 1 {dist.stage = 0 : i64, tag = 3 : i64}
// CHECK-NOT: dist.recv on @mesh axis "pp" from 1
// CHECK: dist.recv on @mesh axis "pp" from 0 {dist.stage = 1 : i64, tag = 1 : i64}
// CHECK: dist.recv on @mesh axis "pp" from 0 {dist.stage = 1 : i64} : tensor<4x4xf64>
// CHECK: dist.recv on @mesh axis "pp" from 0 {dist.stage = 1 : i64, tag = 3 : i64}
// CHECK-NOT: dist.send
// CHECK-NOT: loom.sgd_update
// CHECK: return %{{.*}} : tensor<f64>
// CHECK-NEXT: }
func.func @forward(%e: tensor<4x4xf64> {loom.param = #loom.param<"emb.w", init = zeros, decay = true>},
                   %w0: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
                   %w1: tensor<4x4xf64> {loom.param = #loom.param<"h.1.w", init = zeros, decay = true>},
                   %x: tensor<4x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %a = loom.matmul %x, %e : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %b = loom.matmul %a, %w0 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %c = loom.tanh %b : tensor<4x4xf64>
  %c2 = loom.dropout %c {rate = 1.000000e-01 : f64, seed = 0 : i64} : tensor<4x4xf64>
  %d = loom.matmul %c2, %w1 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %f = loom.tanh %d : tensor<4x4xf64>
  %g = loom.matmul %f, %e {transpose_rhs} : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %l = loom.reduce_sum %g {axes = array<i64: 0, 1>} : (tensor<4x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

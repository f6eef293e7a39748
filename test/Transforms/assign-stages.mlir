// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' -dist-assign-stages='stages=2' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' -dist-assign-stages='stages=2' 2>/dev/null | FileCheck %s
// RUN: not loom-opt %s -loom-autodiff -dist-assign-stages='stages=3' 2>&1 >/dev/null | FileCheck %s --check-prefix=TOO-MANY
// RUN: not loom-opt %s -loom-autodiff -dist-assign-stages='stages=2 stage-layers=1,2' 2>&1 >/dev/null | FileCheck %s --check-prefix=BAD-SPLIT
// RUN: not loom-opt %s -loom-autodiff -dist-assign-stages='stages=2 schedule=zigzag' 2>&1 >/dev/null | FileCheck %s --check-prefix=BAD-SCHEDULE
// RUN: not loom-opt %s -loom-autodiff -loom-partition-pipeline='mesh=dp=1' -dist-assign-stages='stages=2' 2>&1 >/dev/null | FileCheck %s --check-prefix=LATE

// Two layers (`h.0`, `h.1`) on two stages: the embedding-like matmul before
// the first layer goes with stage 0; the tied head after the last layer,
// which reads no layer parameter, stays with the last layer's stage.
// Backward and update ops follow their forward op's stage.
// REMARK: remark: pipeline: 2 stages over 2 layers [0, 1), [1, 2), 2 micro-batch(es), 1f1b
// CHECK: module attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 2, stage_layers = {{\[\[}}0, 1], [1, 2]]>}
// CHECK-LABEL: func.func @train_step
// CHECK: loom.matmul %{{.*}}, %arg0 {dist.stage = 0 : i64, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64}
// CHECK: loom.matmul %{{.*}}, %arg1 {dist.stage = 0 : i64, loom.fwd = 1 : i64, loom.micro_batch = 0 : i64}
// CHECK: loom.tanh %{{.*}} {dist.stage = 0 : i64, loom.fwd = 2 : i64
// CHECK: loom.matmul %{{.*}}, %arg2 {dist.stage = 1 : i64, loom.fwd = 3 : i64
// CHECK: loom.matmul %{{.*}}, %arg0 {dist.stage = 1 : i64, loom.fwd = 5 : i64, loom.micro_batch = 0 : i64, transpose_rhs}
// CHECK: loom.matmul %{{.*}}, %arg1 {dist.stage = 0 : i64, loom.backward, loom.fwd = 1 : i64
// CHECK: loom.sgd_update %arg0, {{.*}}dist.stage = 0 : i64
// CHECK: loom.sgd_update %arg2, {{.*}}dist.stage = 1 : i64

// TOO-MANY: error: dist-assign-stages: cannot split 2 transformer layer(s) into 3 pipeline stages
// BAD-SPLIT: error: dist-assign-stages: stage-layers '1,2' gives 2 stage(s) of 3 layer(s), expected 2 stage(s) of 2 layer(s)
// BAD-SCHEDULE: error: dist-assign-stages: unknown schedule 'zigzag', expected gpipe, 1f1b or interleaved-1f1b
// LATE: error: dist-assign-stages: @train_step already has layouts; assign stages before the partition phase
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

// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' -dist-assign-stages='stages=2 virtual-stages=2' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' -dist-assign-stages='stages=2 virtual-stages=2' -dist-verify-pipeline 2>/dev/null | FileCheck %s
// RUN: not loom-opt %s -loom-autodiff -dist-assign-stages='stages=2 virtual-stages=2' 2>&1 >/dev/null | FileCheck %s --check-prefix=MICRO
// RUN: not loom-opt %s -loom-autodiff -dist-assign-stages='stages=2 virtual-stages=4' 2>&1 >/dev/null | FileCheck %s --check-prefix=TOO-MANY
// RUN: not loom-opt %s -loom-autodiff -dist-assign-stages='stages=2 virtual-stages=2 schedule=1f1b' 2>&1 >/dev/null | FileCheck %s --check-prefix=NOT-INTERLEAVED

// Four layers (`h.0` .. `h.3`) on two stages of two chunks each: chunk c
// holds layer c and runs on stage c mod 2, so stage 0 holds layers 0 and 2
// (its chunks 0 and 1) and stage 1 layers 1 and 3. The embedding goes with
// chunk 0, the tied head with the last chunk; backward and update ops
// follow their forward op's stage and chunk (the tied embedding's update
// its first reader's, chunk 0).
// REMARK: remark: pipeline: 2 stages of 2 chunks over 4 layers [0, 1), [1, 2), [2, 3), [3, 4), 2 micro-batch(es), interleaved-1f1b
// CHECK: module attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 2, schedule = "interleaved-1f1b", virtual_stages = 2, stage_layers = {{\[\[}}0, 1], [1, 2], [2, 3], [3, 4]]>}
// CHECK-LABEL: func.func @train_step
// CHECK: loom.matmul %{{.*}}, %arg0 {dist.chunk = 0 : i64, dist.stage = 0 : i64, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64}
// CHECK: loom.matmul %{{.*}}, %arg1 {dist.chunk = 0 : i64, dist.stage = 0 : i64, loom.fwd = 1 : i64, loom.micro_batch = 0 : i64}
// CHECK: loom.matmul %{{.*}}, %arg2 {dist.chunk = 0 : i64, dist.stage = 1 : i64, loom.fwd = 3 : i64, loom.micro_batch = 0 : i64}
// CHECK: loom.matmul %{{.*}}, %arg3 {dist.chunk = 1 : i64, dist.stage = 0 : i64, loom.fwd = 5 : i64, loom.micro_batch = 0 : i64}
// CHECK: loom.matmul %{{.*}}, %arg4 {dist.chunk = 1 : i64, dist.stage = 1 : i64, loom.fwd = 7 : i64, loom.micro_batch = 0 : i64}
// CHECK: loom.matmul %{{.*}}, %arg0 {dist.chunk = 1 : i64, dist.stage = 1 : i64, loom.fwd = 9 : i64, loom.micro_batch = 0 : i64, transpose_rhs}
// CHECK: loom.sgd_update %arg0, {{.*}}dist.chunk = 0 : i64, dist.stage = 0 : i64
// CHECK: loom.sgd_update %arg1, {{.*}}dist.chunk = 0 : i64, dist.stage = 0 : i64
// CHECK: loom.sgd_update %arg3, {{.*}}dist.chunk = 1 : i64, dist.stage = 0 : i64
// CHECK: loom.sgd_update %arg4, {{.*}}dist.chunk = 1 : i64, dist.stage = 1 : i64

// MICRO: error: dist-assign-stages: the interleaved-1f1b schedule needs the micro-batches (1) to be a multiple of the pipeline stages (2)
// TOO-MANY: error: dist-assign-stages: cannot split 4 transformer layer(s) into 2 pipeline stages of 4 chunks each (8 chunks): every chunk needs at least one layer
// NOT-INTERLEAVED: error: dist-assign-stages: virtual stages (2) need the interleaved-1f1b schedule, found 1f1b
func.func @forward(%e: tensor<4x4xf64> {loom.param = #loom.param<"emb.w", init = zeros, decay = true>},
                   %w0: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
                   %w1: tensor<4x4xf64> {loom.param = #loom.param<"h.1.w", init = zeros, decay = true>},
                   %w2: tensor<4x4xf64> {loom.param = #loom.param<"h.2.w", init = zeros, decay = true>},
                   %w3: tensor<4x4xf64> {loom.param = #loom.param<"h.3.w", init = zeros, decay = true>},
                   %x: tensor<4x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %a = loom.matmul %x, %e : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %b0 = loom.matmul %a, %w0 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %c0 = loom.tanh %b0 : tensor<4x4xf64>
  %b1 = loom.matmul %c0, %w1 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %c1 = loom.tanh %b1 : tensor<4x4xf64>
  %b2 = loom.matmul %c1, %w2 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %c2 = loom.tanh %b2 : tensor<4x4xf64>
  %b3 = loom.matmul %c2, %w3 : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %c3 = loom.tanh %b3 : tensor<4x4xf64>
  %g = loom.matmul %c3, %e {transpose_rhs} : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %l = loom.reduce_sum %g {axes = array<i64: 0, 1>} : (tensor<4x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

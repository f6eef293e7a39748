// RUN: loom-opt %s -loom-autodiff -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2' 2>/dev/null | FileCheck %s
// RUN: loom-opt %s -loom-autodiff -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: loom-opt %s -loom-autodiff -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=1' 2>/dev/null | FileCheck %s --check-prefix=UNPIPELINED
// RUN: loom-opt %s -loom-autodiff -loom-slice-micro-batches='micro-batches=4' -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2' 2>/dev/null | FileCheck %s --check-prefix=SPLIT
// RUN: not loom-opt %s -loom-autodiff -loom-slice-micro-batches='micro-batches=4' -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2 micro-batches=2' 2>&1 | FileCheck %s --check-prefix=DISAGREE

// The search's follow-up when a pipelined plan chooses a micro-batch count:
// loom-slice-micro-batches splits the one-micro-batch step loom-autodiff
// built (as it was before the search wrote its strategies) into that count,
// and the step is searched again under the chosen stages. Nothing builds
// the step from @forward again.
// CHECK: dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 2,
// CHECK-LABEL: func.func @train_step
// CHECK: loom.slice %{{.*}} {dist.strategy = {{.*}}loom.micro_batch = 0 : i64, starts = array<i64: 0>
// CHECK: loom.slice %{{.*}} {limits = array<i64: 16>, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64, starts = array<i64: 8>
// CHECK: loom.matmul {{.*}}dist.strategy = #dist.strategy<@mesh, {{.*}}loom.micro_batch = 0 : i64} : (tensor<8x64xf32>
// CHECK: loom.matmul %{{.*}}, %{{.*}} {loom.fwd = 1 : i64, loom.micro_batch = 1 : i64} : (tensor<8x64xf32>
// REMARK: remark: built @train_step from @forward
// REMARK: remark: split @train_step into 2 micro-batches along dim 0 of 1 batch argument(s), the loss averaged over the micro-batches

// Without pipelining the step keeps its one micro-batch.
// UNPIPELINED-NOT: dist.pipeline
// UNPIPELINED-NOT: loom.micro_batch

// A step split already is priced with its own count, which the search
// cannot change: one it is told to use instead is an error.
// SPLIT: dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 4,
// SPLIT: loom.micro_batch = 3 : i64
// DISAGREE: error: micro-batches = 2 disagrees with @train_step, which is split into 4 micro-batches already
func.func @forward(
    %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
    %w0: tensor<64x64xf32> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
    %w1: tensor<64x64xf32> {loom.param = #loom.param<"h.1.w", init = zeros, decay = true>},
    %w2: tensor<64x64xf32> {loom.param = #loom.param<"h.2.w", init = zeros, decay = true>},
    %w3: tensor<64x64xf32> {loom.param = #loom.param<"h.3.w", init = zeros, decay = true>},
    %ids: tensor<16xi64> {loom.input = #loom.input<input_ids>}) -> tensor<f32> {
  %e = loom.embedding %wte, %ids : (tensor<128x64xf32>, tensor<16xi64>) -> tensor<16x64xf32>
  %h0 = loom.matmul %e, %w0 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h1 = loom.matmul %h0, %w1 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h2 = loom.matmul %h1, %w2 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h3 = loom.matmul %h2, %w3 : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %s = loom.reduce_sum %h3 {axes = array<i64: 0, 1>} : (tensor<16x64xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

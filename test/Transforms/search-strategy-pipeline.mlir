// RUN: loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2 micro-batches=2' | FileCheck %s
// RUN: loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=4 schedule=gpipe' | FileCheck %s --check-prefix=FOUR
// RUN: loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=1' | FileCheck %s --check-prefix=NONE
// RUN: loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g parallel-config=%S/Inputs/pipeline.json pipeline-stages=0 micro-batches=4' | FileCheck %s --check-prefix=CONFIG
// RUN: loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=0 explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SEARCH
// RUN: not loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=8 pipeline-stages=8' 2>&1 | FileCheck %s --check-prefix=LAYERS
// RUN: not loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=3' 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2 micro-batches=3' 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 schedule=zigzag' 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2 virtual-stages=2 schedule=interleaved-1f1b micro-batches=2' | FileCheck %s --check-prefix=INTERLEAVED
// RUN: loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2 virtual-stages=0 micro-batches=2' | FileCheck %s --check-prefix=CHOOSE
// RUN: not loom-opt %s -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2 virtual-stages=2' 2>&1 | FileCheck %s --check-prefix=CHUNKS

// An embedding, four identical layers and a sum (the head). Over two stages
// the layers split two and two; the mesh written is the intra-stage one (two
// devices), `dist.pipeline` carries the stage layers and the prediction, and
// the step's prediction is the pipeline's (with its bubble). With four
// stages each takes one layer (GPipe with 4 micro-batches: priced at
// their own shapes, 16 micro-batches of one row would each read the whole
// 64x64 weights, which costs more than the shorter bubble saves; before
// micro-batches were priced at their shapes the search took 16, every
// micro-batch then 1/16 of the batch's time); with pipelining off there is no attribute; the
// parallel config's pipeline_stage reaches the search; user errors name the
// values.

// CHECK: module attributes {{.*}}dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 2, stage_layers = {{\[\[}}0, 2], [2, 4]], predicted = <step_time_s = [[STEP:[-+.0-9eE]+]], bubble_s = [[BUBBLE:[-+.0-9eE]+]], p2p_s = {{[^,]+}}, stage_forward_s = [{{[^,]+}}, {{[^]]+}}], stage_backward_s = [{{[^,]+}}, {{[^]]+}}], stage_memory_bytes = [{{[0-9]+}}, {{[0-9]+}}]>>
// CHECK-SAME: dist.plan = #dist.plan<zero = {{[01]}}, recompute = {{true|false}}, step_time_s = [[STEP]], {{.*}}bubble_s = [[BUBBLE]],
// CHECK-NEXT: dist.mesh @mesh shape [1, 2] axes ["dp", "tp"]
// CHECK-LABEL: func.func @train_step(
// CHECK-COUNT-4: loom.matmul {{.*}}dist.strategy = #dist.strategy<@mesh,

// FOUR: dist.pipeline = #dist.pipeline<stages = 4, micro_batches = 4, schedule = "gpipe", stage_layers = {{\[\[}}0, 1], [1, 2], [2, 3], [3, 4]], predicted = <
// FOUR-NEXT: dist.mesh @mesh shape [1] axes ["dp"]

// NONE-NOT: dist.pipeline
// NONE: dist.plan = #dist.plan<{{.*}}bubble_s = 0.000000e+00
// NONE-NEXT: dist.mesh @mesh shape [1, 4] axes ["dp", "tp"]

// CONFIG: dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 4,
// CONFIG-NEXT: dist.mesh @mesh shape [2] axes ["dp"]

// With the search choosing, every pp x dp x tp candidate is priced and the
// pipelines lose on this small model (the hop latency dominates); each
// pipeline mesh says why: {dp:2} over two stages is ruled out by its nodes
// alone (each node's cheapest candidate, before its edges are priced).
// SEARCH: remark: mesh {dp:1, tp:4}: 0.080 us per step
// SEARCH: remark: mesh pp=2 x {dp:2}: skipped, its nodes alone cost {{[0-9.]+}} us per step, no better than 0.080 us
// SEARCH: remark: mesh pp=2 x {dp:1, tp:2}: {{.*}} per step at best ({{[0-9]+}} micro-batches), no better than 0.080 us
// SEARCH: remark: mesh pp=4 x {dp:1}: {{.*}} per step at best ({{[0-9]+}} micro-batches), no better than 0.080 us

// LAYERS: error: 8 pipeline stages need at least 8 layers; the model has 4
// DIVIDE: error: pipeline-stages = 3 does not divide the 4 devices
// MICRO: error: no plan fits in 80.000 GiB per device on any mesh of 4 devices; micro-batches = 3 does not divide the batch per replica ({{[0-9]+}} on mesh
// SCHEDULE: error: schedule: expected `1f1b`, `gpipe` or `interleaved-1f1b`, found `zigzag`

// Interleaved 1F1B with 2 chunks per stage: one layer per chunk, chunk c on
// stage c mod 2; the prediction has a time per chunk and a memory size per
// stage. Left to choose V (0), the search prices V = 1 and V = 2 (the only
// counts that divide 4 layers over 2 stages): on this model the hop latency
// dwarfs the compute, so the 3 hops per micro-batch of V = 2 lose to 1F1B's
// one and the plan is plain 1F1B.
// INTERLEAVED: dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 2, schedule = "interleaved-1f1b", virtual_stages = 2, stage_layers = {{\[\[}}0, 1], [1, 2], [2, 3], [3, 4]], predicted = <step_time_s = {{[^,]+}}, bubble_s = {{[^,]+}}, p2p_s = {{[^,]+}}, stage_forward_s = [{{[^,]+}}, {{[^,]+}}, {{[^,]+}}, {{[^]]+}}], stage_backward_s = [{{[^]]+}}], stage_memory_bytes = [{{[0-9]+}}, {{[0-9]+}}]>>
// CHOOSE: dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 2, stage_layers = {{\[\[}}0, 2], [2, 4]], predicted
// CHUNKS: error: virtual-stages = 2: expected 0 (the search chooses), 1, or more chunks under schedule `interleaved-1f1b`
func.func @train_step(
    %wte: tensor<128x64xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
    %w0: tensor<64x64xf32> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
    %w1: tensor<64x64xf32> {loom.param = #loom.param<"h.1.w", init = zeros, decay = true>},
    %w2: tensor<64x64xf32> {loom.param = #loom.param<"h.2.w", init = zeros, decay = true>},
    %w3: tensor<64x64xf32> {loom.param = #loom.param<"h.3.w", init = zeros, decay = true>},
    %ids: tensor<16xi64> {loom.input = #loom.input<input_ids>})
    -> (tensor<f32> {loom.name = "loss"}) {
  %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64} : (tensor<128x64xf32>, tensor<16xi64>) -> tensor<16x64xf32>
  %h0 = loom.matmul %e, %w0 {loom.fwd = 1 : i64} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h1 = loom.matmul %h0, %w1 {loom.fwd = 2 : i64} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h2 = loom.matmul %h1, %w2 {loom.fwd = 3 : i64} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h3 = loom.matmul %h2, %w3 {loom.fwd = 4 : i64} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %s = loom.reduce_sum %h3 {axes = array<i64: 0, 1>, loom.fwd = 5 : i64} : (tensor<16x64xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

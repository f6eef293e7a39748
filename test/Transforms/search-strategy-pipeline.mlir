// RUN: loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2 micro-batches=2' | FileCheck %s
// RUN: loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=4 schedule=gpipe' | FileCheck %s --check-prefix=FOUR
// RUN: loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=1' | FileCheck %s --check-prefix=NONE
// RUN: loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g parallel-config=%S/Inputs/pipeline.json micro-batches=4' | FileCheck %s --check-prefix=CONFIG
// RUN: not loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g devices=8 pipeline-stages=8' 2>&1 | FileCheck %s --check-prefix=LAYERS
// RUN: not loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=3' 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g devices=4 pipeline-stages=2 micro-batches=3' 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not loom-opt %s -split-input-file -dist-search-strategy='cluster=dgx-a100-80g devices=4 schedule=zigzag' 2>&1 | FileCheck %s --check-prefix=SCHEDULE

// Four identical layers over two stages split two and two; the mesh written
// is the intra-stage one (two devices), the plan carries the pipeline, its
// prediction and the stage layers, and the step's prediction has a bubble.
// With four stages each takes one layer; without a pipeline there is no
// attribute; the parallel config's pipeline_stage reaches the search.

CHECKS_HERE

// LAYERS: error: 8 pipeline stages need at least 8 layers; the model has 4
// DIVIDE: error: pipeline-stages = 3 does not divide the 4 devices
// MICRO: error: micro-batches = 3 does not divide the batch per replica
// SCHEDULE: error: schedule: expected `1f1b` or `gpipe`, found `zigzag`
func.func @train_step(
    %w0: tensor<64x64xf32> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
    %w1: tensor<64x64xf32> {loom.param = #loom.param<"h.1.w", init = zeros, decay = true>},
    %w2: tensor<64x64xf32> {loom.param = #loom.param<"h.2.w", init = zeros, decay = true>},
    %w3: tensor<64x64xf32> {loom.param = #loom.param<"h.3.w", init = zeros, decay = true>},
    %x: tensor<16x64xf32> {loom.input = #loom.input<tokens>})
    -> (tensor<f32> {loom.name = "loss"}) {
  %h0 = loom.matmul %x, %w0 {loom.fwd = 0 : i64} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h1 = loom.matmul %h0, %w1 {loom.fwd = 1 : i64} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h2 = loom.matmul %h1, %w2 {loom.fwd = 2 : i64} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %h3 = loom.matmul %h2, %w3 {loom.fwd = 3 : i64} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %s = loom.reduce_sum %h3 {axes = array<i64: 0, 1>, loom.fwd = 4 : i64} : (tensor<16x64xf32>) -> tensor<f32>
  return %s : tensor<f32>
}

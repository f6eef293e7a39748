// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-verify-pipeline | FileCheck %s

// A pipelined step passes: every op of an id on one stage (its forward and
// backward alike), stages rising with the ids. Operand-free ops need none.
// CHECK-LABEL: func.func @train_step
module attributes {dist.pipeline = #dist.pipeline<stages = 2, micro_batches = 1, schedule = "1f1b", stage_layers = [[0, 1], [1, 2]]>} {
  func.func @train_step(%x: tensor<4x8xf32>) -> tensor<f32> {
    %one = arith.constant {loom.fwd = 0 : i64} dense<1.0> : tensor<4x8xf32>
    %a = loom.neg %x {loom.fwd = 0 : i64, dist.stage = 0 : i64} : tensor<4x8xf32>
    %b = loom.neg %a {loom.fwd = 1 : i64, dist.stage = 1 : i64} : tensor<4x8xf32>
    %s = loom.reduce_sum %b {axes = array<i64: 0, 1>, loom.fwd = 2 : i64, dist.stage = 1 : i64} : (tensor<4x8xf32>) -> tensor<f32>
    %g = loom.neg %one {loom.fwd = 1 : i64, dist.stage = 1 : i64} : tensor<4x8xf32>
    %h = loom.neg %g {loom.fwd = 0 : i64, dist.stage = 0 : i64} : tensor<4x8xf32>
    return %s : tensor<f32>
  }
}

// -----

// Without a pipeline no op has a stage.
module {
  func.func @train_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    // expected-error @+1 {{pipeline contract: carries a `dist.stage`, but the module has no pipeline}}
    %a = loom.neg %x {loom.fwd = 0 : i64, dist.stage = 0 : i64} : tensor<4x8xf32>
    return %a : tensor<4x8xf32>
  }
}

// -----

// A stage outside the pipeline, an op of an id left without a stage, and an
// id split over two stages are all reported.
module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  func.func @train_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    // expected-error @+1 {{pipeline contract: stage 2 is outside the 2 stages}}
    %a = loom.neg %x {loom.fwd = 0 : i64, dist.stage = 2 : i64} : tensor<4x8xf32>
    // expected-error @+1 {{pipeline contract: an op of forward id 1 has no `dist.stage`}}
    %b = loom.neg %x {loom.fwd = 1 : i64} : tensor<4x8xf32>
    %c = loom.neg %x {loom.fwd = 2 : i64, dist.stage = 1 : i64} : tensor<4x8xf32>
    // expected-error @+1 {{pipeline contract: on stage 0, but the ops of forward id 2 run on stage 1}}
    %d = loom.neg %c {loom.fwd = 2 : i64, dist.stage = 0 : i64} : tensor<4x8xf32>
    return %d : tensor<4x8xf32>
  }
}

// -----

// A later forward op on an earlier stage would send activations backwards.
module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  func.func @train_step(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %a = loom.neg %x {loom.fwd = 0 : i64, dist.stage = 1 : i64} : tensor<4x8xf32>
    // expected-error @+1 {{pipeline contract: forward id 1 runs on stage 0 after forward id 0 on stage 1; stages must not fall along the forward}}
    %b = loom.neg %a {loom.fwd = 1 : i64, dist.stage = 0 : i64} : tensor<4x8xf32>
    return %b : tensor<4x8xf32>
  }
}

// -----

// A `dist.pipeline` that is not a `#dist.pipeline` (the dictionary it once
// was) is reported by the shared reader.
// expected-error @+1 {{`dist.pipeline`: expected a #dist.pipeline, found {axis = "pp", stages = 2 : i64}}}
module attributes {dist.pipeline = {axis = "pp", stages = 2 : i64}} {
  func.func @train_step() {
    return
  }
}

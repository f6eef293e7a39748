// RUN: loom-opt %s -split-input-file -verify-diagnostics -loom-interleave-copies='copies=2'
// RUN: not loom-opt %s -split-input-file -loom-interleave-copies='copies=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not loom-opt %s -split-input-file -loom-interleave-copies='copies=4' 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not loom-opt %s -split-input-file -loom-interleave-copies='copies=2 batch-shards=4' 2>&1 | FileCheck %s --check-prefix=SHARDS

// ZERO: error: loom-interleave-copies: copies must be >= 1, found 0

// The copies split what one rank holds of one micro-batch, and say both
// numbers when they cannot (here the batch of 6, all on one rank).
// DIVIDE: error: loom-interleave-copies: 4 copies (fine_grain_interleave) do not divide the per-rank micro-batch of 6 rows (the batch's 6 rows over 1 = micro-batches x data-parallel ranks)

// A batch that does not even split over micro-batches and ranks.
// SHARDS: error: loom-interleave-copies: the batch of 6 rows does not split into 4 per-rank micro-batches (micro-batches x data-parallel ranks)

// Without a parameter named with a layer number there is no layer to
// interleave.
// expected-error @+1 {{loom-interleave-copies: found no transformer layer to interleave: no op of @forward reads a parameter named with a layer number (such as `transformer.h.0.attn.c_attn.weight`)}}
func.func @forward(%arg0: tensor<8x4xf64> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
                   %arg1: tensor<6x3xi64> {loom.input = #loom.input<input_ids>},
                   %arg2: tensor<6x3xi64> {loom.input = #loom.input<labels>}) -> tensor<f64> {
  %0 = loom.embedding %arg0, %arg1 : (tensor<8x4xf64>, tensor<6x3xi64>) -> tensor<6x3x4xf64>
  %1 = loom.matmul %0, %arg0 {transpose_rhs} : (tensor<6x3x4xf64>, tensor<8x4xf64>) -> tensor<6x3x8xf64>
  %2 = loom.cross_entropy %1, %arg2 : (tensor<6x3x8xf64>, tensor<6x3xi64>) -> tensor<f64>
  return %2 : tensor<f64>
}

// -----

// A layer that reads a batch-dependent value whose batch is not dim 0 (here
// transposed to dim 1 before the layer) cannot be given a copy of it.
func.func @forward(%arg0: tensor<8x4xf64> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
                   %arg1: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
                   %arg2: tensor<6x3xi64> {loom.input = #loom.input<input_ids>},
                   %arg3: tensor<3x6xi64> {loom.input = #loom.input<labels>}) -> tensor<f64> {
  %0 = loom.embedding %arg0, %arg2 : (tensor<8x4xf64>, tensor<6x3xi64>) -> tensor<6x3x4xf64>
  %1 = loom.transpose %0 {permutation = array<i64: 1, 0, 2>} : (tensor<6x3x4xf64>) -> tensor<3x6x4xf64>
  // expected-error @+1 {{'loom.matmul' op cannot be split into 2 copies of the batch: it reads a value of type 'tensor<3x6x4xf64>' that depends on the batch (of 6 rows) without holding it in dim 0}}
  %2 = loom.matmul %1, %arg1 {transpose_rhs} : (tensor<3x6x4xf64>, tensor<4x4xf64>) -> tensor<3x6x4xf64>
  %3 = loom.matmul %2, %arg0 {transpose_rhs} : (tensor<3x6x4xf64>, tensor<8x4xf64>) -> tensor<3x6x8xf64>
  %4 = loom.cross_entropy %3, %arg3 : (tensor<3x6x8xf64>, tensor<3x6xi64>) -> tensor<f64>
  return %4 : tensor<f64>
}

// -----

// A model without a data input has no batch to split.
// expected-error @+1 {{loom-interleave-copies: 2 copies need a batch to split, and @forward has no `loom.input` argument of rank >= 1}}
func.func @forward(%arg0: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>}) -> tensor<f64> {
  %0 = loom.reduce_sum %arg0 {axes = array<i64: 0, 1>} : (tensor<4x4xf64>) -> tensor<f64>
  return %0 : tensor<f64>
}

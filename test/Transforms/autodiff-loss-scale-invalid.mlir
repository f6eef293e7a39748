// RUN: not loom-opt %s -loom-autodiff=loss-scale=-2 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not loom-opt %s -loom-autodiff="loss-scale=dynamic optimizer=none" 2>&1 | FileCheck %s --check-prefix=NONE

// A scale that is not a positive finite number.
// VALUE: loom-autodiff: loss-scale must be none, dynamic or a finite number > 0, found '-2'

// Loss scaling skips an update: without an optimizer there is none.
// NONE: loom-autodiff: loss-scale needs an optimizer

func.func @forward(%table: tensor<16x8xf32> {loom.param = #loom.param<"table", init = zeros, decay = true>},
                   %ids: tensor<2x4xi64> {loom.input = #loom.input<input_ids>},
                   %labels: tensor<2x4xi64> {loom.input = #loom.input<labels>}) -> tensor<f32> {
  %x = loom.embedding %table, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %logits = loom.matmul %x, %table {transpose_rhs} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<2x4x16xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

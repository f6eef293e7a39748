// RUN: loom-opt %s -split-input-file -verify-diagnostics -loom-autodiff

// Backward ops have no VJP: Loom does not differentiate twice.
func.func @forward(%w: tensor<3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %x: tensor<3xf64> {loom.name = "x"}) -> tensor<f64> {
  // expected-error @+1 {{has no VJP: it is a backward or optimizer op}}
  %g = loom.relu_grad %w, %x : tensor<3xf64>
  %l = loom.reduce_sum %g {axes = array<i64: 0>} : (tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}


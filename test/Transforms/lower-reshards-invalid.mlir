// RUN: loom-opt %s -split-input-file -verify-diagnostics -dist-lower-reshards

// No collective creates a pending sum, so a replicated value cannot become
// partial.
dist.mesh @m shape [2, 2] axes ["x", "y"]
func.func @to_partial(%g: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'dist.reshard' op cannot be lowered: destination [[], []], partial = ["y"] is partial over mesh axis `y` but source [["x"], []] is not; no collective creates a pending sum}}
  %0 = dist.reshard %g from <@m, [["x"], []]> to <@m, [[], []], partial = ["y"]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}


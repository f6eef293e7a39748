// RUN: loom-opt %s -split-input-file -verify-diagnostics -loom-mixed-precision=precision=bf16-mixed
// RUN: not loom-opt %s -split-input-file -loom-mixed-precision=precision=bf15-mixed 2>&1 | FileCheck %s --check-prefix=NAME

// An op the policy has no rule for is an error naming it, never cast
// silently wrong.
func.func @forward(%w: tensor<3xf32> {loom.param = #loom.param<"w", init = zeros, decay = true>}) -> tensor<f32> {
  // expected-error @+1 {{'arith.addf' op has no rule in the mixed-precision policy}}
  %y = arith.addf %w, %w : tensor<3xf32>
  %l = loom.reduce_sum %y {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Backward and optimizer ops belong to the step loom-autodiff builds later.
func.func @forward(%w: tensor<3xf32> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %x: tensor<3xf32> {loom.name = "x"}) -> tensor<f32> {
  // expected-error @+1 {{'loom.relu_grad' op belongs to a training step; loom-mixed-precision runs on @forward before loom-autodiff}}
  %g = loom.relu_grad %w, %x : tensor<3xf32>
  %l = loom.reduce_sum %g {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Master weights are f32: a model already in another float type is refused.
// expected-error @+1 {{precision `bf16-mixed` expects an f32 model (f32 master weights), but argument 0 of @forward is 'tensor<3xbf16>'}}
func.func @forward(%w: tensor<3xbf16> {loom.param = #loom.param<"w", init = zeros, decay = true>}) -> tensor<f32> {
  %l = loom.reduce_sum %w {axes = array<i64: 0>} : (tensor<3xbf16>) -> tensor<bf16>
  %c = loom.cast %l : tensor<bf16> to tensor<f32>
  return %c : tensor<f32>
}

// -----

// The entry must exist.
// expected-error @+1 {{expected a `func.func @forward` with a body to apply precision `bf16-mixed` to}}
module {
  func.func @train_step(%w: tensor<3xf32>) -> tensor<3xf32> {
    return %w : tensor<3xf32>
  }
}

// NAME: unknown precision `bf15-mixed`; expected f32, bf16-mixed or fp16-mixed

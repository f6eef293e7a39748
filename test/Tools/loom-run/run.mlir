// loom-run runs a function, prints one summary line per result, writes the
// results, and compares tensor files.
//
// Parameters without data take their initializer (fc.bias: ones), other
// arguments come from the inputs; the single rank-0 float result is `loss`:
// x @ w = [[4, 5], [10, 11]], + 1, summed = 34.
// RUN: loom-run %s --entry inputs --dtype f32 --outputs %t.in.safetensors
// RUN: loom-run %s --entry forward --inputs %t.in.safetensors --outputs %t.a.safetensors | FileCheck %s --check-prefix=F64
// F64: loss: shape [] dtype F64 mean 34 absmax 34 fnv1a64 {{[0-9a-f]+}}
// RUN: loom-run %s --entry forward --dtype f32 --inputs %t.in.safetensors | FileCheck %s --check-prefix=F32
// F32: loss: shape [] dtype F32 mean 34 absmax 34 fnv1a64 {{[0-9a-f]+}}
//
// Results are named by `loom.name`, else result<N>; integers keep their type.
// RUN: loom-run %s --entry named --inputs %t.in.safetensors | FileCheck %s --check-prefix=NAMED
// NAMED: scaled: shape [2, 3] dtype F64 mean 7 absmax 12
// NAMED-NEXT: result1: shape [2] dtype I32 mean 5 absmax 7
// NAMED-NEXT: result2: shape [2, 3] dtype BOOL mean 0.5 absmax 1
//
// A file compares equal to itself; a different value, a missing and an extra
// tensor, and a shape mismatch are reported, with exit status 1.
// RUN: loom-run --compare %t.a.safetensors %t.a.safetensors | FileCheck %s --check-prefix=SAME
// SAME: loss: shape [] max_abs_err 0.000e+00 max_rel_err 0.000e+00 ok
// SAME-NEXT: all 1 tensors match (rtol 1e-05, atol 1e-08)
// RUN: loom-run %s --entry forward_shifted --inputs %t.in.safetensors --outputs %t.b.safetensors
// RUN: not loom-run --compare %t.a.safetensors %t.b.safetensors | FileCheck %s --check-prefix=DIFF
// DIFF: loss: shape [] max_abs_err 5.000e-01 max_rel_err 1.449e-02 MISMATCH
// DIFF-NEXT: 1 of 1 tensors differ (rtol 1e-05, atol 1e-08)
// RUN: loom-run --compare %t.a.safetensors %t.b.safetensors --atol 0.5 | FileCheck %s --check-prefix=LOOSE
// LOOSE: all 1 tensors match (rtol 1e-05, atol 0.5)
// RUN: not loom-run --compare %t.a.safetensors %t.in.safetensors | FileCheck %s --check-prefix=NAMES
// NAMES: loss: only in {{.*}}.a.safetensors
// NAMES: w: only in {{.*}}.in.safetensors
// NAMES: x: only in {{.*}}.in.safetensors
// NAMES: 3 of 3 tensors differ
// RUN: loom-run %s --entry inputs_wide --outputs %t.wide.safetensors
// RUN: not loom-run --compare %t.in.safetensors %t.wide.safetensors | FileCheck %s --check-prefix=SHAPES
// SHAPES: w: shape [3, 2] in {{.*}} but [3, 3] in {{.*}}
// RUN: not loom-run --compare %t.a.safetensors 2>&1 | FileCheck %s --check-prefix=ONE
// ONE: loom-run: error: --compare expects two tensor files, got 1

func.func @inputs() -> (tensor<2x3xf32> {loom.name = "x"}, tensor<3x2xf32> {loom.name = "w"}) {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %w = arith.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  return %x, %w : tensor<2x3xf32>, tensor<3x2xf32>
}

func.func @inputs_wide() -> (tensor<2x3xf32> {loom.name = "x"}, tensor<3x3xf32> {loom.name = "w"}) {
  %x = arith.constant dense<1.0> : tensor<2x3xf32>
  %w = arith.constant dense<1.0> : tensor<3x3xf32>
  return %x, %w : tensor<2x3xf32>, tensor<3x3xf32>
}

func.func @forward(%x: tensor<2x3xf32> {loom.name = "x"},
                   %w: tensor<3x2xf32> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %b: tensor<2xf32> {loom.param = #loom.param<"fc.bias", init = ones, decay = false>})
    -> tensor<f32> {
  %y = loom.matmul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %z = loom.add %y, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %l = loom.reduce_sum %z {axes = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

func.func @forward_shifted(%x: tensor<2x3xf32> {loom.name = "x"},
                           %w: tensor<3x2xf32> {loom.param = #loom.param<"w", init = zeros, decay = true>})
    -> tensor<f32> {
  %y = loom.matmul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %l = loom.reduce_sum %y {axes = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<f32>
  %c = arith.constant dense<4.5> : tensor<f32>
  %s = loom.add %l, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}

func.func @named(%x: tensor<2x3xf32> {loom.name = "x"}, %w: tensor<3x2xf32> {loom.name = "w"})
    -> (tensor<2x3xf32> {loom.name = "scaled"}, tensor<2xi32>, tensor<2x3xi1>) {
  %s = loom.scale %x {factor = 2.0 : f64} : tensor<2x3xf32>
  %i = arith.constant dense<[3, 7]> : tensor<2xi32>
  %c = arith.constant dense<[[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]]> : tensor<2x3xf32>
  %d = loom.sub %x, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = loom.cast %d : tensor<2x3xf32> to tensor<2x3xi1>
  return %s, %i, %b : tensor<2x3xf32>, tensor<2xi32>, tensor<2x3xi1>
}

// RUN: loom-opt %s -loom-verify-import=entry=loss | FileCheck %s
// RUN: not loom-opt %s -loom-verify-import 2>&1 | FileCheck %s --check-prefix=DEFAULT

// The entry function is an option: a module whose loss function is named
// @loss passes when asked for @loss and fails under the default name.
// CHECK-LABEL: func.func @loss
// DEFAULT: error: expected a `func.func @forward` computing the loss, found none
func.func @loss(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = loom.reduce_sum %x {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

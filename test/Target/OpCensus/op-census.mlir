// RUN: loom-translate --op-census %s | FileCheck %s
// RUN: not loom-translate --op-census %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// Functions are listed in module order with their op counts, sorted by name.
// CHECK:      "functions": [
// CHECK-NEXT:   {
// CHECK-NEXT:     "name": "forward",
// CHECK-NEXT:     "arguments": 3,
// CHECK-NEXT:     "results": 1,
// CHECK-NEXT:     "total": 5,
// CHECK-NEXT:     "ops": {
// CHECK-NEXT:       "func.return": 1,
// CHECK-NEXT:       "loom.add": 2,
// CHECK-NEXT:       "loom.matmul": 1,
// CHECK-NEXT:       "loom.reduce_sum": 1
// CHECK-NEXT:     }
// CHECK-NEXT:   },
// CHECK-NEXT:   {
// CHECK-NEXT:     "name": "helper",
// CHECK:          "total": 1,
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<f32> {
  %0 = loom.matmul %x, %w {transpose_rhs} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %1 = loom.add %0, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = loom.add %1, %1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = loom.reduce_sum %2 {axes = array<i64: 0, 1>} : (tensor<4x16xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}
func.func @helper() {
  return
}

// A missing input is a clear error, not a crash.
// MISSING: does-not-exist.mlir

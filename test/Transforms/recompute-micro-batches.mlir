// RUN: loom-opt %s -loom-autodiff='optimizer=none' -loom-slice-micro-batches='micro-batches=2' -loom-recompute 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: loom-opt %s -loom-autodiff='optimizer=none' -loom-slice-micro-batches='micro-batches=2' -loom-recompute 2>/dev/null | FileCheck %s

// With two micro-batches each forward clone is its own layer instance: each
// is recomputed before its own micro-batch's backward, from its own slice.
// REMARK: remark: recomputing layer 'h.0' of micro-batch 0 before its backward
// REMARK: remark: recomputing layer 'h.0' of micro-batch 1 before its backward
// CHECK-LABEL: func.func @train_step
// The clones count as their micro-batch's backward (`loom.backward`): a
// pipeline schedule runs them with it.
// CHECK: %[[S0:.*]] = loom.slice
// CHECK: %[[S1:.*]] = loom.slice
// CHECK: loom.matmul %[[S0]], %{{.*}} {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64, loom.recompute}
// CHECK: loom.matmul %[[S0]], %{{.*}} {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64, transpose_lhs}
// CHECK-NOT: loom.recompute
// CHECK: loom.matmul %[[S1]], %{{.*}} {loom.fwd = 0 : i64, loom.micro_batch = 1 : i64}
// CHECK: loom.matmul %[[S1]], %{{.*}} {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64, loom.recompute}
// CHECK: loom.matmul %[[S1]], %{{.*}} {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64, transpose_lhs}
func.func @forward(%w0: tensor<4x4xf64> {loom.param = #loom.param<"h.0.w", init = zeros, decay = true>},
                   %x: tensor<2x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %a0 = loom.matmul %x, %w0 : (tensor<2x4xf64>, tensor<4x4xf64>) -> tensor<2x4xf64>
  %t0 = loom.tanh %a0 : tensor<2x4xf64>
  %l = loom.reduce_sum %t0 {axes = array<i64: 0, 1>} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

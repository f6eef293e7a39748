// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' -loom-slice-micro-batches='micro-batches=2' -loom-verify-train-step 2>/dev/null | FileCheck %s

// With micro-batches a mean cross-entropy is normalized by the labelled
// positions of the whole batch: every micro-batch's labels are counted up
// front, each micro-batch sums its losses (`sum`), its backward is seeded
// with 1 / count, and the loss is the sum times 1 / count — the full-batch
// step whatever labels are ignored.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[L0:.*]] = loom.slice %arg4 {{.*}}loom.micro_batch = 0 : i64
// CHECK: %[[L1:.*]] = loom.slice %arg4 {{.*}}loom.micro_batch = 1 : i64
// CHECK: %[[C0:.*]] = loom.label_count %[[L0]]
// CHECK: %[[C1:.*]] = loom.label_count %[[L1]]
// CHECK: %[[C:.*]] = loom.add %[[C0]], %[[C1]]
// CHECK: %[[INV:.*]] = loom.div %{{.*}}, %[[C]]
// CHECK: %[[S0:.*]] = loom.cross_entropy %{{.*}}, %[[L0]] {{{.*}}loom.micro_batch = 0 : i64, sum}
// CHECK: loom.cross_entropy_grad %{{.*}}, %[[L0]], %[[INV]] {{{.*}}loom.backward{{.*}}sum}
// CHECK: %[[S1:.*]] = loom.cross_entropy %{{.*}}, %[[L1]] {{{.*}}loom.micro_batch = 1 : i64, sum}
// CHECK: loom.cross_entropy_grad %{{.*}}, %[[L1]], %[[INV]] {{{.*}}loom.backward{{.*}}sum}
// CHECK: %[[S:.*]] = loom.add %[[S0]], %[[S1]]
// CHECK: %[[LOSS:.*]] = loom.mul %[[S]], %[[INV]]
// CHECK: return %[[LOSS]]
func.func @forward(%w: tensor<4x5xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %x: tensor<4x4xf64> {loom.name = "x"},
                   %labels: tensor<4xi64> {loom.input = #loom.input<labels>}) -> tensor<f64> {
  %h = loom.matmul %x, %w : (tensor<4x4xf64>, tensor<4x5xf64>) -> tensor<4x5xf64>
  %l = loom.cross_entropy %h, %labels : (tensor<4x5xf64>, tensor<4xi64>) -> tensor<f64>
  return %l : tensor<f64>
}

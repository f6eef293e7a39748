// RUN: loom-opt %s -loom-autodiff-pipeline="precision=fp16-mixed micro-batches=2" -loom-verify-train-step 2>/dev/null | FileCheck %s

// A loss-scaled step split into micro-batches (docs/MixedPrecision.md,
// "Micro-batches and pipelines"): both backwards are seeded with the scale
// times the whole batch's inverse label count, the f32 parts accumulate
// scaled, and the unscale, the one non-finite count, the selects and the
// scale update follow the accumulation once, outside any micro-batch.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[^:]*]]: tensor<16x8xf32> {loom.param
// CHECK-SAME: %[[S:[^:]*]]: tensor<f32> {loom.initial_value = 6.553600e+04 : f64, loom.name = "loss_scale"}
// CHECK-SAME: %[[TR:[^:]*]]: tensor<i64> {loom.name = "loss_scale.growth_tracker"}
// CHECK-SAME: %[[INJ:[^:]*]]: tensor<f32> {loom.name = "inject_nonfinite"}
// CHECK: %[[INVC:.*]] = loom.div %{{.*}}, %{{.*}} {loom.fwd = 4 : i64}
// CHECK: %[[SEED:.*]] = loom.mul %[[S]], %[[INVC]] {loom.fwd = 4 : i64}
// CHECK: loom.cross_entropy_grad %{{.*}}, %{{.*}}, %[[SEED]] {{{.*}}loom.micro_batch = 0 : i64, sum}
// CHECK: %[[P0:.*]] = loom.cast %{{.*}} {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64} : tensor<16x8xf16> to tensor<16x8xf32>
// CHECK: loom.cross_entropy_grad %{{.*}}, %{{.*}}, %[[SEED]] {{{.*}}loom.micro_batch = 1 : i64, sum}
// CHECK: %[[P1:.*]] = loom.cast %{{.*}} {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64} : tensor<16x8xf16> to tensor<16x8xf32>
// CHECK: %[[ACC:.*]] = loom.add %[[P0]], %[[P1]] {{.*}}loom.micro_batch = 1 : i64}
// CHECK-NOT: loom.micro_batch
// CHECK: %[[INV:.*]] = loom.div %{{.*}}, %[[S]]
// CHECK: %[[INV2:.*]] = loom.add %[[INV]], %[[INJ]]
// CHECK: %[[G:.*]] = loom.mul %[[ACC]], %[[INV2]]
// CHECK: %[[N:.*]] = loom.nonfinite_count %[[G]]
// CHECK-NOT: loom.nonfinite_count
// CHECK: loom.adamw_update %[[T]], %[[G]],
// CHECK: loom.select %[[N]], %[[T]],
// CHECK: loom.update_loss_scale %[[S]], %[[TR]], %[[N]]
func.func @forward(%table: tensor<16x8xf32> {loom.param = #loom.param<"table", init = zeros, decay = true>},
                   %ids: tensor<2x4xi64> {loom.input = #loom.input<input_ids>},
                   %labels: tensor<2x4xi64> {loom.input = #loom.input<labels>}) -> tensor<f32> {
  %x = loom.embedding %table, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %logits = loom.matmul %x, %table {transpose_rhs} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<2x4x16xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

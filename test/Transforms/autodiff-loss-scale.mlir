// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=fp16-mixed -loom-autodiff=loss-scale=dynamic -loom-verify-train-step 2>/dev/null | FileCheck %s
// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=fp16-mixed -loom-autodiff=loss-scale=1024 -loom-verify-train-step 2>/dev/null | FileCheck %s --check-prefix=FIXED
// RUN: loom-opt %s -split-input-file -loom-autodiff-pipeline=precision=fp16-mixed 2>/dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: loom-opt %s -split-input-file -loom-autodiff-pipeline=precision=bf16-mixed 2>/dev/null | FileCheck %s --check-prefix=BF16

// GradScaler in the step: the backward is seeded with the `loss_scale`
// argument (it starts at 2^16, `loom.initial_value`), each f32 gradient is
// multiplied by 1 / scale (plus the test hook's input, 0 unless the trainer
// injects inf) before the optimizer, its non-finite elements are counted
// and summed, every updated parameter, AdamW state and the step counter are
// kept as they were when that count is not zero, and the scale and its
// growth tracker are updated and returned before `step`, with the count as
// `found_inf`.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[^:]*]]: tensor<16x8xf32> {loom.param
// CHECK-SAME: %[[G:[^:]*]]: tensor<8xf32> {loom.param
// CHECK-SAME: %[[S:[^:]*]]: tensor<f32> {loom.initial_value = 6.553600e+04 : f64, loom.name = "loss_scale"}
// CHECK-SAME: %[[TR:[^:]*]]: tensor<i64> {loom.name = "loss_scale.growth_tracker"}
// CHECK-SAME: %[[INJ:[^:]*]]: tensor<f32> {loom.name = "inject_nonfinite"}
// CHECK-SAME: %[[STEP:[^:]*]]: tensor<i64> {loom.name = "step"}
// CHECK-SAME: -> ({{.*}}tensor<f32> {loom.name = "loss_scale"}, tensor<i64> {loom.name = "loss_scale.growth_tracker"}, tensor<f32> {loom.name = "found_inf"}, tensor<i64> {loom.name = "step"})
// CHECK: loom.cross_entropy_grad %{{.*}}, %{{.*}}, %[[S]]
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[INV:.*]] = loom.div %[[ONE]], %[[S]]
// CHECK: %[[INV2:.*]] = loom.add %[[INV]], %[[INJ]]
// CHECK: %[[DT:.*]] = loom.mul %{{.*}}, %[[INV2]] {{.*}} : (tensor<16x8xf32>, tensor<f32>) -> tensor<16x8xf32>
// CHECK: %[[NT:.*]] = loom.nonfinite_count %[[DT]]
// CHECK: %[[DG:.*]] = loom.mul %{{.*}}, %[[INV2]] {{.*}} : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK: %[[NG:.*]] = loom.nonfinite_count %[[DG]]
// CHECK: %[[N:.*]] = loom.add %[[NT]], %[[NG]]
// CHECK: %[[UT:.*]], %[[MT:.*]], %[[VT:.*]] = loom.adamw_update %[[T]], %[[DT]],
// CHECK: %[[UG:.*]], %{{.*}}, %{{.*}} = loom.adamw_update %[[G]], %[[DG]],
// CHECK: %[[NEXT:.*]] = loom.add %[[STEP]], %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[PT:.*]] = loom.select %[[N]], %[[T]], %[[UT]]
// CHECK: loom.select %[[N]], %{{.*}}, %[[MT]]
// CHECK: loom.select %[[N]], %{{.*}}, %[[VT]]
// CHECK: %[[PG:.*]] = loom.select %[[N]], %[[G]], %[[UG]]
// CHECK: %[[STEP2:.*]] = loom.select %[[N]], %[[STEP]], %[[NEXT]] {{.*}} : (tensor<f32>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[NS:.*]], %[[NTR:.*]] = loom.update_loss_scale %[[S]], %[[TR]], %[[N]] {backoff_factor = 5.000000e-01 : f64, growth_factor = 2.000000e+00 : f64, growth_interval = 2000 : i64
// CHECK: return %{{.*}}, %[[PT]], %[[PG]], {{.*}}, %[[NS]], %[[NTR]], %[[N]], %[[STEP2]] :

// A fixed scale (`--loss-scale 1024`) starts there and never changes: the
// same update with both factors 1, the non-finite steps still skipped.
// FIXED: {loom.initial_value = 1.024000e+03 : f64, loom.name = "loss_scale"}
// FIXED: loom.select
// FIXED: loom.update_loss_scale {{.*}} {backoff_factor = 1.000000e+00 : f64, growth_factor = 1.000000e+00 : f64, growth_interval = 1 : i64

// fp16-mixed scales dynamically by default in the pipeline; bf16-mixed
// does not scale.
// DEFAULT: loom.update_loss_scale {{.*}} growth_interval = 2000
// BF16-NOT: loss_scale
// BF16-NOT: loom.select
func.func @forward(%table: tensor<16x8xf32> {loom.param = #loom.param<"table", init = zeros, decay = true>},
                   %g: tensor<8xf32> {loom.param = #loom.param<"g", init = ones, decay = false>},
                   %ids: tensor<2x4xi64> {loom.input = #loom.input<input_ids>},
                   %labels: tensor<2x4xi64> {loom.input = #loom.input<labels>}) -> tensor<f32> {
  %x = loom.embedding %table, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %n = loom.rms_norm %x, %g : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %logits = loom.matmul %n, %table {transpose_rhs} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<2x4x16xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

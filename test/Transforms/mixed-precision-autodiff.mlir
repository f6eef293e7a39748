// RUN: loom-opt %s -loom-mixed-precision=precision=bf16-mixed -loom-autodiff -loom-verify-train-step 2>/dev/null | FileCheck %s

// Autodiff after the policy: the backward follows the casts. The loss
// gradient starts in f32 (cross_entropy is f32), is cast to bf16 by the VJP
// of the logits' cast, runs the head's matmuls in bf16, comes back to f32
// through the normalization (rms_norm_grad is f32, as its forward), and
// goes down to bf16 again for the embedding's scatter-add. The tied table's
// two bf16 gradients are summed in bf16 and cast to f32 once, by the VJP of
// the one cast of the table; AdamW then updates the f32 master weight with
// an f32 gradient and f32 states.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[^:]*]]: tensor<16x8xf32> {loom.param = #loom.param<"table"
// CHECK-SAME: %[[G:[^:]*]]: tensor<8xf32> {loom.param = #loom.param<"g"
// CHECK: %[[T16:.*]] = loom.cast %[[T]] {loom.fwd = 0 : i64} : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK: %[[LOGITS:.*]] = loom.cast %{{.*}} : tensor<2x4x16xbf16> to tensor<2x4x16xf32>
// CHECK: %[[DL:.*]] = loom.cross_entropy_grad %[[LOGITS]], {{.*}} -> tensor<2x4x16xf32>
// CHECK: %[[DL16:.*]] = loom.cast %[[DL]] {{.*}} : tensor<2x4x16xf32> to tensor<2x4x16xbf16>
// CHECK: %[[DN:.*]] = loom.matmul %[[DL16]], %[[T16]] {{.*}} -> tensor<2x4x8xbf16>
// CHECK: %[[DT1:.*]] = loom.matmul {{.*}}transpose_lhs{{.*}} -> tensor<16x8xbf16>
// CHECK: %[[DN32:.*]] = loom.cast %[[DN]] {{.*}} : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK: %[[DX:.*]], %[[DG:.*]] = loom.rms_norm_grad %[[DN32]], {{.*}} -> (tensor<2x4x8xf32>, tensor<8xf32>)
// CHECK: %[[DX16:.*]] = loom.cast %[[DX]] {{.*}} : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// CHECK: %[[DT2:.*]] = loom.embedding_grad %[[DX16]], {{.*}} -> tensor<16x8xbf16>
// CHECK: %[[DT:.*]] = loom.add %[[DT1]], %[[DT2]] {{.*}} : (tensor<16x8xbf16>, tensor<16x8xbf16>) -> tensor<16x8xbf16>
// CHECK: %[[DT32:.*]] = loom.cast %[[DT]] {loom.fwd = 0 : i64} : tensor<16x8xbf16> to tensor<16x8xf32>
// CHECK: loom.adamw_update %[[T]], %[[DT32]], {{.*}} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<i64>, tensor<f32>)
// CHECK: loom.adamw_update %[[G]], %[[DG]], {{.*}} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<i64>, tensor<f32>)
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

// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=bf16-mixed -loom-autodiff -loom-widen-param-grads -loom-verify-train-step 2>/dev/null | FileCheck %s
// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=fp16-mixed -loom-autodiff -loom-widen-param-grads -loom-verify-train-step 2>/dev/null | FileCheck %s --check-prefix=F16
// RUN: loom-opt %s -split-input-file -loom-mixed-precision=precision=bf16-mixed -loom-autodiff -loom-widen-param-grads -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: remark: parameter gradients summed in f32: 1; ops rebuilt in f32: 3; low-type operands widened: 3
// REMARK: remark: parameter gradients summed in f32: 3; ops rebuilt in f32: 3; low-type operands widened: 4
// An f32 step has no gradient cast: the pass changes nothing.
// RUN: loom-opt %s -split-input-file -loom-autodiff -o %t.f32.mlir 2>/dev/null
// RUN: loom-opt %t.f32.mlir -split-input-file -loom-widen-param-grads -o %t.f32.widened.mlir
// RUN: cmp %t.f32.mlir %t.f32.widened.mlir
// Without a training step there is nothing to widen, which is an error.
// RUN: not loom-opt %s -split-input-file -loom-widen-param-grads -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSTEP
// NOSTEP: error: loom-widen-param-grads: no function `train_step` with a body (run loom-autodiff first)

// The tied table's gradient has two parts, the head's weight gradient (a
// product over the tokens) and the embedding's scatter-add. Both are
// summed in f32 and added in f32: the product multiplies its bf16 operands
// widened exactly (an f32 GEMM of bf16 values), the scatter-add reads the
// bf16 gradient widened exactly, and no bf16 rounding of either sum (or of
// their sum) is left before AdamW. The norm's gain was f32 throughout and
// is not touched.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[T:[^:]*]]: tensor<16x8xf32> {loom.param = #loom.param<"table"
// CHECK: %[[DL16:.*]] = loom.reshape %{{.*}} : tensor<2x4x16xbf16> to tensor<8x16xbf16>
// CHECK: %[[DL32:.*]] = loom.cast %[[DL16]] {loom.fwd = 5 : i64} : tensor<8x16xbf16> to tensor<8x16xf32>
// CHECK: %[[N32:.*]] = loom.cast %{{.*}} {loom.fwd = 5 : i64} : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK: %[[DT1:.*]] = loom.matmul %[[DL32]], %[[N32]] {{{.*}}transpose_lhs} : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
// CHECK: %[[DX16:.*]] = loom.cast %{{.*}} : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// CHECK: %[[DX32:.*]] = loom.cast %[[DX16]] {{.*}} : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK: %[[DT2:.*]] = loom.embedding_grad %[[DX32]], {{.*}} -> tensor<16x8xf32>
// CHECK: %[[DT:.*]] = loom.add %[[DT1]], %[[DT2]] {{.*}} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
// CHECK-NOT: tensor<16x8xbf16> to tensor<16x8xf32>
// CHECK: loom.adamw_update %[[T]], %[[DT]], {{.*}} : (tensor<16x8xf32>, tensor<16x8xf32>,
// F16-LABEL: func.func @train_step
// F16: loom.cast %{{.*}} : tensor<2x4x16xf16> to tensor<2x4x16xf32>
// F16: loom.matmul {{.*}}transpose_lhs{{.*}} : (tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
// F16: loom.embedding_grad {{.*}} -> tensor<16x8xf32>
// F16-NOT: tensor<16x8xf16> to tensor<16x8xf32>
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

// -----

// A linear layer with a bias: the weight gradient is one f32 product of
// widened bf16 operands, the bias gradient a reduce_sum over batch and
// sequence of the widened gradient; each widening cast sits right before
// the op that reads it.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[DY:.*]] = loom.cast %{{.*}} : tensor<2x4x6xf32> to tensor<2x4x6xbf16>
// CHECK-DAG: %[[DY32:.*]] = loom.cast %[[DY]] {{.*}} : tensor<2x4x6xbf16> to tensor<2x4x6xf32>
// CHECK-DAG: loom.reduce_sum %[[DY32]] {{.*}} : (tensor<2x4x6xf32>) -> tensor<6xf32>
// CHECK-DAG: loom.matmul {{.*}}transpose_lhs} : (tensor<8x6xf32>, tensor<8x8xf32>) -> tensor<6x8xf32>
// CHECK-NOT: xbf16> to tensor<6xf32>
// CHECK-NOT: xbf16> to tensor<6x8xf32>
// CHECK: return
func.func @forward(%table: tensor<16x8xf32> {loom.param = #loom.param<"table", init = zeros, decay = true>},
                   %w: tensor<6x8xf32> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %b: tensor<6xf32> {loom.param = #loom.param<"b", init = zeros, decay = false>},
                   %ids: tensor<2x4xi64> {loom.input = #loom.input<input_ids>},
                   %labels: tensor<2x4xi64> {loom.input = #loom.input<labels>}) -> tensor<f32> {
  %x = loom.embedding %table, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %h = loom.matmul %x, %w {transpose_rhs} : (tensor<2x4x8xf32>, tensor<6x8xf32>) -> tensor<2x4x6xf32>
  %y = loom.add %h, %b : (tensor<2x4x6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
  %loss = loom.cross_entropy %y, %labels : (tensor<2x4x6xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// RUN: loom-opt %s -loom-autodiff='clip-norm=1.0' -loom-verify-train-step 2>/dev/null | FileCheck %s --check-prefix=CLIP
// RUN: loom-opt %s -loom-autodiff-pipeline='micro-batches=2 optimizer=sgd momentum=0.9' 2>/dev/null | FileCheck %s --check-prefix=MICRO
// RUN: loom-opt %s -loom-autodiff 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: loom-opt %s -loom-autodiff-pipeline='micro-batches=2' -dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE-MICRO
// RUN: loom-opt %s -loom-autodiff-pipeline -dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE-ONE

// RUN: loom-opt %s -loom-autodiff='optimizer=sgd' 2>&1 | FileCheck %s --check-prefix=SGD-DEFAULT
// RUN: loom-opt %s -loom-autodiff='optimizer=sgd weight-decay=0.1' 2>/dev/null | FileCheck %s --check-prefix=SGD-WD
// RUN: not loom-opt %s -loom-autodiff='weight-decay=-0.5' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: loom-opt %s -loom-autodiff='grad-norm=true' -loom-verify-train-step 2>/dev/null | FileCheck %s --check-prefix=GNORM

// REMARK: remark: built @train_step from @forward: 2 parameters (1 with weight decay 0.01), optimizer adamw, no clipping

// The phase pipeline splits the step into micro-batches only when the count
// is more than one.
// PIPELINE-MICRO: loom-autodiff{
// PIPELINE-MICRO-NEXT: loom-slice-micro-batches{micro-batches=2},
// PIPELINE-MICRO-NEXT: loom-verify-train-step
// PIPELINE-ONE: loom-autodiff{
// PIPELINE-ONE-NEXT: loom-verify-train-step

// weight-decay left at -1 is the optimizer's torch.optim default: 0 for SGD
// (0.01 for AdamW, checked by CLIP below); a value given applies as given.
// SGD-DEFAULT: remark: built @train_step from @forward: 2 parameters (1 with weight decay 0), optimizer sgd
// SGD-DEFAULT: loom.sgd_update {{.*}}weight_decay = 0.000000e+00 : f64}
// SGD-DEFAULT: loom.sgd_update {{.*}}weight_decay = 0.000000e+00 : f64}
// SGD-WD: loom.sgd_update {{.*}}weight_decay = 1.000000e-01 : f64}
// SGD-WD: loom.sgd_update {{.*}}weight_decay = 0.000000e+00 : f64}
// NEGATIVE: error: loom-autodiff: weight-decay must be finite and >= 0 (or -1, the optimizer's default), got -5.000000e-01

// AdamW state names and order; clipping by the global norm with
// min(coef, 1) written as 1 - relu(1 - coef).
// CLIP-LABEL: func.func @train_step
// CLIP-SAME: {loom.name = "w.exp_avg"}
// CLIP-SAME: {loom.name = "w.exp_avg_sq"}
// CLIP-SAME: {loom.name = "b.exp_avg"}
// CLIP-SAME: {loom.name = "b.exp_avg_sq"}
// CLIP-SAME: %[[STEP:[^:]*]]: tensor<i64> {loom.name = "step"}
// CLIP: %[[SQW:.*]] = loom.mul %[[GW:[0-9]+]], %[[GW]] {loom.fwd = 0 : i64} : (tensor<4x3xf64>
// CLIP: loom.reduce_sum %[[SQW]] {axes = array<i64: 0, 1>
// CLIP: %[[NORM:.*]] = loom.sqrt
// CLIP: %[[DEN:.*]] = loom.add %[[NORM]], %{{.*}}
// CLIP: %[[COEF:.*]] = loom.div %{{.*}}, %[[DEN]]
// CLIP: %[[EXC:.*]] = loom.sub %{{.*}}, %[[COEF]]
// CLIP: %[[R:.*]] = loom.relu %[[EXC]]
// CLIP: %[[C:.*]] = loom.sub %{{.*}}, %[[R]]
// CLIP: %[[CW:.*]] = loom.mul %[[GW]], %[[C]]
// CLIP: loom.adamw_update %{{.*}}, %[[CW]], %{{.*}}, %{{.*}}, %[[STEP]] lr_scale(%{{.*}}) {{{.*}}weight_decay = 1.000000e-02 : f64}
// CLIP: loom.adamw_update {{.*}}weight_decay = 0.000000e+00 : f64}
// CLIP: loom.add %[[STEP]], %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i64>

// grad-norm returns the same global norm as `grad_norm` and scales no
// gradient: the updates take the raw gradients.
// GNORM-LABEL: func.func @train_step
// GNORM-SAME: {loom.name = "grad_norm"}
// GNORM: %[[SQW:.*]] = loom.mul %[[GW:[0-9]+]], %[[GW]] {loom.fwd = 0 : i64} : (tensor<4x3xf64>
// GNORM: loom.reduce_sum %[[SQW]] {axes = array<i64: 0, 1>
// GNORM: %[[NORM:.*]] = loom.sqrt
// GNORM-NOT: loom.relu
// GNORM: loom.adamw_update %{{.*}}, %[[GW]], %{{.*}}, %{{.*}}, %{{.*}} lr_scale(
// GNORM-NOT: loom.relu
// GNORM: return {{.*}}%[[NORM]], %{{.*}} :

// Micro-batches (the phase pipeline's loom-slice-micro-batches): the batch
// is sliced along dim 0 (every slice up front),
// the forward runs per slice, the gradients add up and the losses average
// (the loss is no mean cross-entropy). Ops carry their micro-batch and, in
// a backward, `loom.backward`.
// MICRO-LABEL: func.func @train_step
// MICRO-SAME: {loom.name = "w.momentum_buffer"}
// MICRO: loom.slice %{{.*}} {limits = array<i64: 2, 4>, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64, starts = array<i64: 0, 0>
// MICRO: loom.slice %{{.*}} {limits = array<i64: 4, 4>, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64, starts = array<i64: 2, 0>
// MICRO: loom.matmul {{.*}}loom.micro_batch = 0 : i64} {{.*}} -> tensor<2x3xf64>
// MICRO: %[[G1:.*]] = loom.matmul {{.*}}{loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64, transpose_lhs}
// MICRO: %[[G2:.*]] = loom.matmul {{.*}}{loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64, transpose_lhs}
// MICRO: %[[G:.*]] = loom.add %[[G1]], %[[G2]]
// MICRO: %[[L:.*]] = loom.add
// MICRO: %[[LOSS:.*]] = loom.scale %[[L]] {factor = 5.000000e-01 : f64
// MICRO: loom.sgd_update %{{.*}}, %[[G]], %{{.*}} lr_scale(%{{.*}}) {{{.*}}momentum = 9.000000e-01
// MICRO: return %[[LOSS]]
func.func @forward(%w: tensor<4x3xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %b: tensor<3xf64> {loom.param = #loom.param<"b", init = zeros, decay = false>},
                   %x: tensor<4x4xf64> {loom.name = "x"}) -> tensor<f64> {
  %h = loom.matmul %x, %w : (tensor<4x4xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
  %y = loom.add %h, %b : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4x3xf64>
  %t = loom.tanh %y : tensor<4x3xf64>
  %l = loom.reduce_mean %t {axes = array<i64: 0, 1>} : (tensor<4x3xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// RUN: loom-opt %s -loom-autodiff='optimizer=sgd momentum=0.9 clip-norm=1' -loom-slice-micro-batches='micro-batches=2' -loom-verify-train-step 2>/dev/null | FileCheck %s
// RUN: loom-opt %s -loom-autodiff='optimizer=sgd momentum=0.9 clip-norm=1' -loom-slice-micro-batches='micro-batches=2' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: loom-opt %s -loom-autodiff='optimizer=none' -loom-slice-micro-batches='micro-batches=2' 2>/dev/null | FileCheck %s --check-prefix=NONE
// RUN: loom-opt %s -loom-autodiff -o %t.one.mlir 2>/dev/null
// RUN: loom-opt %s -loom-autodiff -loom-slice-micro-batches='micro-batches=1' -o %t.same.mlir 2>/dev/null
// RUN: cmp %t.one.mlir %t.same.mlir
// RUN: loom-opt %s -loom-autodiff -loom-slice-micro-batches='micro-batches=2' -loom-slice-micro-batches='micro-batches=2' -o %t.twice.mlir 2>/dev/null
// RUN: loom-opt %s -loom-autodiff -loom-slice-micro-batches='micro-batches=2' -o %t.once.mlir 2>/dev/null
// RUN: cmp %t.once.mlir %t.twice.mlir

// A tied embedding (read by the embedding and the head), a matmul and a
// mean, split into two micro-batches after autodiff built the step for one:
// the input ids are sliced up front; per micro-batch the forward is cloned
// onto its slice with micro-batch types and the backward is built again by
// reverse mode, seeded with 1/2 (its mean's scale and zeros now have the
// micro-batch's shape: a retyped copy of the one-micro-batch backward would
// keep 1/32 and 4x8); each parameter part (wte: the embedding's, id 0, and
// the head's, id 3) accumulates across the micro-batches in the second
// one's backward and the parts are summed once, after the loss average, by
// the tail loom-autodiff built (clipping, updates, step + 1), unchanged but
// for the gradients it reads. The count 1 leaves the step as it is, and so
// does the count the step is split into already.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[WTE:[^:]*]]: tensor<8x4xf64> {loom.param = #loom.param<"wte"
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x4xf64> {loom.param = #loom.param<"w"
// CHECK-SAME: %[[STEP:[^:]*]]: tensor<i64> {loom.name = "step"}, %[[IDS:[^:]*]]: tensor<4xi64>
// CHECK: %[[S0:.*]] = loom.slice %[[IDS]] {limits = array<i64: 2>, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64, starts = array<i64: 0>
// CHECK: %[[S1:.*]] = loom.slice %[[IDS]] {limits = array<i64: 4>, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64, starts = array<i64: 2>
// CHECK: %[[E0:.*]] = loom.embedding %[[WTE]], %[[S0]] {loom.fwd = 0 : i64, loom.micro_batch = 0 : i64} : (tensor<8x4xf64>, tensor<2xi64>) -> tensor<2x4xf64>
// CHECK: %[[L0:.*]] = loom.reduce_mean {{.*}}loom.micro_batch = 0 : i64} : (tensor<2x8xf64>) -> tensor<f64>
// CHECK-NEXT: %[[SEED0:.*]] = arith.constant dense<5.000000e-01> : tensor<f64>
// CHECK-NEXT: loom.scale %[[SEED0]] {factor = 6.250000e-02 : f64, loom.backward, loom.fwd = 4 : i64, loom.micro_batch = 0 : i64}
// CHECK: arith.constant {loom.fwd = 4 : i64} dense<0.000000e+00> : tensor<2x8xf64>
// CHECK: %[[HEAD0:.*]] = loom.matmul {{.*}}{loom.backward, loom.fwd = 3 : i64, loom.micro_batch = 0 : i64, transpose_lhs} : {{.*}} -> tensor<8x4xf64>
// CHECK: %[[GW0:.*]] = loom.matmul %[[E0]], {{.*}}{loom.backward, loom.fwd = 1 : i64, loom.micro_batch = 0 : i64, transpose_lhs}
// CHECK: %[[EMB0:.*]] = loom.embedding_grad {{.*}}, %[[S0]] {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 0 : i64
// CHECK: loom.embedding %[[WTE]], %[[S1]] {loom.fwd = 0 : i64, loom.micro_batch = 1 : i64}
// CHECK: %[[L1:.*]] = loom.reduce_mean {{.*}}loom.micro_batch = 1 : i64}
// CHECK: %[[HEAD1:.*]] = loom.matmul {{.*}}{loom.backward, loom.fwd = 3 : i64, loom.micro_batch = 1 : i64, transpose_lhs}
// CHECK-NEXT: %[[HEAD:.*]] = loom.add %[[HEAD0]], %[[HEAD1]] {loom.backward, loom.fwd = 3 : i64, loom.micro_batch = 1 : i64}
// CHECK: %[[GW1:.*]] = loom.matmul {{.*}}{loom.backward, loom.fwd = 1 : i64, loom.micro_batch = 1 : i64, transpose_lhs}
// CHECK-NEXT: %[[GW:.*]] = loom.add %[[GW0]], %[[GW1]] {loom.backward, loom.fwd = 1 : i64, loom.micro_batch = 1 : i64}
// CHECK-NEXT: %[[EMB1:.*]] = loom.embedding_grad {{.*}}loom.micro_batch = 1 : i64
// CHECK-NEXT: %[[EMB:.*]] = loom.add %[[EMB0]], %[[EMB1]] {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64}
// CHECK-NEXT: %[[LSUM:.*]] = loom.add %[[L0]], %[[L1]] {loom.fwd = 4 : i64}
// CHECK-NEXT: %[[LOSS:.*]] = loom.scale %[[LSUM]] {factor = 5.000000e-01 : f64, loom.fwd = 4 : i64}
// CHECK-NEXT: %[[GWTE:.*]] = loom.add %[[EMB]], %[[HEAD]] {loom.fwd = 0 : i64}
// CHECK-NEXT: loom.mul %[[GWTE]], %[[GWTE]] {loom.fwd = 0 : i64}
// CHECK: loom.mul %[[GW]], %[[GW]] {loom.fwd = 1 : i64}
// CHECK: loom.sqrt
// CHECK: %[[EXCESS:.*]] = loom.relu
// CHECK-NEXT: %[[CLIP:.*]] = loom.sub %{{.*}}, %[[EXCESS]] {loom.fwd = 4 : i64}
// CHECK-NEXT: %[[CWTE:.*]] = loom.mul %[[GWTE]], %[[CLIP]] {loom.fwd = 0 : i64}
// CHECK-NEXT: %[[CW:.*]] = loom.mul %[[GW]], %[[CLIP]] {loom.fwd = 1 : i64}
// CHECK-NEXT: loom.sgd_update %[[WTE]], %[[CWTE]], %{{.*}} {loom.fwd = 0 : i64, lr = 1.000000e-03 : f64, momentum = 9.000000e-01
// CHECK-NEXT: loom.sgd_update %[[W]], %[[CW]], %{{.*}} {loom.fwd = 1 : i64
// CHECK-NEXT: %[[ONE:.*]] = arith.constant dense<1> : tensor<i64>
// CHECK-NEXT: %[[NEXT:.*]] = loom.add %[[STEP]], %[[ONE]] {loom.fwd = 4 : i64}
// CHECK-NEXT: return %[[LOSS]], {{.*}}, %[[NEXT]] :
// REMARK: remark: built @train_step from @forward: 2 parameters (2 with weight decay 0), optimizer sgd, clipped to global norm 1.000000
// REMARK: remark: split @train_step into 2 micro-batches along dim 0 of 1 batch argument(s), the loss averaged over the micro-batches

// optimizer=none returns the accumulated gradients themselves.
// NONE-LABEL: func.func @train_step
// NONE: %[[HEAD:.*]] = loom.add %{{.*}}, %{{.*}} {loom.backward, loom.fwd = 3 : i64, loom.micro_batch = 1 : i64}
// NONE: %[[GW:.*]] = loom.add %{{.*}}, %{{.*}} {loom.backward, loom.fwd = 1 : i64, loom.micro_batch = 1 : i64}
// NONE: %[[EMB:.*]] = loom.add %{{.*}}, %{{.*}} {loom.backward, loom.fwd = 0 : i64, loom.micro_batch = 1 : i64}
// NONE: %[[LOSS:.*]] = loom.scale
// NONE-NEXT: %[[GWTE:.*]] = loom.add %[[EMB]], %[[HEAD]] {loom.fwd = 0 : i64}
// NONE: return %[[LOSS]], %[[GWTE]], %[[GW]], %{{.*}} :
func.func @forward(%wte: tensor<8x4xf64> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
                   %w: tensor<4x4xf64> {loom.param = #loom.param<"w", init = zeros, decay = true>},
                   %ids: tensor<4xi64> {loom.input = #loom.input<input_ids>}) -> tensor<f64> {
  %e = loom.embedding %wte, %ids : (tensor<8x4xf64>, tensor<4xi64>) -> tensor<4x4xf64>
  %h = loom.matmul %e, %w : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  %t = loom.tanh %h : tensor<4x4xf64>
  %logits = loom.matmul %t, %wte {transpose_rhs} : (tensor<4x4xf64>, tensor<8x4xf64>) -> tensor<4x8xf64>
  %l = loom.reduce_mean %logits {axes = array<i64: 0, 1>} : (tensor<4x8xf64>) -> tensor<f64>
  return %l : tensor<f64>
}

// RUN: loom-opt %s -split-input-file -dist-insert-reshards | FileCheck %s

// Data parallel from the inputs: the ids are split on the batch, the
// embedding follows them, the loss (a partial sum over dp) and the gradient
// are made whole, and the loop-carried parameter and its optimizer state
// keep one replicated layout in and out; other functions are erased.

// CHECK-NOT: func.func @forward
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[WTE:.+]]: tensor<16x8xf32> {dist.layout = #dist.layout<@mesh, {{\[\[}}], []]>, loom.param
// CHECK-SAME: %[[BUF:.+]]: tensor<16x8xf32> {dist.layout = #dist.layout<@mesh, {{\[\[}}], []]>, loom.name = "wte.momentum_buffer"}
// CHECK-SAME: %[[IDS:.+]]: tensor<4x6xi64> {dist.layout = #dist.layout<@mesh, {{\[\[}}"dp"], []]>, loom.input
// CHECK-SAME: -> (tensor<f32> {dist.layout = #dist.layout<@mesh, []>, loom.name = "loss"}, tensor<16x8xf32> {dist.layout = #dist.layout<@mesh, {{\[\[}}], []]>, loom.name = "wte"}, tensor<16x8xf32> {dist.layout = #dist.layout<@mesh, {{\[\[}}], []]>, loom.name = "wte.momentum_buffer"})
// CHECK: %[[E:.+]] = loom.embedding %[[WTE]], %[[IDS]] {dist.strategy = #dist.strategy<@mesh, {{\[\[}}"dp"], [], [], []]>, loom.fwd = 0 : i64}
// CHECK: %[[S:.+]] = loom.reduce_sum %[[E]] {axes = array<i64: 0, 1, 2>, dist.strategy = #dist.strategy<@mesh, {{\[\[}}"dp"], [], []]>
// CHECK: %[[LOSS:.+]] = dist.reshard %[[S]] from <@mesh, [], partial = ["dp"]> to <@mesh, []> : tensor<f32>
// CHECK: %[[ONE:.+]] = arith.constant
// CHECK: %[[ONES:.+]] = dist.reshard %[[ONE]] from <@mesh, {{\[\[}}], [], []]> to <@mesh, {{\[\[}}"dp"], [], []]>
// CHECK: %[[G:.+]] = loom.embedding_grad %[[ONES]], %[[IDS]] {dist.strategy = #dist.strategy<@mesh, {{\[\[}}"dp"], [], [], []]>
// CHECK: %[[GW:.+]] = dist.reshard %[[G]] from <@mesh, {{\[\[}}], []], partial = ["dp"]> to <@mesh, {{\[\[}}], []]>
// CHECK: %[[NEW:.+]], %[[NEWBUF:.+]] = loom.sgd_update %[[WTE]], %[[GW]], %[[BUF]] {dist.strategy = #dist.strategy<@mesh, {{\[\[}}], []]>
// CHECK: return %[[LOSS]], %[[NEW]], %[[NEWBUF]]
dist.mesh @mesh shape [2] axes ["dp"]
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @train_step(
    %wte: tensor<16x8xf32> {loom.param = #loom.param<"wte", init = zeros, decay = true>},
    %buf: tensor<16x8xf32> {loom.name = "wte.momentum_buffer"},
    %ids: tensor<4x6xi64> {loom.input = #loom.input<input_ids>})
    -> (tensor<f32> {loom.name = "loss"}, tensor<16x8xf32> {loom.name = "wte"},
        tensor<16x8xf32> {loom.name = "wte.momentum_buffer"}) {
  %e = loom.embedding %wte, %ids {loom.fwd = 0 : i64} : (tensor<16x8xf32>, tensor<4x6xi64>) -> tensor<4x6x8xf32>
  %s = loom.reduce_sum %e {axes = array<i64: 0, 1, 2>, loom.fwd = 1 : i64} : (tensor<4x6x8xf32>) -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<4x6x8xf32>
  %g = loom.embedding_grad %one, %ids {vocab_size = 16 : i64, loom.fwd = 0 : i64} : (tensor<4x6x8xf32>, tensor<4x6xi64>) -> tensor<16x8xf32>
  %new:2 = loom.sgd_update %wte, %g, %buf {lr = 0.1, momentum = 0.9, weight_decay = 0.0, loom.fwd = 0 : i64} : (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>)
  return %s, %new#0, %new#1 : tensor<f32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// A Megatron MLP from explicit strategies: the column-parallel linear splits
// its output features over tp, the row-parallel one contracts over them, and
// the one reshard is the row linear's partial sum made whole before the bias.
// The weights take the layouts their users require.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:.+]]: tensor<4x8xf32> {dist.layout = #dist.layout<@m, {{\[\[}}"dp"], []]>}
// CHECK-SAME: %[[W1:.+]]: tensor<16x8xf32> {dist.layout = #dist.layout<@m, {{\[\[}}"tp"], []]>}
// CHECK-SAME: %[[B1:.+]]: tensor<16xf32> {dist.layout = #dist.layout<@m, {{\[\[}}"tp"]]>}
// CHECK-SAME: %[[W2:.+]]: tensor<8x16xf32> {dist.layout = #dist.layout<@m, {{\[\[}}], ["tp"]]>}
// CHECK-SAME: %[[B2:.+]]: tensor<8xf32> {dist.layout = #dist.layout<@m, {{\[\[}}]]>}
// CHECK-SAME: -> (tensor<4x8xf32> {dist.layout = #dist.layout<@m, {{\[\[}}"dp"], []]>})
// CHECK: %[[H:.+]] = loom.matmul %[[X]], %[[W1]]
// CHECK: %[[HB:.+]] = loom.add %[[H]], %[[B1]] {dist.strategy = #dist.strategy<@m, {{\[\[}}"dp"], ["tp"]]>}
// CHECK: %[[R:.+]] = loom.relu %[[HB]] {dist.strategy = #dist.strategy<@m, {{\[\[}}"dp"], ["tp"]]>}
// CHECK: %[[Y:.+]] = loom.matmul %[[R]], %[[W2]]
// CHECK-NEXT: %[[YR:.+]] = dist.reshard %[[Y]] from <@m, {{\[\[}}"dp"], []], partial = ["tp"]> to <@m, {{\[\[}}"dp"], []]>
// CHECK-NEXT: loom.add %[[YR]], %[[B2]] {dist.strategy = #dist.strategy<@m, {{\[\[}}"dp"], []]>}
// CHECK-NOT: dist.reshard
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @train_step(%x: tensor<4x8xf32> {dist.layout = #dist.layout<@m, [["dp"], []]>},
                      %w1: tensor<16x8xf32>, %b1: tensor<16xf32>,
                      %w2: tensor<8x16xf32>, %b2: tensor<8xf32>) -> tensor<4x8xf32> {
  %h = loom.matmul %x, %w1 {transpose_rhs, dist.strategy = #dist.strategy<@m, [["dp"], ["tp"], []]>} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %hb = loom.add %h, %b1 : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = loom.relu %hb : tensor<4x16xf32>
  %y = loom.matmul %r, %w2 {transpose_rhs, dist.strategy = #dist.strategy<@m, [["dp"], [], ["tp"]]>} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %z = loom.add %y, %b2 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// dist.annotate pins a value's layout: its users see the annotated layout,
// the producer's value is resharded to it, and the annotation is gone.

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:.+]]: tensor<4x8xf32> {dist.layout = #dist.layout<@m, {{\[\[}}], []]>}
// CHECK: %[[A:.+]] = dist.reshard %[[X]] from <@m, {{\[\[}}], []]> to <@m, {{\[\[}}], ["tp"]]>
// CHECK: loom.relu %[[A]] {dist.strategy = #dist.strategy<@m, {{\[\[}}], ["tp"]]>}
// CHECK-NOT: dist.annotate
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @train_step(%x: tensor<4x8xf32> {dist.layout = #dist.layout<@m, [[], []]>}) -> tensor<4x8xf32> {
  %a = dist.annotate %x layout <@m, [[], ["tp"]]> : tensor<4x8xf32>
  %r = loom.relu %a : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Partial sums through linear ops: two row-parallel products (each a partial
// sum over tp) are added summand by summand and the sum is transposed the
// same way, so the only reshard is one reduction of the transposed sum,
// before the first op that is not linear (Megatron's single all-reduce of
// dX = dQ Wq + dK Wk + dV Wv).

// CHECK-LABEL: func.func @forward(
// CHECK: %[[A:.+]] = loom.matmul
// CHECK-NOT: dist.reshard
// CHECK: %[[B:.+]] = loom.matmul
// CHECK-NOT: dist.reshard
// CHECK: %[[S:.+]] = loom.add %[[A]], %[[B]] {dist.strategy = #dist.strategy<@m, {{\[\[}}], []], partial = ["tp"]>}
// CHECK-NOT: dist.reshard
// CHECK: %[[T:.+]] = loom.transpose %[[S]] {dist.strategy = #dist.strategy<@m, {{\[\[}}], []], partial = ["tp"]>
// CHECK-NEXT: %[[W:.+]] = dist.reshard %[[T]] from <@m, {{\[\[}}], []], partial = ["tp"]> to <@m, {{\[\[}}], []]>
// CHECK-NEXT: loom.relu %[[W]]
// CHECK-NOT: dist.reshard
dist.mesh @m shape [2] axes ["tp"]
func.func @forward(%x: tensor<4x8xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x8xf32>) -> tensor<6x4xf32> {
  %a = loom.matmul %x, %w1 {transpose_rhs, dist.strategy = #dist.strategy<@m, [[], [], ["tp"]]>} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %b = loom.matmul %x, %w2 {transpose_rhs, dist.strategy = #dist.strategy<@m, [[], [], ["tp"]]>} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %s = loom.add %a, %b : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %t = loom.transpose %s {permutation = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %r = loom.relu %t : tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}

// -----

// A whole addend (a bias) would be counted once per summand, so an add with
// one partial and one whole operand reduces the partial one first and keeps
// no pending sum.

// CHECK-LABEL: func.func @forward(
// CHECK: %[[A:.+]] = loom.matmul
// CHECK-NEXT: %[[W:.+]] = dist.reshard %[[A]] from <@m, {{\[\[}}], []], partial = ["tp"]> to <@m, {{\[\[}}], []]>
// CHECK-NEXT: loom.add %[[W]], %{{.+}} {dist.strategy = #dist.strategy<@m, {{\[\[}}], []]>}
dist.mesh @m shape [2] axes ["tp"]
func.func @forward(%x: tensor<4x8xf32>, %w1: tensor<6x8xf32>, %bias: tensor<6xf32>) -> tensor<4x6xf32> {
  %a = loom.matmul %x, %w1 {transpose_rhs, dist.strategy = #dist.strategy<@m, [[], [], ["tp"]]>} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %s = loom.add %a, %bias : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %s : tensor<4x6xf32>
}

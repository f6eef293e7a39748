// RUN: loom-opt %s -split-input-file -dist-partition-spmd | FileCheck %s

// Data parallel: the batch is split, the weight replicated; the weight
// gradient is a partial sum that the lowered all_reduce completes, and the
// casts around it fold away.
// CHECK-LABEL: func.func @dp_mlp
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x4xf64> {dist.layout = #dist.layout<@mesh, {{\[\[}}"dp"], []]>}, %[[W:[a-z0-9]+]]: tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, {{\[\[}}], []]>}, %[[DY:[a-z0-9]+]]: tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, {{\[\[}}"dp"], []]>})
// CHECK-SAME: -> (tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, {{\[\[}}"dp"], []]>}, tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, {{\[\[}}], []]>})
// CHECK: %[[Y:.+]] = loom.matmul %[[X]], %[[W]] : (tensor<4x4xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>
// CHECK: %[[T:.+]] = loom.tanh %[[Y]] : tensor<4x6xf64>
// CHECK: %[[DW:.+]] = loom.matmul %[[X]], %[[DY]] {transpose_lhs} : (tensor<4x4xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>
// CHECK: %[[G:.+]] = dist.all_reduce sum %[[DW]] on @mesh axes ["dp"] : tensor<4x6xf64>
// CHECK: return %[[T]], %[[G]] : tensor<4x6xf64>, tensor<4x6xf64>
// CHECK-NOT: unrealized_conversion_cast
// CHECK-NOT: dist.strategy
dist.mesh @mesh shape [2] axes ["dp"]
func.func @dp_mlp(%x: tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
                  %w: tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, [[], []]>},
                  %dy: tensor<8x6xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x6xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>},
        tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %y = loom.matmul %x, %w {dist.strategy = #dist.strategy<@mesh, [["dp"], [], []]>} : (tensor<8x4xf64>, tensor<4x6xf64>) -> tensor<8x6xf64>
  %t = loom.tanh %y {dist.strategy = #dist.strategy<@mesh, [["dp"], []]>} : tensor<8x6xf64>
  %dw = loom.matmul %x, %dy {transpose_lhs, dist.strategy = #dist.strategy<@mesh, [[], [], ["dp"]]>} : (tensor<8x4xf64>, tensor<8x6xf64>) -> tensor<4x6xf64>
  %l = builtin.unrealized_conversion_cast %dw : tensor<4x6xf64> to tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, [[], []], partial = ["dp"]>}
  %r = dist.all_reduce sum %l on @mesh axes ["dp"] : tensor<4x6xf64>
  %g = builtin.unrealized_conversion_cast %r : tensor<4x6xf64> to tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}
  return %t, %g : tensor<8x6xf64>, tensor<4x6xf64>
}

// -----

// Megatron tensor parallelism: a column-parallel matmul, a pointwise op on
// the split hidden dim, a row-parallel matmul whose partial output is
// all-reduced; a replicated constant bias stays whole.
// CHECK-LABEL: func.func @megatron_mlp
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x8xf64> {{.*}}, %[[W1:[a-z0-9]+]]: tensor<8x8xf64> {{.*}}, %[[W2:[a-z0-9]+]]: tensor<8x8xf64> {{.*}}) -> (tensor<4x8xf64>
// CHECK: %[[B:.+]] = arith.constant dense<5.000000e-01> : tensor<8xf64>
// CHECK: %[[H:.+]] = loom.matmul %[[X]], %[[W1]] : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
// CHECK: %[[A:.+]] = loom.gelu %[[H]] {{.*}}: tensor<4x8xf64>
// CHECK: %[[P:.+]] = loom.matmul %[[A]], %[[W2]] : (tensor<4x8xf64>, tensor<8x8xf64>) -> tensor<4x8xf64>
// CHECK: %[[S:.+]] = dist.all_reduce sum %[[P]] on @mesh axes ["tp"] : tensor<4x8xf64>
// CHECK: %[[Y:.+]] = loom.add %[[S]], %[[B]] : (tensor<4x8xf64>, tensor<8xf64>) -> tensor<4x8xf64>
// CHECK: return %[[Y]] : tensor<4x8xf64>
dist.mesh @mesh shape [2] axes ["tp"]
func.func @megatron_mlp(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>},
                        %w1: tensor<8x16xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>},
                        %w2: tensor<16x8xf64> {dist.layout = #dist.layout<@mesh, [["tp"], []]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %b = arith.constant dense<0.5> : tensor<8xf64>
  %h = loom.matmul %x, %w1 {dist.strategy = #dist.strategy<@mesh, [[], ["tp"], []]>} : (tensor<4x8xf64>, tensor<8x16xf64>) -> tensor<4x16xf64>
  %a = loom.gelu %h {dist.strategy = #dist.strategy<@mesh, [[], ["tp"]]>} : tensor<4x16xf64>
  %p = loom.matmul %a, %w2 {dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"]]>} : (tensor<4x16xf64>, tensor<16x8xf64>) -> tensor<4x8xf64>
  %l = builtin.unrealized_conversion_cast %p : tensor<4x8xf64> to tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []], partial = ["tp"]>}
  %r = dist.all_reduce sum %l on @mesh axes ["tp"] : tensor<4x8xf64>
  %s = builtin.unrealized_conversion_cast %r : tensor<4x8xf64> to tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}
  %y = loom.add %s, %b {dist.strategy = #dist.strategy<@mesh, [[], []]>} : (tensor<4x8xf64>, tensor<8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// -----

// Attention split over heads with grouped-query heads: reshapes and
// transposes into [B, H, S, D] take their local head counts (4 query heads
// and 2 key/value heads become 2 and 1 per device), and the attention op
// only changes type.
// CHECK-LABEL: func.func @gqa_heads
// CHECK: loom.reshape %{{.+}} : tensor<2x4x8xf64> to tensor<2x4x2x4xf64>
// CHECK: loom.transpose %{{.+}} {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x4x2x4xf64>) -> tensor<2x2x4x4xf64>
// CHECK: loom.reshape %{{.+}} : tensor<2x4x4xf64> to tensor<2x4x1x4xf64>
// CHECK: loom.transpose %{{.+}} : (tensor<2x4x1x4xf64>) -> tensor<2x1x4x4xf64>
// CHECK: %[[O:.+]] = loom.attention %{{.+}}, %{{.+}}, %{{.+}} {causal} : (tensor<2x2x4x4xf64>, tensor<2x1x4x4xf64>, tensor<2x1x4x4xf64>) -> tensor<2x2x4x4xf64>
// CHECK: %[[OT:.+]] = loom.transpose %[[O]] {{.*}} : (tensor<2x2x4x4xf64>) -> tensor<2x4x2x4xf64>
// CHECK: loom.reshape %[[OT]] : tensor<2x4x2x4xf64> to tensor<2x4x8xf64>
dist.mesh @mesh shape [2] axes ["tp"]
func.func @gqa_heads(%q: tensor<2x4x16xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["tp"]]>},
                     %kv: tensor<2x4x8xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["tp"]]>})
    -> (tensor<2x4x16xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["tp"]]>}) {
  %q4 = loom.reshape %q {dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"], []]>} : tensor<2x4x16xf64> to tensor<2x4x4x4xf64>
  %qt = loom.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"], []]>} : (tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
  %k4 = loom.reshape %kv {dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"], []]>} : tensor<2x4x8xf64> to tensor<2x4x2x4xf64>
  %kt = loom.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"], []]>} : (tensor<2x4x2x4xf64>) -> tensor<2x2x4x4xf64>
  %o = loom.attention %qt, %kt, %kt {causal, dist.strategy = #dist.strategy<@mesh, [[], ["tp"], [], [], [], []]>} : (tensor<2x4x4x4xf64>, tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>) -> tensor<2x4x4x4xf64>
  %ot = loom.transpose %o {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@mesh, [[], ["tp"], [], []]>} : (tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
  %y = loom.reshape %ot {dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"], []]>} : tensor<2x4x4x4xf64> to tensor<2x4x16xf64>
  return %y : tensor<2x4x16xf64>
}

// -----

// Self-attention split on its sequence is ring attention: the forward
// becomes dist.ring_attention over the sequence's axes, and the gradient
// dist.ring_attention_grad, reading the forward ring's log-sum-exp.
// CHECK-LABEL: func.func @ring_attention
// CHECK: %[[O:.+]], %[[L:.+]] = dist.ring_attention %[[Q:.+]], %[[K:.+]], %[[K]] on @mesh axes ["cp"] {causal} : (tensor<2x4x4x4xf64>, tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>) -> (tensor<2x4x4x4xf64>, tensor<2x4x4xf64>)
// CHECK-NOT: dist.ring_attention %
// CHECK: dist.ring_attention_grad %[[Q]], %[[K]], %[[K]], %[[O]], %{{.+}}, %[[L]] on @mesh axes ["cp"] {causal}
// CHECK-NOT: loom.attention
dist.mesh @mesh shape [2] axes ["cp"]
func.func @ring_attention(%q: tensor<2x4x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["cp"], []]>},
                          %kv: tensor<2x2x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["cp"], []]>},
                          %do: tensor<2x4x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["cp"], []]>})
    -> (tensor<2x4x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["cp"], []]>},
        tensor<2x2x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["cp"], []]>}) {
  %o = loom.attention %q, %kv, %kv {causal, dist.strategy = #dist.strategy<@mesh, [[], [], [], ["cp"], [], []]>} : (tensor<2x4x8x4xf64>, tensor<2x2x8x4xf64>, tensor<2x2x8x4xf64>) -> tensor<2x4x8x4xf64>
  %dq, %dk, %dv = loom.attention_grad %q, %kv, %kv, %o, %do {causal, dist.strategy = #dist.strategy<@mesh, [[], [], [], ["cp"], [], []]>} : (tensor<2x4x8x4xf64>, tensor<2x2x8x4xf64>, tensor<2x2x8x4xf64>, tensor<2x4x8x4xf64>, tensor<2x4x8x4xf64>) -> (tensor<2x4x8x4xf64>, tensor<2x2x8x4xf64>, tensor<2x2x8x4xf64>)
  return %dq, %dk : tensor<2x4x8x4xf64>, tensor<2x2x8x4xf64>
}

// -----

// A gradient whose `out` does not come from a ring (here an argument) gets
// its log-sum-exp from a forward ring of its own.
// CHECK-LABEL: func.func @ring_grad_alone
// CHECK: %{{.+}}, %[[L:.+]] = dist.ring_attention %{{.+}}, %{{.+}}, %{{.+}} on @mesh axes ["cp"]
// CHECK: dist.ring_attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[L]] on @mesh axes ["cp"]
dist.mesh @mesh shape [2] axes ["cp"]
func.func @ring_grad_alone(%q: tensor<2x4x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["cp"], []]>},
                           %o: tensor<2x4x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["cp"], []]>})
    -> (tensor<2x4x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["cp"], []]>}) {
  %dq, %dk, %dv = loom.attention_grad %q, %q, %q, %o, %o {dist.strategy = #dist.strategy<@mesh, [[], [], [], ["cp"], [], []]>} : (tensor<2x4x8x4xf64>, tensor<2x4x8x4xf64>, tensor<2x4x8x4xf64>, tensor<2x4x8x4xf64>, tensor<2x4x8x4xf64>) -> (tensor<2x4x8x4xf64>, tensor<2x4x8x4xf64>, tensor<2x4x8x4xf64>)
  return %dq : tensor<2x4x8x4xf64>
}

// -----

// reduce_mean over a split dim: the local sum is divided by the global count
// (8), not the local one (4), so the partial results add up to the mean.
// CHECK-LABEL: func.func @mean_split
// CHECK: %[[S:.+]] = loom.reduce_sum %{{.+}} {axes = array<i64: 1>, keepdims} : (tensor<4x4xf64>) -> tensor<4x1xf64>
// CHECK: %[[M:.+]] = loom.scale %[[S]] {factor = 1.250000e-01 : f64} : tensor<4x1xf64>
// CHECK: dist.all_reduce sum %[[M]] on @mesh axes ["tp"] : tensor<4x1xf64>
// CHECK-NOT: loom.reduce_mean
dist.mesh @mesh shape [2] axes ["tp"]
func.func @mean_split(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>})
    -> (tensor<4x1xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %m = loom.reduce_mean %x {axes = array<i64: 1>, keepdims, dist.strategy = #dist.strategy<@mesh, [[], ["tp"]]>} : (tensor<4x8xf64>) -> tensor<4x1xf64>
  %l = builtin.unrealized_conversion_cast %m : tensor<4x1xf64> to tensor<4x1xf64> {dist.layout = #dist.layout<@mesh, [[], []], partial = ["tp"]>}
  %r = dist.all_reduce sum %l on @mesh axes ["tp"] : tensor<4x1xf64>
  %g = builtin.unrealized_conversion_cast %r : tensor<4x1xf64> to tensor<4x1xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}
  return %g : tensor<4x1xf64>
}

// -----

// reduce_mean over an unsplit dim stays a local mean.
// CHECK-LABEL: func.func @mean_whole
// CHECK: loom.reduce_mean %{{.+}} {axes = array<i64: 1>} : (tensor<2x8xf64>) -> tensor<2xf64>
dist.mesh @mesh shape [2] axes ["dp"]
func.func @mean_whole(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<4xf64> {dist.layout = #dist.layout<@mesh, [["dp"]]>}) {
  %m = loom.reduce_mean %x {axes = array<i64: 1>, dist.strategy = #dist.strategy<@mesh, [["dp"], []]>} : (tensor<4x8xf64>) -> tensor<4xf64>
  return %m : tensor<4xf64>
}

// -----

// Dropout under a sequence split carries the layout of its result, from which
// each device derives its block's global offsets for the mask.
// CHECK-LABEL: func.func @dropout_seq
// CHECK: loom.dropout %{{.+}} {dist.layout = #dist.layout<@mesh, {{\[\[}}], ["sp"], []]>, rate = 2.500000e-01 : f64, seed = 5 : i64} : tensor<2x4x3xf64>
dist.mesh @mesh shape [2] axes ["sp"]
func.func @dropout_seq(%x: tensor<2x8x3xf64> {dist.layout = #dist.layout<@mesh, [[], ["sp"], []]>})
    -> (tensor<2x8x3xf64> {dist.layout = #dist.layout<@mesh, [[], ["sp"], []]>}) {
  %y = loom.dropout %x {rate = 0.25, seed = 5, dist.strategy = #dist.strategy<@mesh, [[], ["sp"], []]>} : tensor<2x8x3xf64>
  return %y : tensor<2x8x3xf64>
}

// -----

// rope without positions under a sequence split gets its block's positions:
// the global positions, cut like the sequence with dist.all_slice.
// CHECK-LABEL: func.func @rope_seq
// CHECK: %[[ALL:.+]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
// CHECK: %[[MINE:.+]] = dist.all_slice %[[ALL]] on @mesh axes ["sp"] dim 0 : tensor<8xi64> -> tensor<4xi64>
// CHECK: loom.rope %{{.+}}, %[[MINE]] {theta = 1.000000e+02 : f64} : (tensor<1x2x4x4xf64>, tensor<4xi64>) -> tensor<1x2x4x4xf64>
dist.mesh @mesh shape [2] axes ["sp"]
func.func @rope_seq(%x: tensor<1x2x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["sp"], []]>})
    -> (tensor<1x2x8x4xf64> {dist.layout = #dist.layout<@mesh, [[], [], ["sp"], []]>}) {
  %y = loom.rope %x {theta = 100.0, dist.strategy = #dist.strategy<@mesh, [[], [], ["sp"], []]>} : (tensor<1x2x8x4xf64>) -> tensor<1x2x8x4xf64>
  return %y : tensor<1x2x8x4xf64>
}

// -----

// slice keeps a split dim whole: its limit there becomes the local size.
// CHECK-LABEL: func.func @slice_rows
// CHECK: loom.slice %{{.+}} {limits = array<i64: 4, 6>, starts = array<i64: 0, 2>, strides = array<i64: 1, 1>} : (tensor<4x8xf64>) -> tensor<4x4xf64>
dist.mesh @mesh shape [2] axes ["dp"]
func.func @slice_rows(%x: tensor<8x8xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>})
    -> (tensor<8x4xf64> {dist.layout = #dist.layout<@mesh, [["dp"], []]>}) {
  %y = loom.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 8, 6>, strides = array<i64: 1, 1>, dist.strategy = #dist.strategy<@mesh, [["dp"], [], []]>} : (tensor<8x8xf64>) -> tensor<8x4xf64>
  return %y : tensor<8x4xf64>
}

// -----

// A reshard lowered to an all_gather: the chain's casts fold, the gathered
// value feeds the op that needs it whole.
// CHECK-LABEL: func.func @gather_then_softmax
// CHECK: %[[G:.+]] = dist.all_gather %{{.+}} on @mesh axes ["tp"] dim 1 : tensor<4x4xf64> -> tensor<4x8xf64>
// CHECK: loom.softmax %[[G]] {{.*}}: (tensor<4x8xf64>) -> tensor<4x8xf64>
dist.mesh @mesh shape [2] axes ["tp"]
func.func @gather_then_softmax(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %l = builtin.unrealized_conversion_cast %x : tensor<4x8xf64> to tensor<4x4xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>}
  %a = dist.all_gather %l on @mesh axes ["tp"] dim 1 : tensor<4x4xf64> -> tensor<4x8xf64>
  %g = builtin.unrealized_conversion_cast %a : tensor<4x8xf64> to tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}
  %s = loom.softmax %g {axis = 1 : i64, dist.strategy = #dist.strategy<@mesh, [[], []]>} : (tensor<4x8xf64>) -> tensor<4x8xf64>
  return %s : tensor<4x8xf64>
}

// -----

// A linear op under a partial strategy stays local: two row-parallel
// products (each a partial sum over tp) are added summand by summand, and
// the one all-reduce after the add completes the sum.
// CHECK-LABEL: func.func @partial_add
// CHECK: %[[A:.+]] = loom.matmul %{{.+}}, %{{.+}} : (tensor<4x4xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>
// CHECK-NEXT: %[[B:.+]] = loom.matmul %{{.+}}, %{{.+}} : (tensor<4x4xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>
// CHECK-NEXT: %[[S:.+]] = loom.add %[[A]], %[[B]] : (tensor<4x6xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>
// CHECK-NEXT: %[[R:.+]] = dist.all_reduce sum %[[S]] on @mesh axes ["tp"] : tensor<4x6xf64>
// CHECK-NEXT: return %[[R]]
dist.mesh @mesh shape [2] axes ["tp"]
func.func @partial_add(%x: tensor<4x8xf64> {dist.layout = #dist.layout<@mesh, [[], ["tp"]]>},
                       %w1: tensor<8x6xf64> {dist.layout = #dist.layout<@mesh, [["tp"], []]>},
                       %w2: tensor<8x6xf64> {dist.layout = #dist.layout<@mesh, [["tp"], []]>})
    -> (tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}) {
  %a = loom.matmul %x, %w1 {dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"]]>} : (tensor<4x8xf64>, tensor<8x6xf64>) -> tensor<4x6xf64>
  %b = loom.matmul %x, %w2 {dist.strategy = #dist.strategy<@mesh, [[], [], ["tp"]]>} : (tensor<4x8xf64>, tensor<8x6xf64>) -> tensor<4x6xf64>
  %s = loom.add %a, %b {dist.strategy = #dist.strategy<@mesh, [[], []], partial = ["tp"]>} : (tensor<4x6xf64>, tensor<4x6xf64>) -> tensor<4x6xf64>
  %l = builtin.unrealized_conversion_cast %s : tensor<4x6xf64> to tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, [[], []], partial = ["tp"]>}
  %r = dist.all_reduce sum %l on @mesh axes ["tp"] : tensor<4x6xf64>
  %g = builtin.unrealized_conversion_cast %r : tensor<4x6xf64> to tensor<4x6xf64> {dist.layout = #dist.layout<@mesh, [[], []]>}
  return %g : tensor<4x6xf64>
}

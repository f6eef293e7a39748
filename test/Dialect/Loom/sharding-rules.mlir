// RUN: loom-opt %s -test-print-sharding-rules -o /dev/null | FileCheck %s

// One function per op (and per interesting variant); each rule is also
// checked against the op's shapes by the test pass.

// M and N are parallel; splitting K leaves partial sums.
// CHECK-LABEL: @matmul loom.matmul:
// CHECK-SAME: ([a, c], [c, b]) -> ([a, b]) {a=4, b=16, c=8} reduction={c}{{$}}
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Transposes move K and N; a batch dim of size 1 that broadcasts has no
// factor, and a missing batch dim is simply absent.
// CHECK-LABEL: @matmul_batched_transposed loom.matmul:
// CHECK-SAME: ([a, 1, e, c], [b, d, e]) -> ([a, b, c, d]) {a=2, b=3, c=4, d=16, e=8} reduction={e}{{$}}
func.func @matmul_batched_transposed(%a: tensor<2x1x8x4xf32>, %b: tensor<3x16x8xf32>) -> tensor<2x3x4x16xf32> {
  %0 = loom.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<2x1x8x4xf32>, tensor<3x16x8xf32>) -> tensor<2x3x4x16xf32>
  return %0 : tensor<2x3x4x16xf32>
}

// A weight shared by every batch element: the batch factor is absent from it.
// CHECK-LABEL: @matmul_shared_weight loom.matmul:
// CHECK-SAME: ([a, b, d], [c, d]) -> ([a, b, c]) {a=8, b=128, c=3072, d=768} reduction={d}{{$}}
func.func @matmul_shared_weight(%x: tensor<8x128x768xf32>, %w: tensor<3072x768xf32>) -> tensor<8x128x3072xf32> {
  %0 = loom.matmul %x, %w {transpose_rhs} : (tensor<8x128x768xf32>, tensor<3072x768xf32>) -> tensor<8x128x3072xf32>
  return %0 : tensor<8x128x3072xf32>
}

// Pointwise: a bias broadcasts along the leading dims, which it lacks. add,
// like sub, neg, scale, the data-movement ops and sums, is linear in all its
// operands jointly (it may keep partial sums); mul, exp and the others are not.
// CHECK-LABEL: @add loom.add:
// CHECK-SAME: ([a, b, c], [c]) -> ([a, b, c]) {a=8, b=128, c=768} linear{{$}}
func.func @add(%x: tensor<8x128x768xf32>, %b: tensor<768xf32>) -> tensor<8x128x768xf32> {
  %0 = loom.add %x, %b : (tensor<8x128x768xf32>, tensor<768xf32>) -> tensor<8x128x768xf32>
  return %0 : tensor<8x128x768xf32>
}

// Size-1 dims that stretch get no factor in the operand that stretches.
// CHECK-LABEL: @add_outer loom.add:
// CHECK-SAME: ([a, 1], [1, b]) -> ([a, b]) {a=4, b=5} linear{{$}}
func.func @add_outer(%i: tensor<4x1xi64>, %j: tensor<1x5xi64>) -> tensor<4x5xi64> {
  %0 = loom.add %i, %j : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
  return %0 : tensor<4x5xi64>
}

// Reduced dims are reduction factors present only in the input.
// CHECK-LABEL: @reduce_sum loom.reduce_sum:
// CHECK-SAME: ([a, b, c]) -> ([b]) {a=8, b=128, c=768} reduction={a, c} linear{{$}}
func.func @reduce_sum(%x: tensor<8x128x768xf32>) -> tensor<128xf32> {
  %0 = loom.reduce_sum %x {axes = array<i64: 0, 2>} : (tensor<8x128x768xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// With keepdims the reduced dims stay as size 1, without a factor.
// CHECK-LABEL: @reduce_sum_keepdims loom.reduce_sum:
// CHECK-SAME: ([a, b]) -> ([a, 1]) {a=8, b=128} reduction={b} linear{{$}}
func.func @reduce_sum_keepdims(%x: tensor<8x128xf32>) -> tensor<8x1xf32> {
  %0 = loom.reduce_sum %x {axes = array<i64: 1>, keepdims} : (tensor<8x128xf32>) -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// ===== Shape ops =====

// reshape, split: the hidden dim becomes (heads, head_dim); splitting heads
// over an axis splits the hidden dim in blocks of 64 alike.
// CHECK-LABEL: @reshape_split_heads loom.reshape:
// CHECK-SAME: ([a, b, (c, d)]) -> ([a, b, c, d]) {a=2, b=128, c=12, d=64} linear{{$}}
func.func @reshape_split_heads(%x: tensor<2x128x768xf32>) -> tensor<2x128x12x64xf32> {
  %0 = loom.reshape %x : tensor<2x128x768xf32> to tensor<2x128x12x64xf32>
  return %0 : tensor<2x128x12x64xf32>
}

// reshape, merge: the mirror image.
// CHECK-LABEL: @reshape_merge_heads loom.reshape:
// CHECK-SAME: ([a, b, c, d]) -> ([a, b, (c, d)]) {a=2, b=128, c=12, d=64} linear{{$}}
func.func @reshape_merge_heads(%x: tensor<2x128x12x64xf32>) -> tensor<2x128x768xf32> {
  %0 = loom.reshape %x : tensor<2x128x12x64xf32> to tensor<2x128x768xf32>
  return %0 : tensor<2x128x768xf32>
}

// reshape, both: tokens [B*S, H*D] -> [B, S, H, D] splits both input dims.
// CHECK-LABEL: @reshape_merged_to_split loom.reshape:
// CHECK-SAME: ([(a, b), (c, d)]) -> ([a, b, c, d]) {a=2, b=128, c=12, d=64} linear{{$}}
func.func @reshape_merged_to_split(%x: tensor<256x768xf32>) -> tensor<2x128x12x64xf32> {
  %0 = loom.reshape %x : tensor<256x768xf32> to tensor<2x128x12x64xf32>
  return %0 : tensor<2x128x12x64xf32>
}

// reshape, crossing boundaries: [4, 3] -> [2, 6]; gcd(4, 2) = 2, then the
// rest 2 of input dim 0 is the major part of result dim 1 = (2, 3).
// CHECK-LABEL: @reshape_crossing loom.reshape:
// CHECK-SAME: ([(a, b), c]) -> ([a, (b, c)]) {a=2, b=2, c=3} linear{{$}}
func.func @reshape_crossing(%x: tensor<4x3xf32>) -> tensor<2x6xf32> {
  %0 = loom.reshape %x : tensor<4x3xf32> to tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// reshape with size-1 dims: they get no factor on either side.
// CHECK-LABEL: @reshape_unit_dims loom.reshape:
// CHECK-SAME: ([a, 1, (b, c)]) -> ([a, b, 1, c]) {a=8, b=12, c=64} linear{{$}}
func.func @reshape_unit_dims(%x: tensor<8x1x768xf32>) -> tensor<8x12x1x64xf32> {
  %0 = loom.reshape %x : tensor<8x1x768xf32> to tensor<8x12x1x64xf32>
  return %0 : tensor<8x12x1x64xf32>
}

// reshape, non-refinable: [2, 3] -> [3, 2] has no common factor in order, so
// each tensor keeps its own replicated factors; the last dim, reached by the
// walk from the minor end, stays parallel.
// CHECK-LABEL: @reshape_entangled loom.reshape:
// CHECK-SAME: ([a, b, e]) -> ([c, d, e]) {a=2, b=3, c=3, d=2, e=64} need_replication={a, b, c, d} linear{{$}}
func.func @reshape_entangled(%x: tensor<2x3x64xf32>) -> tensor<3x2x64xf32> {
  %0 = loom.reshape %x : tensor<2x3x64xf32> to tensor<3x2x64xf32>
  return %0 : tensor<3x2x64xf32>
}

// reshape, partly entangled: [4, 6] -> [6, 4] shares a major 2 (gcd(4, 6));
// the minor 2 (gcd(6, 4)) is shared too, but it sits minor to entangled
// factors, so a split of it would be strided: replicated.
// CHECK-LABEL: @reshape_partly_entangled loom.reshape:
// CHECK-SAME: ([(a, b), (c, f)]) -> ([(a, d), (e, f)]) {a=2, b=2, c=3, d=3, e=2, f=2} need_replication={b, c, d, e, f} linear{{$}}
func.func @reshape_partly_entangled(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %0 = loom.reshape %x : tensor<4x6xf32> to tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// transpose: one parallel factor per input dim, at its result dim.
// CHECK-LABEL: @transpose loom.transpose:
// CHECK-SAME: ([a, b, c, d]) -> ([a, c, b, d]) {a=2, b=128, c=12, d=64} linear{{$}}
func.func @transpose(%x: tensor<2x128x12x64xf32>) -> tensor<2x12x128x64xf32> {
  %0 = loom.transpose %x {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x128x12x64xf32>) -> tensor<2x12x128x64xf32>
  return %0 : tensor<2x12x128x64xf32>
}

// slice: dims 0 and 1 are taken whole; the sliced dim 2 replicates (768 in
// the input, 384 in the result, each its own factor).
// CHECK-LABEL: @slice loom.slice:
// CHECK-SAME: ([a, b, c]) -> ([a, b, d]) {a=8, b=128, c=768, d=384} need_replication={c, d} linear{{$}}
func.func @slice(%x: tensor<8x128x768xf32>) -> tensor<8x128x384xf32> {
  %0 = loom.slice %x {starts = array<i64: 0, 0, 384>, limits = array<i64: 8, 128, 768>, strides = array<i64: 1, 1, 1>} : (tensor<8x128x768xf32>) -> tensor<8x128x384xf32>
  return %0 : tensor<8x128x384xf32>
}

// slice, strided: a stride alone (start 0, full limit) still slices.
// CHECK-LABEL: @slice_strided loom.slice:
// CHECK-SAME: ([a, c]) -> ([b, c]) {a=8, b=4, c=16} need_replication={a, b} linear{{$}}
func.func @slice_strided(%x: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 8, 16>, strides = array<i64: 2, 1>} : (tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// pad: the unpadded dim 0 is parallel; the padded dim 1 replicates.
// CHECK-LABEL: @pad loom.pad:
// CHECK-SAME: ([a, b]) -> ([a, c]) {a=4, b=8, c=11} need_replication={b, c} linear{{$}}
func.func @pad(%x: tensor<4x8xf32>) -> tensor<4x11xf32> {
  %0 = loom.pad %x {low = array<i64: 0, 1>, high = array<i64: 0, 2>, interior = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x11xf32>
  return %0 : tensor<4x11xf32>
}

// concat: the axis replicates in every tensor; other dims are one factor
// across both operands and the result.
// CHECK-LABEL: @concat loom.concat:
// CHECK-SAME: ([a, b, c], [a, b, d]) -> ([a, b, e]) {a=8, b=128, c=768, d=256, e=1024} need_replication={c, d, e} linear{{$}}
func.func @concat(%q: tensor<8x128x768xf32>, %k: tensor<8x128x256xf32>) -> tensor<8x128x1024xf32> {
  %0 = loom.concat %q, %k {axis = 2 : i64} : (tensor<8x128x768xf32>, tensor<8x128x256xf32>) -> tensor<8x128x1024xf32>
  return %0 : tensor<8x128x1024xf32>
}

// split: the axis replicates; a piece of size 1 has no factor there.
// CHECK-LABEL: @split loom.split:
// CHECK-SAME: ([a, b]) -> ([a, 1], [a, c]) {a=8, b=8, c=7} need_replication={b, c} linear{{$}}
func.func @split(%x: tensor<8x8xf32>) -> (tensor<8x1xf32>, tensor<8x7xf32>) {
  %0:2 = loom.split %x {axis = 1 : i64, sizes = array<i64: 1, 7>} : (tensor<8x8xf32>) -> (tensor<8x1xf32>, tensor<8x7xf32>)
  return %0#0, %0#1 : tensor<8x1xf32>, tensor<8x7xf32>
}

// ===== Transformer ops =====

// The ids dims and H are parallel; the vocabulary V (d) is op-partitioned: a
// device looks up only the ids among its rows, leaving a partial sum.
// CHECK-LABEL: @embedding loom.embedding:
// CHECK-SAME: ([d, c], [a, b]) -> ([a, b, c]) {a=2, b=8, c=16, d=100} reduction={d} global={d}{{$}}
func.func @embedding(%table: tensor<100x16xf32>, %ids: tensor<2x8xi64>) -> tensor<2x8x16xf32> {
  %0 = loom.embedding %table, %ids : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// A rank-0 id has no dims; only H and V remain.
// CHECK-LABEL: @embedding_scalar_id loom.embedding:
// CHECK-SAME: ([b, a], []) -> ([a]) {a=16, b=100} reduction={b} global={b}{{$}}
func.func @embedding_scalar_id(%table: tensor<100x16xf32>, %id: tensor<i32>) -> tensor<16xf32> {
  %0 = loom.embedding %table, %id : (tensor<100x16xf32>, tensor<i32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// The table gradient sums over positions (reduction a, b); H is parallel; V
// appears only in the result, parallel but globally indexed (a device
// accumulates only the ids in its row range).
// CHECK-LABEL: @embedding_grad loom.embedding_grad:
// CHECK-SAME: ([a, b, c], [a, b]) -> ([d, c]) {a=2, b=8, c=16, d=100} reduction={a, b} global={d}{{$}}
func.func @embedding_grad(%dy: tensor<2x8x16xf32>, %ids: tensor<2x8xi64>) -> tensor<100x16xf32> {
  %0 = loom.embedding_grad %dy, %ids {vocab_size = 100 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<100x16xf32>
  return %0 : tensor<100x16xf32>
}

// The local form of a vocab-parallel lookup: the scalar offset has no
// factor, the rest is the global rule.
// CHECK-LABEL: @embedding_offset loom.embedding:
// CHECK-SAME: ([d, c], [a, b], []) -> ([a, b, c]) {a=2, b=8, c=16, d=50} reduction={d} global={d}{{$}}
func.func @embedding_offset(%table: tensor<50x16xf32>, %ids: tensor<2x8xi64>, %o: index) -> tensor<2x8x16xf32> {
  %0 = loom.embedding %table, %ids offset %o : (tensor<50x16xf32>, tensor<2x8xi64>, index) -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// The local form of the table gradient: the offset has no factor.
// CHECK-LABEL: @embedding_grad_offset loom.embedding_grad:
// CHECK-SAME: ([a, b, c], [a, b], []) -> ([d, c]) {a=2, b=8, c=16, d=50} reduction={a, b} global={d}{{$}}
func.func @embedding_grad_offset(%dy: tensor<2x8x16xf32>, %ids: tensor<2x8xi64>, %o: index) -> tensor<50x16xf32> {
  %0 = loom.embedding_grad %dy, %ids offset %o {vocab_size = 50 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>, index) -> tensor<50x16xf32>
  return %0 : tensor<50x16xf32>
}

// Grouped-query causal self-attention, 8 query heads over 2 key/value heads:
// the query head dim is (hkv, g) = (b, c); one sequence factor (d) spans the
// queries, keys and values alike, op-partitioned (ring attention) and
// globally indexed (the causal mask needs block offsets); D (e) needs
// replication.
// CHECK-LABEL: @attention_causal_gqa loom.attention:
// CHECK-SAME: ([a, (b, c), d, e], [a, b, d, e], [a, b, d, f]) -> ([a, (b, c), d, f]) {a=2, b=2, c=4, d=16, e=32, f=64} need_replication={e} op_partitioned={d} global={d}{{$}}
func.func @attention_causal_gqa(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x16x32xf32>, %v: tensor<2x2x16x64xf32>) -> tensor<2x8x16x64xf32> {
  %0 = loom.attention %q, %k, %v {causal} : (tensor<2x8x16x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x64xf32>) -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// Non-causal cross-attention: Sq (d) is parallel. A [Sq, Skv] mask carries
// the sequence factors and broadcasts over batch and heads.
// CHECK-LABEL: @attention_cross_mask loom.attention:
// CHECK-SAME: ([a, (b, c), d, f], [a, b, e, f], [a, b, e, g], [d, e]) -> ([a, (b, c), d, g]) {a=2, b=2, c=4, d=16, e=24, f=32, g=64} need_replication={f} op_partitioned={e}{{$}}
func.func @attention_cross_mask(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x24x32xf32>, %v: tensor<2x2x24x64xf32>, %m: tensor<16x24xf32>) -> tensor<2x8x16x64xf32> {
  %0 = loom.attention %q, %k, %v, %m : (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>, tensor<16x24xf32>) -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// Causal cross-attention (Sq = 8 < Skv = 16, bottom-right aligned): queries
// (d) split freely but need their global offset; keys and values (e) are
// ring-partitioned and globally indexed too.
// CHECK-LABEL: @attention_cross_causal loom.attention:
// CHECK-SAME: ([a, (b, c), d, f], [a, b, e, f], [a, b, e, g]) -> ([a, (b, c), d, g]) {a=2, b=2, c=4, d=8, e=16, f=32, g=64} need_replication={f} op_partitioned={e} global={d, e}{{$}}
func.func @attention_cross_causal(%q: tensor<2x8x8x32xf32>, %k: tensor<2x2x16x32xf32>, %v: tensor<2x2x16x64xf32>) -> tensor<2x8x8x64xf32> {
  %0 = loom.attention %q, %k, %v {causal} : (tensor<2x8x8x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x64xf32>) -> tensor<2x8x8x64xf32>
  return %0 : tensor<2x8x8x64xf32>
}

// Multi-head attention (Hkv = Hq) with a per-head mask broadcast over the
// queries: g (c) has size 1, and the mask's head dim is the compound (b, c).
// Under ring attention each query block meets every key block, so the mask's
// key dim is a factor of its own (e) that stays whole.
// CHECK-LABEL: @attention_mha_head_mask loom.attention:
// CHECK-SAME: ([a, (b, c), d, f], [a, b, d, f], [a, b, d, g], [1, (b, c), 1, e]) -> ([a, (b, c), d, g]) {a=2, b=4, c=1, d=16, e=16, f=32, g=32} need_replication={e, f} op_partitioned={d}{{$}}
func.func @attention_mha_head_mask(%q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %m: tensor<1x4x1x16xf32>) -> tensor<2x4x16x32xf32> {
  %0 = loom.attention %q, %k, %v, %m : (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<1x4x1x16xf32>) -> tensor<2x4x16x32xf32>
  return %0 : tensor<2x4x16x32xf32>
}

// Backward, non-causal, with a mask: out and dout map like the forward's
// result. g (c), Sq (d) and Dv (g) are reductions: dkey and dvalue lack g
// and Sq, dquery and dkey lack Dv, and each sums over what it lacks.
// CHECK-LABEL: @attention_grad_mask loom.attention_grad:
// CHECK-SAME: ([a, (b, c), d, f], [a, b, e, f], [a, b, e, g], [a, (b, c), d, g], [a, (b, c), d, g], [a, 1, d, e]) -> ([a, (b, c), d, f], [a, b, e, f], [a, b, e, g]) {a=2, b=2, c=4, d=16, e=24, f=32, g=64} reduction={c, d, g} need_replication={f} op_partitioned={e}{{$}}
func.func @attention_grad_mask(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x24x32xf32>, %v: tensor<2x2x24x64xf32>, %o: tensor<2x8x16x64xf32>, %do: tensor<2x8x16x64xf32>, %m: tensor<2x1x16x24xf32>) -> tensor<2x8x16x32xf32> {
  %0:3 = loom.attention_grad %q, %k, %v, %o, %do, %m : (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x1x16x24xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x2x24x32xf32>, tensor<2x2x24x64xf32>)
  return %0#0 : tensor<2x8x16x32xf32>
}

// Backward, causal self-attention: the shared sequence factor (d) is
// op-partitioned and globally indexed as in the forward pass; g (c) and Dv
// (f) stay reductions.
// CHECK-LABEL: @attention_grad_causal loom.attention_grad:
// CHECK-SAME: ([a, (b, c), d, e], [a, b, d, e], [a, b, d, f], [a, (b, c), d, f], [a, (b, c), d, f]) -> ([a, (b, c), d, e], [a, b, d, e], [a, b, d, f]) {a=2, b=2, c=4, d=16, e=32, f=64} reduction={c, f} need_replication={e} op_partitioned={d} global={d}{{$}}
func.func @attention_grad_causal(%q: tensor<2x8x16x32xf32>, %k: tensor<2x2x16x32xf32>, %v: tensor<2x2x16x64xf32>, %o: tensor<2x8x16x64xf32>, %do: tensor<2x8x16x64xf32>) -> tensor<2x8x16x32xf32> {
  %0:3 = loom.attention_grad %q, %k, %v, %o, %do {causal} : (tensor<2x8x16x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x2x16x32xf32>, tensor<2x2x16x64xf32>)
  return %0#0 : tensor<2x8x16x32xf32>
}

// Without positions, S (c) is parallel but globally indexed: a device needs
// its rows' global index. D (d) pairs i with i + D/2 and needs replication.
// CHECK-LABEL: @rope loom.rope:
// CHECK-SAME: ([a, b, c, d]) -> ([a, b, c, d]) {a=2, b=4, c=16, d=8} need_replication={d} global={c}{{$}}
func.func @rope(%x: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %0 = loom.rope %x : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// With [B, S] positions, S is parallel and the positions split with it.
// CHECK-LABEL: @rope_positions loom.rope:
// CHECK-SAME: ([a, b, c, d], [a, c]) -> ([a, b, c, d]) {a=2, b=4, c=16, d=8} need_replication={d}{{$}}
func.func @rope_positions(%x: tensor<2x4x16x8xf32>, %p: tensor<2x16xi64>) -> tensor<2x4x16x8xf32> {
  %0 = loom.rope %x, %p : (tensor<2x4x16x8xf32>, tensor<2x16xi64>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// [S] positions are shared by the batch: B is absent from them.
// CHECK-LABEL: @rope_shared_positions loom.rope:
// CHECK-SAME: ([a, b, c, d], [c]) -> ([a, b, c, d]) {a=2, b=4, c=16, d=8} need_replication={d}{{$}}
func.func @rope_shared_positions(%x: tensor<2x4x16x8xf32>, %p: tensor<16xi32>) -> tensor<2x4x16x8xf32> {
  %0 = loom.rope %x, %p {inverse} : (tensor<2x4x16x8xf32>, tensor<16xi32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// Positions (a, b) are op-partitioned: a block all-reduces its loss sum and
// label count itself, so the loss comes out whole; V (c) is vocab-parallel.
// CHECK-LABEL: @cross_entropy loom.cross_entropy:
// CHECK-SAME: ([a, b, c], [a, b]) -> ([]) {a=2, b=8, c=100} op_partitioned={a, b, c}{{$}}
func.func @cross_entropy(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>) -> tensor<f32> {
  %0 = loom.cross_entropy %logits, %labels : (tensor<2x8x100xf32>, tensor<2x8xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// The gradient keeps the positions and V; both are op-partitioned (the
// global label count, the vocab-parallel softmax); dloss has no factor.
// CHECK-LABEL: @cross_entropy_grad loom.cross_entropy_grad:
// CHECK-SAME: ([a, b, c], [a, b], []) -> ([a, b, c]) {a=2, b=8, c=100} op_partitioned={a, b, c}{{$}}
func.func @cross_entropy_grad(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>, %dloss: tensor<f32>) -> tensor<2x8x100xf32> {
  %0 = loom.cross_entropy_grad %logits, %labels, %dloss : (tensor<2x8x100xf32>, tensor<2x8xi64>, tensor<f32>) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// The summed loss needs no global count: positions become reduction factors
// (a block of positions gives a partial sum); V stays op-partitioned.
// CHECK-LABEL: @cross_entropy_sum loom.cross_entropy:
// CHECK-SAME: ([a, b, c], [a, b]) -> ([]) {a=2, b=8, c=100} reduction={a, b} op_partitioned={c}{{$}}
func.func @cross_entropy_sum(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>) -> tensor<f32> {
  %0 = loom.cross_entropy %logits, %labels {sum} : (tensor<2x8x100xf32>, tensor<2x8xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// The local form on a block of log-probability columns: only the device
// holding a label adds its loss, so V is a globally indexed reduction
// factor; the offset has none.
// CHECK-LABEL: @cross_entropy_offset loom.cross_entropy:
// CHECK-SAME: ([a, b, c], [a, b], []) -> ([]) {a=2, b=8, c=100} reduction={a, b, c} global={c}{{$}}
func.func @cross_entropy_offset(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>, %o: index) -> tensor<f32> {
  %0 = loom.cross_entropy %logits, %labels offset %o {sum} : (tensor<2x8x100xf32>, tensor<2x8xi64>, index) -> tensor<f32>
  return %0 : tensor<f32>
}

// The summed gradient's rows are independent (parallel positions); given
// log-probabilities (offset), so are its columns (parallel, globally
// indexed).
// CHECK-LABEL: @cross_entropy_grad_offset loom.cross_entropy_grad:
// CHECK-SAME: ([a, b, c], [a, b], [], []) -> ([a, b, c]) {a=2, b=8, c=100} global={c}{{$}}
func.func @cross_entropy_grad_offset(%logits: tensor<2x8x100xf32>, %labels: tensor<2x8xi64>, %dloss: tensor<f32>, %o: index) -> tensor<2x8x100xf32> {
  %0 = loom.cross_entropy_grad %logits, %labels, %dloss offset %o {sum} : (tensor<2x8x100xf32>, tensor<2x8xi64>, tensor<f32>, index) -> tensor<2x8x100xf32>
  return %0 : tensor<2x8x100xf32>
}

// A count is a sum over every label dim.
// CHECK-LABEL: @label_count loom.label_count:
// CHECK-SAME: ([a, b]) -> ([]) {a=2, b=8} reduction={a, b}{{$}}
func.func @label_count(%labels: tensor<2x8xi64>) -> tensor<f32> {
  %0 = loom.label_count %labels : (tensor<2x8xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// ===== Reduction, softmax and normalization ops =====

// A mean is a scaled sum: a split reduced dim leaves partial sums, each
// device dividing by the global count (globally indexed); keepdims leaves a
// size-1 dim.
// CHECK-LABEL: @reduce_mean loom.reduce_mean:
// CHECK-SAME: ([a, b, c]) -> ([a, b, 1]) {a=8, b=128, c=768} reduction={c} global={c} linear{{$}}
func.func @reduce_mean(%x: tensor<8x128x768xf32>) -> tensor<8x128x1xf32> {
  %0 = loom.reduce_mean %x {axes = array<i64: 2>, keepdims} : (tensor<8x128x768xf32>) -> tensor<8x128x1xf32>
  return %0 : tensor<8x128x1xf32>
}

// A pending max has no layout, so the reduced dim may not be split.
// CHECK-LABEL: @reduce_max loom.reduce_max:
// CHECK-SAME: ([a, b]) -> ([b]) {a=8, b=128} need_replication={a}{{$}}
func.func @reduce_max(%x: tensor<8x128xf32>) -> tensor<128xf32> {
  %0 = loom.reduce_max %x {axes = array<i64: 0>} : (tensor<8x128xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// Attention scores: batch, heads and queries parallel; the key axis whole.
// CHECK-LABEL: @softmax loom.softmax:
// CHECK-SAME: ([a, b, c, d]) -> ([a, b, c, d]) {a=2, b=4, c=16, d=32} need_replication={d}{{$}}
func.func @softmax(%x: tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32> {
  %0 = loom.softmax %x {axis = 3 : i64} : (tensor<2x4x16x32xf32>) -> tensor<2x4x16x32xf32>
  return %0 : tensor<2x4x16x32xf32>
}

// The axis need not be the last dim.
// CHECK-LABEL: @log_softmax loom.log_softmax:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=8, b=50} need_replication={a}{{$}}
func.func @log_softmax(%x: tensor<8x50xf32>) -> tensor<8x50xf32> {
  %0 = loom.log_softmax %x {axis = 0 : i64} : (tensor<8x50xf32>) -> tensor<8x50xf32>
  return %0 : tensor<8x50xf32>
}

// The gradients sum over the axis inside the op: it stays whole.
// CHECK-LABEL: @softmax_grad loom.softmax_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=16} need_replication={b}{{$}}
func.func @softmax_grad(%y: tensor<4x16xf32>, %dy: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// CHECK-LABEL: @log_softmax_grad loom.log_softmax_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=16} need_replication={b}{{$}}
func.func @log_softmax_grad(%y: tensor<4x16xf32>, %dy: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.log_softmax_grad %y, %dy {axis = 1 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Rows are normalized independently; the hidden dim is whole, in the
// parameters too.
// CHECK-LABEL: @layer_norm loom.layer_norm:
// CHECK-SAME: ([a, b, c], [c], [c]) -> ([a, b, c]) {a=8, b=128, c=768} need_replication={c}{{$}}
func.func @layer_norm(%x: tensor<8x128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<8x128x768xf32> {
  %0 = loom.layer_norm %x, %g, %b : (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<8x128x768xf32>
  return %0 : tensor<8x128x768xf32>
}

// CHECK-LABEL: @layer_norm_no_affine loom.layer_norm:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=8} need_replication={b}{{$}}
func.func @layer_norm_no_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = loom.layer_norm %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: @rms_norm loom.rms_norm:
// CHECK-SAME: ([a, b, c], [c]) -> ([a, b, c]) {a=8, b=128, c=4096} need_replication={c}{{$}}
func.func @rms_norm(%x: tensor<8x128x4096xbf16>, %g: tensor<4096xbf16>) -> tensor<8x128x4096xbf16> {
  %0 = loom.rms_norm %x, %g : (tensor<8x128x4096xbf16>, tensor<4096xbf16>) -> tensor<8x128x4096xbf16>
  return %0 : tensor<8x128x4096xbf16>
}

// A rank-1 input is one row: its only dim is the normalized one.
// CHECK-LABEL: @rms_norm_vector loom.rms_norm:
// CHECK-SAME: ([a], [a]) -> ([a]) {a=64} need_replication={a}{{$}}
func.func @rms_norm_vector(%x: tensor<64xf32>, %g: tensor<64xf32>) -> tensor<64xf32> {
  %0 = loom.rms_norm %x, %g : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// dgamma and dbeta sum over the leading dims: splitting them leaves partial
// sums of dgamma and dbeta while dx is split.
// CHECK-LABEL: @layer_norm_grad loom.layer_norm_grad:
// CHECK-SAME: ([a, b, c], [a, b, c], [c]) -> ([a, b, c], [c], [c]) {a=8, b=128, c=768} reduction={a, b} need_replication={c}{{$}}
func.func @layer_norm_grad(%dy: tensor<8x128x768xf32>, %x: tensor<8x128x768xf32>, %g: tensor<768xf32>) -> (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>) {
  %0:3 = loom.layer_norm_grad %dy, %x, %g : (tensor<8x128x768xf32>, tensor<8x128x768xf32>, tensor<768xf32>) -> (tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>)
  return %0#0, %0#1, %0#2 : tensor<8x128x768xf32>, tensor<768xf32>, tensor<768xf32>
}

// Without gamma no result lacks the leading dims: they are parallel.
// CHECK-LABEL: @layer_norm_grad_no_affine loom.layer_norm_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=8} need_replication={b}{{$}}
func.func @layer_norm_grad_no_affine(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = loom.layer_norm_grad %dy, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: @rms_norm_grad loom.rms_norm_grad:
// CHECK-SAME: ([a, b], [a, b], [b]) -> ([a, b], [b]) {a=16, b=64} reduction={a} need_replication={b}{{$}}
func.func @rms_norm_grad(%dy: tensor<16x64xf32>, %x: tensor<16x64xf32>, %g: tensor<64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>) {
  %0:2 = loom.rms_norm_grad %dy, %x, %g : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<64xf32>) -> (tensor<16x64xf32>, tensor<64xf32>)
  return %0#0, %0#1 : tensor<16x64xf32>, tensor<64xf32>
}

// ===== Elementwise and optimizer ops =====

// sub, mul, div: the pointwise rule of add; a broadcast bias lacks the
// leading factor, a stretched size-1 dim has none.
// CHECK-LABEL: @sub loom.sub:
// CHECK-SAME: ([a, b], [b]) -> ([a, b]) {a=4, b=6} linear{{$}}
func.func @sub(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sub %x, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @mul loom.mul:
// CHECK-SAME: ([a, 1], [1, b]) -> ([a, b]) {a=4, b=5}{{$}}
func.func @mul(%i: tensor<4x1xi32>, %j: tensor<1x5xi32>) -> tensor<4x5xi32> {
  %0 = loom.mul %i, %j : (tensor<4x1xi32>, tensor<1x5xi32>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}

// CHECK-LABEL: @div loom.div:
// CHECK-SAME: ([a, b], [a, 1]) -> ([a, b]) {a=2, b=3}{{$}}
func.func @div(%x: tensor<2x3xf64>, %s: tensor<2x1xf64>) -> tensor<2x3xf64> {
  %0 = loom.div %x, %s : (tensor<2x3xf64>, tensor<2x1xf64>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// Unary math and activations: every dim is a parallel factor.
// CHECK-LABEL: @neg loom.neg:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6} linear{{$}}
func.func @neg(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.neg %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @exp loom.exp:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @exp(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.exp %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @log loom.log:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @log(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.log %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @sqrt loom.sqrt:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @sqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sqrt %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @rsqrt loom.rsqrt:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @rsqrt(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.rsqrt %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @tanh loom.tanh:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.tanh %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @sigmoid loom.sigmoid:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @sigmoid(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.sigmoid %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @relu loom.relu:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @relu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.relu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @silu loom.silu:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @silu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.silu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @gelu loom.gelu:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @gelu(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @gelu_tanh loom.gelu:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @gelu_tanh(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu %x approximate = tanh : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// scale: pointwise.
// CHECK-LABEL: @scale loom.scale:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6} linear{{$}}
func.func @scale(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.scale %x {factor = 0.125} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// cast: pointwise; only the element type changes.
// CHECK-LABEL: @cast loom.cast:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @cast(%x: tensor<4x6xf32>) -> tensor<4x6xbf16> {
  %0 = loom.cast %x : tensor<4x6xf32> to tensor<4x6xbf16>
  return %0 : tensor<4x6xbf16>
}

// dropout: parallel although random, because the mask is a function of the
// global element index (a shard draws exactly its slice of the mask).
// CHECK-LABEL: @dropout loom.dropout:
// CHECK-SAME: ([a, b]) -> ([a, b]) {a=4, b=6} global={a, b}{{$}}
func.func @dropout(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.dropout %x {rate = 0.1, seed = 7} : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Activation gradients: dy, x and dx share every factor.
// CHECK-LABEL: @relu_grad loom.relu_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @relu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.relu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @silu_grad loom.silu_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @silu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.silu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// CHECK-LABEL: @gelu_grad loom.gelu_grad:
// CHECK-SAME: ([a, b], [a, b]) -> ([a, b]) {a=4, b=6}{{$}}
func.func @gelu_grad(%dy: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loom.gelu_grad %dy, %x : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Optimizer updates: pointwise over the parameter; every state tensor is
// split like the parameter (ZeRO-style sharding is a layout of this rule).
// CHECK-LABEL: @sgd_update loom.sgd_update:
// CHECK-SAME: ([a, b], [a, b], [a, b]) -> ([a, b], [a, b]) {a=16, b=64}{{$}}
func.func @sgd_update(%p: tensor<16x64xf32>, %g: tensor<16x64xf32>, %b: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) {
  %0:2 = loom.sgd_update %p, %g, %b {lr = 0.1, momentum = 0.9, weight_decay = 0.0} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>)
  return %0#0, %0#1 : tensor<16x64xf32>, tensor<16x64xf32>
}

// The rank-0 step counter has no factor: every device reads all of it.
// CHECK-LABEL: @adamw_update loom.adamw_update:
// CHECK-SAME: ([a, b], [a, b], [a, b], [a, b], []) -> ([a, b], [a, b], [a, b]) {a=16, b=64}{{$}}
func.func @adamw_update(%p: tensor<16x64xf32>, %step: tensor<i64>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) {
  %0:3 = loom.adamw_update %p, %p, %p, %p, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<i64>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>)
  return %0#0, %0#1, %0#2 : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
}

// ===== Loss-scaling ops =====

// A count is a sum over every dim: a block of a gradient gives a partial
// count (all-reduced over the axes that split the gradient).
// CHECK-LABEL: @nonfinite_count loom.nonfinite_count:
// CHECK-SAME: ([a, b]) -> ([]) {a=16, b=64} reduction={a, b}{{$}}
func.func @nonfinite_count(%g: tensor<16x64xf32>) -> tensor<f32> {
  %0 = loom.nonfinite_count %g : (tensor<16x64xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// A whole-tensor select splits like a copy; the rank-0 condition has no
// factor (every device reads all of it).
// CHECK-LABEL: @select loom.select:
// CHECK-SAME: ([], [a, b], [a, b]) -> ([a, b]) {a=16, b=64}{{$}}
func.func @select(%c: tensor<f32>, %p: tensor<16x64xf32>, %q: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %0 = loom.select %c, %p, %q : (tensor<f32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// The scale's update is rank-0 throughout: no factor, replicated.
// CHECK-LABEL: @update_loss_scale loom.update_loss_scale:
// CHECK-SAME: ([], [], []) -> ([], []) {}{{$}}
func.func @update_loss_scale(%s: tensor<f32>, %t: tensor<i64>, %n: tensor<f32>) -> (tensor<f32>, tensor<i64>) {
  %0:2 = loom.update_loss_scale %s, %t, %n {growth_factor = 2.0 : f64, backoff_factor = 0.5 : f64, growth_interval = 2000 : i64} : (tensor<f32>, tensor<i64>, tensor<f32>) -> (tensor<f32>, tensor<i64>)
  return %0#0, %0#1 : tensor<f32>, tensor<i64>
}

// The back half of the partition phase on hand-written programs in the form
// dist-insert-reshards leaves (strategies, `dist.reshard`, boundary layouts):
// dist-lower-reshards plans each reshard's collectives, dist-partition-spmd
// folds its casts and makes every type local, and the per-rank program run
// on simulated ranks agrees with the single-device program
// (-test-strip-distribution) to 1e-10 (relative) in f64.
//
// RUN: loom-opt %s -test-strip-distribution -o %t.global.mlir
// RUN: loom-opt %s -dist-lower-reshards -dist-partition-spmd -dist-verify-partitioned -o %t.spmd.mlir
// RUN: FileCheck %s --input-file %t.spmd.mlir --check-prefix=IR
//
// Megatron MLP with sequence parallelism: the rows arrive split over tp, are
// all-gathered for the column-parallel matmul, and the row-parallel
// matmul's partial sum is reduce-scattered back to rows for the residual.
// IR-LABEL: func.func @tp_sp_mlp
// IR: dist.all_gather {{.*}} axes ["tp"] dim 0 : tensor<4x8xf64> -> tensor<8x8xf64>
// IR: dist.reduce_scatter {{.*}} axes ["tp"] dim 0 : tensor<8x8xf64> -> tensor<4x8xf64>
// RUN: loom-run %t.global.mlir --entry tp_sp_mlp --outputs %t.sp.ref
// RUN: loom-run %t.spmd.mlir --entry tp_sp_mlp --ranks 2 --outputs %t.sp.spmd
// RUN: loom-run --compare %t.sp.ref %t.sp.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
//
// Ulysses-style heads: activations split over the sequence become split over
// heads (an all_to_all) for grouped-query attention, and back.
// IR-LABEL: func.func @seq_to_heads_attention
// IR: dist.all_to_all
// RUN: loom-run %t.global.mlir --entry seq_to_heads_attention --outputs %t.ul.ref
// RUN: loom-run %t.spmd.mlir --entry seq_to_heads_attention --ranks 2 --outputs %t.ul.spmd
// RUN: loom-run --compare %t.ul.ref %t.ul.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
//
// Data parallel on a 2-D mesh with tensor parallelism and a layer norm: the
// weight gradient is partial over dp and all-reduced.
// RUN: loom-run %t.global.mlir --entry dp_tp_norm --outputs %t.2d.ref
// RUN: loom-run %t.spmd.mlir --entry dp_tp_norm --ranks 4 --outputs %t.2d.spmd
// RUN: loom-run --compare %t.2d.ref %t.2d.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
//
// SAME1: all 1 tensors match
// SAME2: all 2 tensors match

dist.mesh @tp shape [2] axes ["tp"]
dist.mesh @dptp shape [2, 2] axes ["dp", "tp"]

func.func @tp_sp_mlp(%x: tensor<8x8xf64> {loom.param = #loom.param<"x", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [["tp"], []]>},
                     %w1: tensor<8x16xf64> {loom.param = #loom.param<"w1", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@tp, [[], ["tp"]]>},
                     %w2: tensor<16x8xf64> {loom.param = #loom.param<"w2", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@tp, [["tp"], []]>})
    -> (tensor<8x8xf64> {dist.layout = #dist.layout<@tp, [["tp"], []]>}) {
  %xg = dist.reshard %x from <@tp, [["tp"], []]> to <@tp, [[], []]> : tensor<8x8xf64>
  %h = loom.matmul %xg, %w1 {dist.strategy = #dist.strategy<@tp, [[], ["tp"], []]>} : (tensor<8x8xf64>, tensor<8x16xf64>) -> tensor<8x16xf64>
  %a = loom.gelu %h {dist.strategy = #dist.strategy<@tp, [[], ["tp"]]>} : tensor<8x16xf64>
  %p = loom.matmul %a, %w2 {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"]]>} : (tensor<8x16xf64>, tensor<16x8xf64>) -> tensor<8x8xf64>
  %ps = dist.reshard %p from <@tp, [[], []], partial = ["tp"]> to <@tp, [["tp"], []]> : tensor<8x8xf64>
  %y = loom.add %ps, %x {dist.strategy = #dist.strategy<@tp, [["tp"], []]>} : (tensor<8x8xf64>, tensor<8x8xf64>) -> tensor<8x8xf64>
  return %y : tensor<8x8xf64>
}

// q [B, S, 4 heads x 4], kv [B, S, 2 heads x 4], both split over S.
func.func @seq_to_heads_attention(%q: tensor<2x4x16xf64> {loom.param = #loom.param<"q", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [[], ["tp"], []]>},
                                  %kv: tensor<2x4x8xf64> {loom.param = #loom.param<"kv", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [[], ["tp"], []]>})
    -> (tensor<2x4x16xf64> {dist.layout = #dist.layout<@tp, [[], ["tp"], []]>}) {
  %qh = dist.reshard %q from <@tp, [[], ["tp"], []]> to <@tp, [[], [], ["tp"]]> : tensor<2x4x16xf64>
  %kh = dist.reshard %kv from <@tp, [[], ["tp"], []]> to <@tp, [[], [], ["tp"]]> : tensor<2x4x8xf64>
  %q4 = loom.reshape %qh {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : tensor<2x4x16xf64> to tensor<2x4x4x4xf64>
  %qt = loom.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : (tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
  %k4 = loom.reshape %kh {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : tensor<2x4x8xf64> to tensor<2x4x2x4xf64>
  %kt = loom.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : (tensor<2x4x2x4xf64>) -> tensor<2x2x4x4xf64>
  %o = loom.attention %qt, %kt, %kt {causal, dist.strategy = #dist.strategy<@tp, [[], ["tp"], [], [], [], []]>} : (tensor<2x4x4x4xf64>, tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>) -> tensor<2x4x4x4xf64>
  %ot = loom.transpose %o {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@tp, [[], ["tp"], [], []]>} : (tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
  %y = loom.reshape %ot {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : tensor<2x4x4x4xf64> to tensor<2x4x16xf64>
  %ys = dist.reshard %y from <@tp, [[], [], ["tp"]]> to <@tp, [[], ["tp"], []]> : tensor<2x4x16xf64>
  return %ys : tensor<2x4x16xf64>
}

// Rows over dp, the hidden dim over tp: a layer norm needs the hidden dim
// whole (gathered), the column-parallel matmul splits it again, and the
// weight gradient x^T dy contracts the rows (partial over dp).
func.func @dp_tp_norm(%x: tensor<8x8xf64> {loom.param = #loom.param<"x", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@dptp, [["dp"], ["tp"]]>},
                      %w: tensor<8x8xf64> {loom.param = #loom.param<"w", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@dptp, [[], ["tp"]]>},
                      %dy: tensor<8x8xf64> {loom.param = #loom.param<"dy", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@dptp, [["dp"], ["tp"]]>})
    -> (tensor<8x8xf64> {dist.layout = #dist.layout<@dptp, [["dp"], ["tp"]]>},
        tensor<8x8xf64> {dist.layout = #dist.layout<@dptp, [[], ["tp"]]>}) {
  %xr = dist.reshard %x from <@dptp, [["dp"], ["tp"]]> to <@dptp, [["dp"], []]> : tensor<8x8xf64>
  %n = loom.layer_norm %xr {dist.strategy = #dist.strategy<@dptp, [["dp"], []]>} : (tensor<8x8xf64>) -> tensor<8x8xf64>
  %y = loom.matmul %n, %w {dist.strategy = #dist.strategy<@dptp, [["dp"], ["tp"], []]>} : (tensor<8x8xf64>, tensor<8x8xf64>) -> tensor<8x8xf64>
  %dw = loom.matmul %n, %dy {transpose_lhs, dist.strategy = #dist.strategy<@dptp, [[], ["tp"], ["dp"]]>} : (tensor<8x8xf64>, tensor<8x8xf64>) -> tensor<8x8xf64>
  %dwr = dist.reshard %dw from <@dptp, [[], ["tp"]], partial = ["dp"]> to <@dptp, [[], ["tp"]]> : tensor<8x8xf64>
  return %y, %dwr : tensor<8x8xf64>, tensor<8x8xf64>
}

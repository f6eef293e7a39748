// Partitioned programs compute what their global programs compute: each
// function below is a hand-written global program in the form
// dist-lower-reshards leaves (strategies, lowered reshard chains, boundary
// layouts). -test-strip-distribution turns it back into the single-device
// program, which runs on one rank; -dist-partition-spmd turns it into the
// per-rank program, which runs on the simulated ranks of its mesh. Arguments
// are parameters drawn from their initializers over the global tensor, so
// both runs start from the same values; the gathered results must agree to
// 1e-10 (relative) in f64.
//
// RUN: loom-opt %s -test-strip-distribution -o %t.global.mlir
// RUN: loom-opt %s -dist-partition-spmd -dist-verify-partitioned -o %t.spmd.mlir
//
// Data parallel: forward and weight gradient, all-reduced over dp.
// RUN: loom-run %t.global.mlir --entry dp_mlp --outputs %t.dp.ref
// RUN: loom-run %t.spmd.mlir --entry dp_mlp --ranks 2 --outputs %t.dp.spmd
// RUN: loom-run --compare %t.dp.ref %t.dp.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
//
// Megatron column -> row MLP with a bias, all-reduced over tp.
// RUN: loom-run %t.global.mlir --entry megatron_mlp --outputs %t.tp.ref
// RUN: loom-run %t.spmd.mlir --entry megatron_mlp --ranks 2 --outputs %t.tp.spmd
// RUN: loom-run --compare %t.tp.ref %t.tp.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
//
// The same MLP on a 2-D mesh: batch over dp, hidden over tp (4 ranks).
// RUN: loom-run %t.global.mlir --entry mlp_2d --outputs %t.2d.ref
// RUN: loom-run %t.spmd.mlir --entry mlp_2d --ranks 4 --outputs %t.2d.spmd
// RUN: loom-run --compare %t.2d.ref %t.2d.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
//
// Causal grouped-query attention split over key/value heads, with the
// reshapes and transposes into heads and back, and its gradient.
// RUN: loom-run %t.global.mlir --entry gqa_heads --outputs %t.gqa.ref
// RUN: loom-run %t.spmd.mlir --entry gqa_heads --ranks 2 --outputs %t.gqa.spmd
// RUN: loom-run --compare %t.gqa.ref %t.gqa.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME4
//
// reduce_mean over a split dim, all-reduced.
// RUN: loom-run %t.global.mlir --entry mean_split --outputs %t.mean.ref
// RUN: loom-run %t.spmd.mlir --entry mean_split --ranks 2 --outputs %t.mean.spmd
// RUN: loom-run --compare %t.mean.ref %t.mean.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
//
// Dropout and rope under a sequence split (block offsets).
// RUN: loom-run %t.global.mlir --entry seq_split --outputs %t.seq.ref
// RUN: loom-run %t.spmd.mlir --entry seq_split --ranks 2 --outputs %t.seq.spmd
// RUN: loom-run --compare %t.seq.ref %t.seq.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
//
// ZeRO-style data parallelism: the weight and its momentum are sharded over
// dp; the weight is all-gathered before use, the gradient reduce-scattered
// and the update runs on each rank's shard.
// RUN: loom-run %t.global.mlir --entry zero_sgd --outputs %t.zero.ref
// RUN: loom-run %t.spmd.mlir --entry zero_sgd --ranks 2 --outputs %t.zero.spmd
// RUN: loom-run --compare %t.zero.ref %t.zero.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME3
//
// A 3-D mesh (8 ranks): rows over dp, columns over tp, the contraction over
// kk, all-reduced.
// RUN: loom-run %t.global.mlir --entry matmul_3d --outputs %t.3d.ref
// RUN: loom-run %t.spmd.mlir --entry matmul_3d --ranks 8 --outputs %t.3d.spmd
// RUN: loom-run --compare %t.3d.ref %t.3d.spmd --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
//
// SAME1: all 1 tensors match
// SAME2: all 2 tensors match
// SAME3: all 3 tensors match
// SAME4: all 4 tensors match

dist.mesh @dp shape [2] axes ["dp"]
dist.mesh @tp shape [2] axes ["tp"]
dist.mesh @sp shape [2] axes ["sp"]
dist.mesh @dptp shape [2, 2] axes ["dp", "tp"]
dist.mesh @cube shape [2, 2, 2] axes ["dp", "tp", "kk"]

func.func @dp_mlp(%x: tensor<8x4xf64> {loom.param = #loom.param<"x", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@dp, [["dp"], []]>},
                  %w: tensor<4x6xf64> {loom.param = #loom.param<"w", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@dp, [[], []]>},
                  %dy: tensor<8x6xf64> {loom.param = #loom.param<"dy", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@dp, [["dp"], []]>})
    -> (tensor<8x6xf64> {dist.layout = #dist.layout<@dp, [["dp"], []]>},
        tensor<4x6xf64> {dist.layout = #dist.layout<@dp, [[], []]>}) {
  %y = loom.matmul %x, %w {dist.strategy = #dist.strategy<@dp, [["dp"], [], []]>} : (tensor<8x4xf64>, tensor<4x6xf64>) -> tensor<8x6xf64>
  %t = loom.tanh %y {dist.strategy = #dist.strategy<@dp, [["dp"], []]>} : tensor<8x6xf64>
  %dw = loom.matmul %x, %dy {transpose_lhs, dist.strategy = #dist.strategy<@dp, [[], [], ["dp"]]>} : (tensor<8x4xf64>, tensor<8x6xf64>) -> tensor<4x6xf64>
  %l = builtin.unrealized_conversion_cast %dw : tensor<4x6xf64> to tensor<4x6xf64> {dist.layout = #dist.layout<@dp, [[], []], partial = ["dp"]>}
  %r = dist.all_reduce sum %l on @dp axes ["dp"] : tensor<4x6xf64>
  %g = builtin.unrealized_conversion_cast %r : tensor<4x6xf64> to tensor<4x6xf64> {dist.layout = #dist.layout<@dp, [[], []]>}
  return %t, %g : tensor<8x6xf64>, tensor<4x6xf64>
}

func.func @megatron_mlp(%x: tensor<4x8xf64> {loom.param = #loom.param<"x", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [[], []]>},
                        %w1: tensor<8x16xf64> {loom.param = #loom.param<"w1", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@tp, [[], ["tp"]]>},
                        %w2: tensor<16x8xf64> {loom.param = #loom.param<"w2", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@tp, [["tp"], []]>})
    -> (tensor<4x8xf64> {dist.layout = #dist.layout<@tp, [[], []]>}) {
  %b = arith.constant dense<[0.5, -0.25, 0.125, 1.0, -1.0, 0.0, 0.75, -0.5]> : tensor<8xf64>
  %h = loom.matmul %x, %w1 {dist.strategy = #dist.strategy<@tp, [[], ["tp"], []]>} : (tensor<4x8xf64>, tensor<8x16xf64>) -> tensor<4x16xf64>
  %a = loom.gelu %h {dist.strategy = #dist.strategy<@tp, [[], ["tp"]]>} : tensor<4x16xf64>
  %p = loom.matmul %a, %w2 {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"]]>} : (tensor<4x16xf64>, tensor<16x8xf64>) -> tensor<4x8xf64>
  %l = builtin.unrealized_conversion_cast %p : tensor<4x8xf64> to tensor<4x8xf64> {dist.layout = #dist.layout<@tp, [[], []], partial = ["tp"]>}
  %r = dist.all_reduce sum %l on @tp axes ["tp"] : tensor<4x8xf64>
  %s = builtin.unrealized_conversion_cast %r : tensor<4x8xf64> to tensor<4x8xf64> {dist.layout = #dist.layout<@tp, [[], []]>}
  %y = loom.add %s, %b {dist.strategy = #dist.strategy<@tp, [[], []]>} : (tensor<4x8xf64>, tensor<8xf64>) -> tensor<4x8xf64>
  return %y : tensor<4x8xf64>
}

// The batch over dp throughout; the output ends split by rows over dp and
// reduce-scattered over tp along the columns.
func.func @mlp_2d(%x: tensor<8x8xf64> {loom.param = #loom.param<"x", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@dptp, [["dp"], []]>},
                  %w1: tensor<8x16xf64> {loom.param = #loom.param<"w1", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@dptp, [[], ["tp"]]>},
                  %w2: tensor<16x8xf64> {loom.param = #loom.param<"w2", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@dptp, [["tp"], []]>})
    -> (tensor<8x8xf64> {dist.layout = #dist.layout<@dptp, [["dp"], ["tp"]]>}) {
  %h = loom.matmul %x, %w1 {dist.strategy = #dist.strategy<@dptp, [["dp"], ["tp"], []]>} : (tensor<8x8xf64>, tensor<8x16xf64>) -> tensor<8x16xf64>
  %a = loom.silu %h {dist.strategy = #dist.strategy<@dptp, [["dp"], ["tp"]]>} : tensor<8x16xf64>
  %p = loom.matmul %a, %w2 {dist.strategy = #dist.strategy<@dptp, [["dp"], [], ["tp"]]>} : (tensor<8x16xf64>, tensor<16x8xf64>) -> tensor<8x8xf64>
  %l = builtin.unrealized_conversion_cast %p : tensor<8x8xf64> to tensor<4x8xf64> {dist.layout = #dist.layout<@dptp, [["dp"], []], partial = ["tp"]>}
  %r = dist.reduce_scatter %l on @dptp axes ["tp"] dim 1 : tensor<4x8xf64> -> tensor<4x4xf64>
  %s = builtin.unrealized_conversion_cast %r : tensor<4x4xf64> to tensor<8x8xf64> {dist.layout = #dist.layout<@dptp, [["dp"], ["tp"]]>}
  return %s : tensor<8x8xf64>
}

// Query [B, S, 4 heads x 4] and key/value [B, S, 2 heads x 4], hidden split
// over tp: each device holds one key/value head and its group of two query
// heads. Returns the output and the three input gradients (dkey and dvalue
// partial over nothing: the group factor is whole).
func.func @gqa_heads(%q: tensor<2x4x16xf64> {loom.param = #loom.param<"q", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [[], [], ["tp"]]>},
                     %k: tensor<2x4x8xf64> {loom.param = #loom.param<"k", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [[], [], ["tp"]]>},
                     %v: tensor<2x4x8xf64> {loom.param = #loom.param<"v", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [[], [], ["tp"]]>},
                     %do: tensor<2x4x4x4xf64> {loom.param = #loom.param<"do", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [[], ["tp"], [], []]>})
    -> (tensor<2x4x16xf64> {dist.layout = #dist.layout<@tp, [[], [], ["tp"]]>},
        tensor<2x4x4x4xf64> {dist.layout = #dist.layout<@tp, [[], ["tp"], [], []]>},
        tensor<2x2x4x4xf64> {dist.layout = #dist.layout<@tp, [[], ["tp"], [], []]>},
        tensor<2x2x4x4xf64> {dist.layout = #dist.layout<@tp, [[], ["tp"], [], []]>}) {
  %q4 = loom.reshape %q {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : tensor<2x4x16xf64> to tensor<2x4x4x4xf64>
  %qt = loom.transpose %q4 {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : (tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
  %k4 = loom.reshape %k {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : tensor<2x4x8xf64> to tensor<2x4x2x4xf64>
  %kt = loom.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : (tensor<2x4x2x4xf64>) -> tensor<2x2x4x4xf64>
  %v4 = loom.reshape %v {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : tensor<2x4x8xf64> to tensor<2x4x2x4xf64>
  %vt = loom.transpose %v4 {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : (tensor<2x4x2x4xf64>) -> tensor<2x2x4x4xf64>
  %o = loom.attention %qt, %kt, %vt {causal, dist.strategy = #dist.strategy<@tp, [[], ["tp"], [], [], [], []]>} : (tensor<2x4x4x4xf64>, tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>) -> tensor<2x4x4x4xf64>
  %dq, %dk, %dv = loom.attention_grad %qt, %kt, %vt, %o, %do {causal, dist.strategy = #dist.strategy<@tp, [[], ["tp"], [], [], [], []]>} : (tensor<2x4x4x4xf64>, tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>, tensor<2x4x4x4xf64>, tensor<2x4x4x4xf64>) -> (tensor<2x4x4x4xf64>, tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>)
  %ot = loom.transpose %o {permutation = array<i64: 0, 2, 1, 3>, dist.strategy = #dist.strategy<@tp, [[], ["tp"], [], []]>} : (tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
  %y = loom.reshape %ot {dist.strategy = #dist.strategy<@tp, [[], [], ["tp"], []]>} : tensor<2x4x4x4xf64> to tensor<2x4x16xf64>
  return %y, %dq, %dk, %dv : tensor<2x4x16xf64>, tensor<2x4x4x4xf64>, tensor<2x2x4x4xf64>, tensor<2x2x4x4xf64>
}

func.func @mean_split(%x: tensor<4x8xf64> {loom.param = #loom.param<"x", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@tp, [[], ["tp"]]>})
    -> (tensor<4x1xf64> {dist.layout = #dist.layout<@tp, [[], []]>}) {
  %m = loom.reduce_mean %x {axes = array<i64: 1>, keepdims, dist.strategy = #dist.strategy<@tp, [[], ["tp"]]>} : (tensor<4x8xf64>) -> tensor<4x1xf64>
  %l = builtin.unrealized_conversion_cast %m : tensor<4x1xf64> to tensor<4x1xf64> {dist.layout = #dist.layout<@tp, [[], []], partial = ["tp"]>}
  %r = dist.all_reduce sum %l on @tp axes ["tp"] : tensor<4x1xf64>
  %g = builtin.unrealized_conversion_cast %r : tensor<4x1xf64> to tensor<4x1xf64> {dist.layout = #dist.layout<@tp, [[], []]>}
  return %g : tensor<4x1xf64>
}

// [B, H, S, D] with S split over sp: dropout (mask by global index) and rope
// without positions (angle by global row).
func.func @seq_split(%x: tensor<2x2x8x4xf64> {loom.param = #loom.param<"x", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@sp, [[], [], ["sp"], []]>})
    -> (tensor<2x2x8x4xf64> {dist.layout = #dist.layout<@sp, [[], [], ["sp"], []]>},
        tensor<2x2x8x4xf64> {dist.layout = #dist.layout<@sp, [[], [], ["sp"], []]>}) {
  %d = loom.dropout %x {rate = 0.5, seed = 11, dist.strategy = #dist.strategy<@sp, [[], [], ["sp"], []]>} : tensor<2x2x8x4xf64>
  %r = loom.rope %x {theta = 100.0, dist.strategy = #dist.strategy<@sp, [[], [], ["sp"], []]>} : (tensor<2x2x8x4xf64>) -> tensor<2x2x8x4xf64>
  return %d, %r : tensor<2x2x8x4xf64>, tensor<2x2x8x4xf64>
}

func.func @zero_sgd(%x: tensor<4x8xf64> {loom.param = #loom.param<"x", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@dp, [["dp"], []]>},
                    %w: tensor<8x4xf64> {loom.param = #loom.param<"w", init = normal(0.5), decay = false>, dist.layout = #dist.layout<@dp, [["dp"], []]>},
                    %m: tensor<8x4xf64> {loom.param = #loom.param<"m", init = normal(0.1), decay = false>, dist.layout = #dist.layout<@dp, [["dp"], []]>},
                    %dy: tensor<4x4xf64> {loom.param = #loom.param<"dy", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@dp, [["dp"], []]>})
    -> (tensor<4x4xf64> {dist.layout = #dist.layout<@dp, [["dp"], []]>},
        tensor<8x4xf64> {dist.layout = #dist.layout<@dp, [["dp"], []]>},
        tensor<8x4xf64> {dist.layout = #dist.layout<@dp, [["dp"], []]>}) {
  %wl = builtin.unrealized_conversion_cast %w : tensor<8x4xf64> to tensor<4x4xf64> {dist.layout = #dist.layout<@dp, [["dp"], []]>}
  %wg = dist.all_gather %wl on @dp axes ["dp"] dim 0 : tensor<4x4xf64> -> tensor<8x4xf64>
  %wf = builtin.unrealized_conversion_cast %wg : tensor<8x4xf64> to tensor<8x4xf64> {dist.layout = #dist.layout<@dp, [[], []]>}
  %y = loom.matmul %x, %wf {dist.strategy = #dist.strategy<@dp, [["dp"], [], []]>} : (tensor<4x8xf64>, tensor<8x4xf64>) -> tensor<4x4xf64>
  %dw = loom.matmul %x, %dy {transpose_lhs, dist.strategy = #dist.strategy<@dp, [[], [], ["dp"]]>} : (tensor<4x8xf64>, tensor<4x4xf64>) -> tensor<8x4xf64>
  %dl = builtin.unrealized_conversion_cast %dw : tensor<8x4xf64> to tensor<8x4xf64> {dist.layout = #dist.layout<@dp, [[], []], partial = ["dp"]>}
  %ds = dist.reduce_scatter %dl on @dp axes ["dp"] dim 0 : tensor<8x4xf64> -> tensor<4x4xf64>
  %dg = builtin.unrealized_conversion_cast %ds : tensor<4x4xf64> to tensor<8x4xf64> {dist.layout = #dist.layout<@dp, [["dp"], []]>}
  %w2, %m2 = loom.sgd_update %w, %dg, %m {lr = 0.1, momentum = 0.9, weight_decay = 0.01, dist.strategy = #dist.strategy<@dp, [["dp"], []]>} : (tensor<8x4xf64>, tensor<8x4xf64>, tensor<8x4xf64>) -> (tensor<8x4xf64>, tensor<8x4xf64>)
  return %y, %w2, %m2 : tensor<4x4xf64>, tensor<8x4xf64>, tensor<8x4xf64>
}

func.func @matmul_3d(%a: tensor<4x8xf64> {loom.param = #loom.param<"a", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@cube, [["dp"], ["kk"]]>},
                     %b: tensor<8x6xf64> {loom.param = #loom.param<"b", init = normal(1.0), decay = false>, dist.layout = #dist.layout<@cube, [["kk"], ["tp"]]>})
    -> (tensor<4x6xf64> {dist.layout = #dist.layout<@cube, [["dp"], ["tp"]]>}) {
  %c = loom.matmul %a, %b {dist.strategy = #dist.strategy<@cube, [["dp"], ["tp"], ["kk"]]>} : (tensor<4x8xf64>, tensor<8x6xf64>) -> tensor<4x6xf64>
  %t = builtin.unrealized_conversion_cast %c : tensor<4x6xf64> to tensor<2x3xf64> {dist.layout = #dist.layout<@cube, [["dp"], ["tp"]], partial = ["kk"]>}
  %r = dist.all_reduce sum %t on @cube axes ["kk"] : tensor<2x3xf64>
  %g = builtin.unrealized_conversion_cast %r : tensor<2x3xf64> to tensor<4x6xf64> {dist.layout = #dist.layout<@cube, [["dp"], ["tp"]]>}
  %e = loom.exp %g {dist.strategy = #dist.strategy<@cube, [["dp"], ["tp"]]>} : tensor<4x6xf64>
  return %e : tensor<4x6xf64>
}

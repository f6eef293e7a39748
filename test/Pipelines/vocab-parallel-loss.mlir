// Hand-written per-rank programs for the loss and embedding ops agree with
// the single-device ops in f64 (relative error <= 1e-10): vocab-parallel
// embedding and its gradient, vocab-parallel cross-entropy and its gradient,
// and data-parallel cross-entropy whose blocks hold uneven numbers of
// labelled positions (one block none at all). These are the programs
// dist-partition-spmd emits for these ops (docs/Partitioning.md).
//
// RUN: loom-run %s --entry ids --outputs %t.ids.safetensors | FileCheck %s --check-prefix=IDS
// IDS: ids: shape [2, 3] dtype I64
// RUN: loom-run %s --entry labels --outputs %t.labels.safetensors | FileCheck %s --check-prefix=LABELS
// LABELS: labels: shape [2, 4] dtype I64
//
// Vocab-parallel embedding: rows over tp, ids over dp; the lookup is a
// partial sum over tp, all-reduced.
// RUN: loom-run %s --entry emb --inputs %t.ids.safetensors --outputs %t.emb.safetensors
// RUN: loom-run %s --entry emb_vp --ranks 4 --inputs %t.ids.safetensors --outputs %t.emb_vp.safetensors
// RUN: loom-run --compare %t.emb_vp.safetensors %t.emb.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
// SAME1: all 1 tensors match
//
// Its gradient: each tp rank scatters its ids into its rows; the result is
// left partial over dp (the interpreter sums it).
// RUN: loom-run %s --entry emb_grad --inputs %t.ids.safetensors --outputs %t.eg.safetensors
// RUN: loom-run %s --entry emb_grad_vp --ranks 4 --inputs %t.ids.safetensors --outputs %t.eg_vp.safetensors
// RUN: loom-run --compare %t.eg_vp.safetensors %t.eg.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
//
// Cross-entropy and its gradient: the single-device reference.
// RUN: loom-run %s --entry ce --inputs %t.labels.safetensors --outputs %t.ce.safetensors
//
// Batch over dp, vocab over tp.
// RUN: loom-run %s --entry ce_dp_vp --ranks 4 --inputs %t.labels.safetensors --outputs %t.ce_dp_vp.safetensors
// RUN: loom-run --compare %t.ce_dp_vp.safetensors %t.ce.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
// SAME2: all 2 tensors match
//
// Batch over dp, sequence over tp (pure data parallelism): block (1, 0)
// has no labelled position.
// RUN: loom-run %s --entry ce_dp_sp --ranks 4 --inputs %t.labels.safetensors --outputs %t.ce_dp_sp.safetensors
// RUN: loom-run --compare %t.ce_dp_sp.safetensors %t.ce.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
//
// Vocab over [dp, tp] (a two-axis block offset), positions whole.
// RUN: loom-run %s --entry ce_vp2 --ranks 4 --inputs %t.labels.safetensors --outputs %t.ce_vp2.safetensors
// RUN: loom-run --compare %t.ce_vp2.safetensors %t.ce.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2

dist.mesh @m shape [2, 2] axes ["dp", "tp"]

// The integer inputs; the float ones are parameters drawn from --seed.
func.func @ids() -> (tensor<2x3xi64> {loom.name = "ids"}) {
  %ids = arith.constant dense<[[7, 0, 3], [4, 4, 6]]> : tensor<2x3xi64>
  return %ids : tensor<2x3xi64>
}

func.func @labels() -> (tensor<2x4xi64> {loom.name = "labels"}) {
  %labels = arith.constant dense<[[3, -100, 7, 0], [-100, -100, 5, 2]]> : tensor<2x4xi64>
  return %labels : tensor<2x4xi64>
}

func.func @emb(%table: tensor<8x4xf64> {loom.param = #loom.param<"table", init = normal(1.0), decay = false>},
               %ids: tensor<2x3xi64> {loom.name = "ids"})
    -> (tensor<2x3x4xf64> {loom.name = "y"}) {
  %y = loom.embedding %table, %ids : (tensor<8x4xf64>, tensor<2x3xi64>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

func.func @emb_vp(%table: tensor<4x4xf64> {loom.param = #loom.param<"table", init = normal(1.0), decay = false>,
                                           dist.layout = #dist.layout<@m, [["tp"], []]>},
                  %ids: tensor<1x3xi64> {loom.name = "ids", dist.layout = #dist.layout<@m, [["dp"], []]>})
    -> (tensor<1x3x4xf64> {loom.name = "y", dist.layout = #dist.layout<@m, [["dp"], [], []]>}) {
  %i = dist.axis_index @m "tp" : index
  %c4 = arith.constant 4 : index
  %offset = arith.muli %i, %c4 : index
  %part = loom.embedding %table, %ids offset %offset : (tensor<4x4xf64>, tensor<1x3xi64>, index) -> tensor<1x3x4xf64>
  %y = dist.all_reduce sum %part on @m axes ["tp"] : tensor<1x3x4xf64>
  return %y : tensor<1x3x4xf64>
}

func.func @emb_grad(%dy: tensor<2x3x4xf64> {loom.param = #loom.param<"dy", init = normal(1.0), decay = false>},
                    %ids: tensor<2x3xi64> {loom.name = "ids"})
    -> (tensor<8x4xf64> {loom.name = "dtable"}) {
  %g = loom.embedding_grad %dy, %ids {vocab_size = 8 : i64} : (tensor<2x3x4xf64>, tensor<2x3xi64>) -> tensor<8x4xf64>
  return %g : tensor<8x4xf64>
}

func.func @emb_grad_vp(%dy: tensor<1x3x4xf64> {loom.param = #loom.param<"dy", init = normal(1.0), decay = false>,
                                               dist.layout = #dist.layout<@m, [["dp"], [], []]>},
                       %ids: tensor<1x3xi64> {loom.name = "ids", dist.layout = #dist.layout<@m, [["dp"], []]>})
    -> (tensor<4x4xf64> {loom.name = "dtable", dist.layout = #dist.layout<@m, [["tp"], []], partial = ["dp"]>}) {
  %i = dist.axis_index @m "tp" : index
  %c4 = arith.constant 4 : index
  %offset = arith.muli %i, %c4 : index
  %g = loom.embedding_grad %dy, %ids offset %offset {vocab_size = 4 : i64} : (tensor<1x3x4xf64>, tensor<1x3xi64>, index) -> tensor<4x4xf64>
  return %g : tensor<4x4xf64>
}

func.func @ce(%x: tensor<2x4x8xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>},
              %labels: tensor<2x4xi64> {loom.name = "labels"},
              %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"}, tensor<2x4x8xf64> {loom.name = "dlogits"}) {
  %loss = loom.cross_entropy %x, %labels : (tensor<2x4x8xf64>, tensor<2x4xi64>) -> tensor<f64>
  %g = loom.cross_entropy_grad %x, %labels, %dy : (tensor<2x4x8xf64>, tensor<2x4xi64>, tensor<f64>) -> tensor<2x4x8xf64>
  return %loss, %g : tensor<f64>, tensor<2x4x8xf64>
}

func.func @ce_dp_vp(%x: tensor<1x4x4xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>,
                                          dist.layout = #dist.layout<@m, [["dp"], [], ["tp"]]>},
                    %labels: tensor<1x4xi64> {loom.name = "labels", dist.layout = #dist.layout<@m, [["dp"], []]>},
                    %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"},
        tensor<1x4x4xf64> {loom.name = "dlogits", dist.layout = #dist.layout<@m, [["dp"], [], ["tp"]]>}) {
  // This rank's columns of the global log-probabilities.
  %m0 = loom.reduce_max %x {axes = array<i64: 2>, keepdims} : (tensor<1x4x4xf64>) -> tensor<1x4x1xf64>
  %m = dist.all_reduce max %m0 on @m axes ["tp"] : tensor<1x4x1xf64>
  %d = loom.sub %x, %m : (tensor<1x4x4xf64>, tensor<1x4x1xf64>) -> tensor<1x4x4xf64>
  %e = loom.exp %d : tensor<1x4x4xf64>
  %s0 = loom.reduce_sum %e {axes = array<i64: 2>, keepdims} : (tensor<1x4x4xf64>) -> tensor<1x4x1xf64>
  %s = dist.all_reduce sum %s0 on @m axes ["tp"] : tensor<1x4x1xf64>
  %ls = loom.log %s : tensor<1x4x1xf64>
  %z = loom.sub %d, %ls : (tensor<1x4x4xf64>, tensor<1x4x1xf64>) -> tensor<1x4x4xf64>
  %i = dist.axis_index @m "tp" : index
  %c4 = arith.constant 4 : index
  %offset = arith.muli %i, %c4 : index
  // Sum and count, each all-reduced, then one division.
  %p = loom.cross_entropy %z, %labels offset %offset {sum} : (tensor<1x4x4xf64>, tensor<1x4xi64>, index) -> tensor<f64>
  %total = dist.all_reduce sum %p on @m axes ["dp", "tp"] : tensor<f64>
  %n0 = loom.label_count %labels : (tensor<1x4xi64>) -> tensor<f64>
  %n = dist.all_reduce sum %n0 on @m axes ["dp"] : tensor<f64>
  %loss = loom.div %total, %n : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %dyn = loom.div %dy, %n : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %g = loom.cross_entropy_grad %z, %labels, %dyn offset %offset {sum} : (tensor<1x4x4xf64>, tensor<1x4xi64>, tensor<f64>, index) -> tensor<1x4x4xf64>
  return %loss, %g : tensor<f64>, tensor<1x4x4xf64>
}

func.func @ce_dp_sp(%x: tensor<1x2x8xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>,
                                          dist.layout = #dist.layout<@m, [["dp"], ["tp"], []]>},
                    %labels: tensor<1x2xi64> {loom.name = "labels", dist.layout = #dist.layout<@m, [["dp"], ["tp"]]>},
                    %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"},
        tensor<1x2x8xf64> {loom.name = "dlogits", dist.layout = #dist.layout<@m, [["dp"], ["tp"], []]>}) {
  %p = loom.cross_entropy %x, %labels {sum} : (tensor<1x2x8xf64>, tensor<1x2xi64>) -> tensor<f64>
  %total = dist.all_reduce sum %p on @m axes ["dp", "tp"] : tensor<f64>
  %n0 = loom.label_count %labels : (tensor<1x2xi64>) -> tensor<f64>
  %n = dist.all_reduce sum %n0 on @m axes ["dp", "tp"] : tensor<f64>
  %loss = loom.div %total, %n : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %dyn = loom.div %dy, %n : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %g = loom.cross_entropy_grad %x, %labels, %dyn {sum} : (tensor<1x2x8xf64>, tensor<1x2xi64>, tensor<f64>) -> tensor<1x2x8xf64>
  return %loss, %g : tensor<f64>, tensor<1x2x8xf64>
}

func.func @ce_vp2(%x: tensor<2x4x2xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>,
                                        dist.layout = #dist.layout<@m, [[], [], ["dp", "tp"]]>},
                  %labels: tensor<2x4xi64> {loom.name = "labels"},
                  %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"},
        tensor<2x4x2xf64> {loom.name = "dlogits", dist.layout = #dist.layout<@m, [[], [], ["dp", "tp"]]>}) {
  %m0 = loom.reduce_max %x {axes = array<i64: 2>, keepdims} : (tensor<2x4x2xf64>) -> tensor<2x4x1xf64>
  %m = dist.all_reduce max %m0 on @m axes ["dp", "tp"] : tensor<2x4x1xf64>
  %d = loom.sub %x, %m : (tensor<2x4x2xf64>, tensor<2x4x1xf64>) -> tensor<2x4x2xf64>
  %e = loom.exp %d : tensor<2x4x2xf64>
  %s0 = loom.reduce_sum %e {axes = array<i64: 2>, keepdims} : (tensor<2x4x2xf64>) -> tensor<2x4x1xf64>
  %s = dist.all_reduce sum %s0 on @m axes ["dp", "tp"] : tensor<2x4x1xf64>
  %ls = loom.log %s : tensor<2x4x1xf64>
  %z = loom.sub %d, %ls : (tensor<2x4x2xf64>, tensor<2x4x1xf64>) -> tensor<2x4x2xf64>
  // Block index dp * 2 + tp, two columns each.
  %idp = dist.axis_index @m "dp" : index
  %itp = dist.axis_index @m "tp" : index
  %c2 = arith.constant 2 : index
  %b0 = arith.muli %idp, %c2 : index
  %b = arith.addi %b0, %itp : index
  %offset = arith.muli %b, %c2 : index
  // Every rank sees every position: the local means add up to the mean.
  %p = loom.cross_entropy %z, %labels offset %offset : (tensor<2x4x2xf64>, tensor<2x4xi64>, index) -> tensor<f64>
  %loss = dist.all_reduce sum %p on @m axes ["dp", "tp"] : tensor<f64>
  %g = loom.cross_entropy_grad %z, %labels, %dy offset %offset : (tensor<2x4x2xf64>, tensor<2x4xi64>, tensor<f64>, index) -> tensor<2x4x2xf64>
  return %loss, %g : tensor<f64>, tensor<2x4x2xf64>
}

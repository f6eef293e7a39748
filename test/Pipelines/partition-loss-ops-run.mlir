// The loss and embedding partitioners, run by -test-partition-op on global
// functions with strategies, give per-rank programs that agree with the
// single-device ops in f64 (relative error <= 1e-10) for every kind of split
// the sharding rules allow: positions, vocabulary, both, several axes on one
// factor, and labels with uneven numbers of ignored positions per block.
//
// RUN: loom-opt %s -test-partition-op -o %t.local.mlir
// RUN: loom-run %s --entry ids --outputs %t.ids.safetensors
// RUN: loom-run %s --entry labels --outputs %t.labels.safetensors
// RUN: loom-run %s --entry ce --inputs %t.labels.safetensors --outputs %t.ce.safetensors
// RUN: loom-run %s --entry emb --inputs %t.ids.safetensors --outputs %t.emb.safetensors
// RUN: loom-run %s --entry emb_grad --inputs %t.ids.safetensors --outputs %t.eg.safetensors
//
// RUN: loom-run %t.local.mlir --entry ce_dp_vp --inputs %t.labels.safetensors --outputs %t.1.safetensors
// RUN: loom-run --compare %t.1.safetensors %t.ce.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
// RUN: loom-run %t.local.mlir --entry ce_dp_sp --inputs %t.labels.safetensors --outputs %t.2.safetensors
// RUN: loom-run --compare %t.2.safetensors %t.ce.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
// RUN: loom-run %t.local.mlir --entry ce_vp2 --inputs %t.labels.safetensors --outputs %t.3.safetensors
// RUN: loom-run --compare %t.3.safetensors %t.ce.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
// RUN: loom-run %t.local.mlir --entry ce_sp_vp --inputs %t.labels.safetensors --outputs %t.4.safetensors
// RUN: loom-run --compare %t.4.safetensors %t.ce.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME2
// SAME2: all 2 tensors match
//
// RUN: loom-run %t.local.mlir --entry emb_vp --inputs %t.ids.safetensors --outputs %t.5.safetensors
// RUN: loom-run --compare %t.5.safetensors %t.emb.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
// RUN: loom-run %t.local.mlir --entry emb_vp_h --inputs %t.ids.safetensors --outputs %t.6.safetensors
// RUN: loom-run --compare %t.6.safetensors %t.emb.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
// RUN: loom-run %t.local.mlir --entry emb_grad_vp --inputs %t.ids.safetensors --outputs %t.7.safetensors
// RUN: loom-run --compare %t.7.safetensors %t.eg.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
// RUN: loom-run %t.local.mlir --entry emb_grad_vp2 --inputs %t.ids.safetensors --outputs %t.8.safetensors
// RUN: loom-run --compare %t.8.safetensors %t.eg.safetensors --rtol 1e-10 --atol 0 | FileCheck %s --check-prefix=SAME1
// SAME1: all 1 tensors match

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

// ----- Single-device references.

func.func @ce(%x: tensor<2x4x8xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>},
              %labels: tensor<2x4xi64> {loom.name = "labels"},
              %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"}, tensor<2x4x8xf64> {loom.name = "dlogits"}) {
  %loss = loom.cross_entropy %x, %labels : (tensor<2x4x8xf64>, tensor<2x4xi64>) -> tensor<f64>
  %g = loom.cross_entropy_grad %x, %labels, %dy : (tensor<2x4x8xf64>, tensor<2x4xi64>, tensor<f64>) -> tensor<2x4x8xf64>
  return %loss, %g : tensor<f64>, tensor<2x4x8xf64>
}

func.func @emb(%table: tensor<8x4xf64> {loom.param = #loom.param<"table", init = normal(1.0), decay = false>},
               %ids: tensor<2x3xi64> {loom.name = "ids"})
    -> (tensor<2x3x4xf64> {loom.name = "y"}) {
  %y = loom.embedding %table, %ids : (tensor<8x4xf64>, tensor<2x3xi64>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

func.func @emb_grad(%dy: tensor<2x3x4xf64> {loom.param = #loom.param<"dy", init = normal(1.0), decay = false>},
                    %ids: tensor<2x3xi64> {loom.name = "ids"})
    -> (tensor<8x4xf64> {loom.name = "dtable"}) {
  %g = loom.embedding_grad %dy, %ids {vocab_size = 8 : i64} : (tensor<2x3x4xf64>, tensor<2x3xi64>) -> tensor<8x4xf64>
  return %g : tensor<8x4xf64>
}

// ----- Global programs with strategies (partitioned by the RUN line).

// Batch over dp, vocabulary over tp.
func.func @ce_dp_vp(%x: tensor<2x4x8xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>,
                                          dist.layout = #dist.layout<@m, [["dp"], [], ["tp"]]>},
                    %labels: tensor<2x4xi64> {loom.name = "labels", dist.layout = #dist.layout<@m, [["dp"], []]>},
                    %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"},
        tensor<2x4x8xf64> {loom.name = "dlogits", dist.layout = #dist.layout<@m, [["dp"], [], ["tp"]]>}) {
  %loss = loom.cross_entropy %x, %labels {dist.strategy = #dist.strategy<@m, [["dp"], [], ["tp"]]>} : (tensor<2x4x8xf64>, tensor<2x4xi64>) -> tensor<f64>
  %g = loom.cross_entropy_grad %x, %labels, %dy {dist.strategy = #dist.strategy<@m, [["dp"], [], ["tp"]]>} : (tensor<2x4x8xf64>, tensor<2x4xi64>, tensor<f64>) -> tensor<2x4x8xf64>
  return %loss, %g : tensor<f64>, tensor<2x4x8xf64>
}

// Batch over dp, sequence over tp: block (dp 1, tp 0) has no labelled
// position.
func.func @ce_dp_sp(%x: tensor<2x4x8xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>,
                                          dist.layout = #dist.layout<@m, [["dp"], ["tp"], []]>},
                    %labels: tensor<2x4xi64> {loom.name = "labels", dist.layout = #dist.layout<@m, [["dp"], ["tp"]]>},
                    %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"},
        tensor<2x4x8xf64> {loom.name = "dlogits", dist.layout = #dist.layout<@m, [["dp"], ["tp"], []]>}) {
  %loss = loom.cross_entropy %x, %labels {dist.strategy = #dist.strategy<@m, [["dp"], ["tp"], []]>} : (tensor<2x4x8xf64>, tensor<2x4xi64>) -> tensor<f64>
  %g = loom.cross_entropy_grad %x, %labels, %dy {dist.strategy = #dist.strategy<@m, [["dp"], ["tp"], []]>} : (tensor<2x4x8xf64>, tensor<2x4xi64>, tensor<f64>) -> tensor<2x4x8xf64>
  return %loss, %g : tensor<f64>, tensor<2x4x8xf64>
}

// Vocabulary over [dp, tp] (a two-axis block offset).
func.func @ce_vp2(%x: tensor<2x4x8xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>,
                                        dist.layout = #dist.layout<@m, [[], [], ["dp", "tp"]]>},
                  %labels: tensor<2x4xi64> {loom.name = "labels"},
                  %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"},
        tensor<2x4x8xf64> {loom.name = "dlogits", dist.layout = #dist.layout<@m, [[], [], ["dp", "tp"]]>}) {
  %loss = loom.cross_entropy %x, %labels {dist.strategy = #dist.strategy<@m, [[], [], ["dp", "tp"]]>} : (tensor<2x4x8xf64>, tensor<2x4xi64>) -> tensor<f64>
  %g = loom.cross_entropy_grad %x, %labels, %dy {dist.strategy = #dist.strategy<@m, [[], [], ["dp", "tp"]]>} : (tensor<2x4x8xf64>, tensor<2x4xi64>, tensor<f64>) -> tensor<2x4x8xf64>
  return %loss, %g : tensor<f64>, tensor<2x4x8xf64>
}

// Sequence over tp, vocabulary over dp (the minor mesh axis on positions).
func.func @ce_sp_vp(%x: tensor<2x4x8xf64> {loom.param = #loom.param<"logits", init = normal(2.0), decay = false>,
                                          dist.layout = #dist.layout<@m, [[], ["tp"], ["dp"]]>},
                    %labels: tensor<2x4xi64> {loom.name = "labels", dist.layout = #dist.layout<@m, [[], ["tp"]]>},
                    %dy: tensor<f64> {loom.param = #loom.param<"dloss", init = normal(1.0), decay = false>})
    -> (tensor<f64> {loom.name = "loss"},
        tensor<2x4x8xf64> {loom.name = "dlogits", dist.layout = #dist.layout<@m, [[], ["tp"], ["dp"]]>}) {
  %loss = loom.cross_entropy %x, %labels {dist.strategy = #dist.strategy<@m, [[], ["tp"], ["dp"]]>} : (tensor<2x4x8xf64>, tensor<2x4xi64>) -> tensor<f64>
  %g = loom.cross_entropy_grad %x, %labels, %dy {dist.strategy = #dist.strategy<@m, [[], ["tp"], ["dp"]]>} : (tensor<2x4x8xf64>, tensor<2x4xi64>, tensor<f64>) -> tensor<2x4x8xf64>
  return %loss, %g : tensor<f64>, tensor<2x4x8xf64>
}

// Embedding: ids batch over dp, rows over tp; the result stays partial over
// tp (the interpreter sums it).
func.func @emb_vp(%table: tensor<8x4xf64> {loom.param = #loom.param<"table", init = normal(1.0), decay = false>,
                                          dist.layout = #dist.layout<@m, [["tp"], []]>},
                  %ids: tensor<2x3xi64> {loom.name = "ids", dist.layout = #dist.layout<@m, [["dp"], []]>})
    -> (tensor<2x3x4xf64> {loom.name = "y", dist.layout = #dist.layout<@m, [["dp"], [], []], partial = ["tp"]>}) {
  %y = loom.embedding %table, %ids {dist.strategy = #dist.strategy<@m, [["dp"], [], [], ["tp"]]>} : (tensor<8x4xf64>, tensor<2x3xi64>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

// Embedding: hidden over dp, rows over tp, ids whole.
func.func @emb_vp_h(%table: tensor<8x4xf64> {loom.param = #loom.param<"table", init = normal(1.0), decay = false>,
                                            dist.layout = #dist.layout<@m, [["tp"], ["dp"]]>},
                    %ids: tensor<2x3xi64> {loom.name = "ids"})
    -> (tensor<2x3x4xf64> {loom.name = "y", dist.layout = #dist.layout<@m, [[], [], ["dp"]], partial = ["tp"]>}) {
  %y = loom.embedding %table, %ids {dist.strategy = #dist.strategy<@m, [[], [], ["dp"], ["tp"]]>} : (tensor<8x4xf64>, tensor<2x3xi64>) -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}

// Table gradient: positions over dp (partial), rows over tp.
func.func @emb_grad_vp(%dy: tensor<2x3x4xf64> {loom.param = #loom.param<"dy", init = normal(1.0), decay = false>,
                                              dist.layout = #dist.layout<@m, [["dp"], [], []]>},
                       %ids: tensor<2x3xi64> {loom.name = "ids", dist.layout = #dist.layout<@m, [["dp"], []]>})
    -> (tensor<8x4xf64> {loom.name = "dtable", dist.layout = #dist.layout<@m, [["tp"], []], partial = ["dp"]>}) {
  %g = loom.embedding_grad %dy, %ids {vocab_size = 8 : i64, dist.strategy = #dist.strategy<@m, [["dp"], [], [], ["tp"]]>} : (tensor<2x3x4xf64>, tensor<2x3xi64>) -> tensor<8x4xf64>
  return %g : tensor<8x4xf64>
}

// Table gradient: rows over [tp, dp] (axis order against the mesh's).
func.func @emb_grad_vp2(%dy: tensor<2x3x4xf64> {loom.param = #loom.param<"dy", init = normal(1.0), decay = false>},
                        %ids: tensor<2x3xi64> {loom.name = "ids"})
    -> (tensor<8x4xf64> {loom.name = "dtable", dist.layout = #dist.layout<@m, [["tp", "dp"], []]>}) {
  %g = loom.embedding_grad %dy, %ids {vocab_size = 8 : i64, dist.strategy = #dist.strategy<@m, [[], [], [], ["tp", "dp"]]>} : (tensor<2x3x4xf64>, tensor<2x3xi64>) -> tensor<8x4xf64>
  return %g : tensor<8x4xf64>
}

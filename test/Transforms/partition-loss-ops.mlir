// RUN: loom-opt %s -split-input-file -test-partition-op | FileCheck %s

// Vocab-parallel cross-entropy with the batch split too: the row max and the
// row sum of exp are all-reduced over the vocab axis, the summed local loss
// over both axes, the label count over the batch axis, then one division.
// CHECK-LABEL: func.func @ce_dp_vp
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x4x4xf32> {{.*}}, %[[L:[^:]+]]: tensor<1x4xi64> {{.*}}) -> tensor<f32>
// CHECK: %[[M0:.+]] = loom.reduce_max %[[X]] {axes = array<i64: 2>, keepdims} : (tensor<1x4x4xf32>) -> tensor<1x4x1xf32>
// CHECK: %[[M:.+]] = dist.all_reduce max %[[M0]] on @m axes ["tp"]
// CHECK: %[[D:.+]] = loom.sub %[[X]], %[[M]]
// CHECK: %[[E:.+]] = loom.exp %[[D]]
// CHECK: %[[S0:.+]] = loom.reduce_sum %[[E]] {axes = array<i64: 2>, keepdims}
// CHECK: %[[S:.+]] = dist.all_reduce sum %[[S0]] on @m axes ["tp"]
// CHECK: %[[LS:.+]] = loom.log %[[S]]
// CHECK: %[[Z:.+]] = loom.sub %[[D]], %[[LS]]
// CHECK: %[[I:.+]] = dist.axis_index @m "tp" : index
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[O:.+]] = arith.muli %[[I]], %[[C4]] : index
// CHECK: %[[P:.+]] = loom.cross_entropy %[[Z]], %[[L]] offset %[[O]] {sum}
// CHECK: %[[T:.+]] = dist.all_reduce sum %[[P]] on @m axes ["dp", "tp"] : tensor<f32>
// CHECK: %[[N0:.+]] = loom.label_count %[[L]] : (tensor<1x4xi64>) -> tensor<f32>
// CHECK: %[[N:.+]] = dist.all_reduce sum %[[N0]] on @m axes ["dp"] : tensor<f32>
// CHECK: %[[LOSS:.+]] = loom.div %[[T]], %[[N]]
// CHECK-NOT: dist.strategy
// CHECK: return %[[LOSS]]
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @ce_dp_vp(%x: tensor<2x4x8xf32> {dist.layout = #dist.layout<@m, [["dp"], [], ["tp"]]>},
                    %labels: tensor<2x4xi64> {dist.layout = #dist.layout<@m, [["dp"], []]>}) -> tensor<f32> {
  %loss = loom.cross_entropy %x, %labels {dist.strategy = #dist.strategy<@m, [["dp"], [], ["tp"]]>} : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Pure data parallelism: no softmax pieces, the summed loss and the count
// are all-reduced over every position axis; ignore_index is kept.
// CHECK-LABEL: func.func @ce_dp_sp
// CHECK-NOT: reduce_max
// CHECK: %[[P:.+]] = loom.cross_entropy %{{.+}}, %[[L:.+]] {ignore_index = 0 : i64, sum} : (tensor<1x2x8xf32>, tensor<1x2xi64>) -> tensor<f32>
// CHECK: %[[T:.+]] = dist.all_reduce sum %[[P]] on @m axes ["dp", "tp"]
// CHECK: %[[N0:.+]] = loom.label_count %[[L]] {ignore_index = 0 : i64}
// CHECK: %[[N:.+]] = dist.all_reduce sum %[[N0]] on @m axes ["dp", "tp"]
// CHECK: loom.div %[[T]], %[[N]]
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @ce_dp_sp(%x: tensor<2x4x8xf32> {dist.layout = #dist.layout<@m, [["dp"], ["tp"], []]>},
                    %labels: tensor<2x4xi64> {dist.layout = #dist.layout<@m, [["dp"], ["tp"]]>}) -> tensor<f32> {
  %loss = loom.cross_entropy %x, %labels {ignore_index = 0 : i64, dist.strategy = #dist.strategy<@m, [["dp"], ["tp"], []]>} : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Vocabulary over two axes: the offset is the mixed-radix block index
// (dp * 2 + tp) times the 2 local columns; positions whole, so the local
// mean form is all-reduced and no count is needed.
// CHECK-LABEL: func.func @ce_vp2
// CHECK: %[[IDP:.+]] = dist.axis_index @m "dp" : index
// CHECK: %[[ITP:.+]] = dist.axis_index @m "tp" : index
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[B0:.+]] = arith.muli %[[IDP]], %[[C2]] : index
// CHECK: %[[B:.+]] = arith.addi %[[B0]], %[[ITP]] : index
// CHECK: %[[C2B:.+]] = arith.constant 2 : index
// CHECK: %[[O:.+]] = arith.muli %[[B]], %[[C2B]] : index
// CHECK: %[[P:.+]] = loom.cross_entropy %{{.+}}, %{{.+}} offset %[[O]] : (tensor<2x4x2xf32>, tensor<2x4xi64>, index) -> tensor<f32>
// CHECK: %[[LOSS:.+]] = dist.all_reduce sum %[[P]] on @m axes ["dp", "tp"]
// CHECK-NOT: label_count
// CHECK: return %[[LOSS]]
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @ce_vp2(%x: tensor<2x4x8xf32> {dist.layout = #dist.layout<@m, [[], [], ["dp", "tp"]]>},
                  %labels: tensor<2x4xi64>) -> tensor<f32> {
  %loss = loom.cross_entropy %x, %labels {dist.strategy = #dist.strategy<@m, [[], [], ["dp", "tp"]]>} : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The gradient with both splits: dloss is divided by the global count and
// the summed local form takes the log-probabilities and the offset.
// CHECK-LABEL: func.func @ce_grad_dp_vp
// CHECK: loom.sub
// CHECK: %[[Z:.+]] = loom.sub
// CHECK: %[[O:.+]] = arith.muli
// CHECK: %[[N0:.+]] = loom.label_count
// CHECK: %[[N:.+]] = dist.all_reduce sum %[[N0]] on @m axes ["dp"]
// CHECK: %[[DY:.+]] = loom.div %{{.+}}, %[[N]]
// CHECK: %[[G:.+]] = loom.cross_entropy_grad %[[Z]], %{{.+}}, %[[DY]] offset %[[O]] {sum} : (tensor<1x4x4xf32>, tensor<1x4xi64>, tensor<f32>, index) -> tensor<1x4x4xf32>
// CHECK: return %[[G]] : tensor<1x4x4xf32>
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @ce_grad_dp_vp(%x: tensor<2x4x8xf32> {dist.layout = #dist.layout<@m, [["dp"], [], ["tp"]]>},
                         %labels: tensor<2x4xi64> {dist.layout = #dist.layout<@m, [["dp"], []]>},
                         %dy: tensor<f32>) -> tensor<2x4x8xf32> {
  %g = loom.cross_entropy_grad %x, %labels, %dy {dist.strategy = #dist.strategy<@m, [["dp"], [], ["tp"]]>} : (tensor<2x4x8xf32>, tensor<2x4xi64>, tensor<f32>) -> tensor<2x4x8xf32>
  return %g : tensor<2x4x8xf32>
}

// -----

// The gradient with the vocabulary alone split: the mean form (the local
// count is the global one), no division of dloss.
// CHECK-LABEL: func.func @ce_grad_vp
// CHECK-NOT: label_count
// CHECK: loom.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} offset %{{.+}} : (tensor<2x4x4xf32>, tensor<2x4xi64>, tensor<f32>, index) -> tensor<2x4x4xf32>
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @ce_grad_vp(%x: tensor<2x4x8xf32> {dist.layout = #dist.layout<@m, [[], [], ["tp"]]>},
                      %labels: tensor<2x4xi64>, %dy: tensor<f32>) -> tensor<2x4x8xf32> {
  %g = loom.cross_entropy_grad %x, %labels, %dy {dist.strategy = #dist.strategy<@m, [[], [], ["tp"]]>} : (tensor<2x4x8xf32>, tensor<2x4xi64>, tensor<f32>) -> tensor<2x4x8xf32>
  return %g : tensor<2x4x8xf32>
}

// -----

// A vocab-parallel lookup: the offset is the tp coordinate times the 50
// local rows, and the result keeps its local shape (a partial sum).
// CHECK-LABEL: func.func @embedding_vp
// CHECK-SAME: (%[[T:[^:]+]]: tensor<50x16xf32> {{.*}}, %[[IDS:[^:]+]]: tensor<1x8xi64> {{.*}}) -> (tensor<1x8x16xf32>
// CHECK: %[[I:.+]] = dist.axis_index @m "tp" : index
// CHECK: %[[C:.+]] = arith.constant 50 : index
// CHECK: %[[O:.+]] = arith.muli %[[I]], %[[C]] : index
// CHECK: %[[Y:.+]] = loom.embedding %[[T]], %[[IDS]] offset %[[O]] : (tensor<50x16xf32>, tensor<1x8xi64>, index) -> tensor<1x8x16xf32>
// CHECK: return %[[Y]]
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @embedding_vp(%table: tensor<100x16xf32> {dist.layout = #dist.layout<@m, [["tp"], []]>},
                        %ids: tensor<2x8xi64> {dist.layout = #dist.layout<@m, [["dp"], []]>})
    -> (tensor<2x8x16xf32> {dist.layout = #dist.layout<@m, [["dp"], [], []], partial = ["tp"]>}) {
  %y = loom.embedding %table, %ids {dist.strategy = #dist.strategy<@m, [["dp"], [], [], ["tp"]]>} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// Without a vocab split the lookup keeps its global form on local types.
// CHECK-LABEL: func.func @embedding_dp
// CHECK-NOT: axis_index
// CHECK: loom.embedding %{{.+}}, %{{.+}} : (tensor<100x16xf32>, tensor<1x8xi64>) -> tensor<1x8x16xf32>
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @embedding_dp(%table: tensor<100x16xf32>,
                        %ids: tensor<2x8xi64> {dist.layout = #dist.layout<@m, [["dp"], []]>})
    -> (tensor<2x8x16xf32> {dist.layout = #dist.layout<@m, [["dp"], [], []]>}) {
  %y = loom.embedding %table, %ids {dist.strategy = #dist.strategy<@m, [["dp"], [], [], []]>} : (tensor<100x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// The table gradient with rows over [tp, dp]: the offset follows the dim's
// axis order (tp major), and vocab_size becomes the 25 local rows.
// CHECK-LABEL: func.func @embedding_grad_vp
// CHECK: %[[ITP:.+]] = dist.axis_index @m "tp" : index
// CHECK: %[[IDP:.+]] = dist.axis_index @m "dp" : index
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[B0:.+]] = arith.muli %[[ITP]], %[[C2]] : index
// CHECK: %[[B:.+]] = arith.addi %[[B0]], %[[IDP]] : index
// CHECK: %[[C25:.+]] = arith.constant 25 : index
// CHECK: %[[O:.+]] = arith.muli %[[B]], %[[C25]] : index
// CHECK: loom.embedding_grad %{{.+}}, %{{.+}} offset %[[O]] {vocab_size = 25 : i64} : (tensor<2x8x16xf32>, tensor<2x8xi64>, index) -> tensor<25x16xf32>
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @embedding_grad_vp(%dy: tensor<2x8x16xf32>, %ids: tensor<2x8xi64>)
    -> (tensor<100x16xf32> {dist.layout = #dist.layout<@m, [["tp", "dp"], []]>}) {
  %g = loom.embedding_grad %dy, %ids {vocab_size = 100 : i64, dist.strategy = #dist.strategy<@m, [[], [], [], ["tp", "dp"]]>} : (tensor<2x8x16xf32>, tensor<2x8xi64>) -> tensor<100x16xf32>
  return %g : tensor<100x16xf32>
}

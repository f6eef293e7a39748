// RUN: loom-opt %s -split-input-file -test-partition-op -verify-diagnostics

// An operand that is not the block its layout says (the logits arrive
// whole although the strategy splits the vocabulary) is an error naming
// the operand and both shapes.
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @ce_wrong_block(%x: tensor<2x4x8xf32>, %labels: tensor<2x4xi64>) -> tensor<f32> {
  // expected-error @+1 {{'loom.cross_entropy' op operand 0 should be the local block of shape [2, 4, 4] of 'tensor<2x4x8xf32>', got 'tensor<2x4x8xf32>'}}
  %loss = loom.cross_entropy %x, %labels {dist.strategy = #dist.strategy<@m, [[], [], ["tp"]]>} : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// An op already in its local form (with an offset) is not partitioned again.
dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @embedding_local(%table: tensor<100x16xf32> {dist.layout = #dist.layout<@m, [["tp"], []]>},
                           %ids: tensor<2x8xi64>, %o: index) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{'loom.embedding' op is already in its local form (it has an offset) and cannot be partitioned again}}
  %y = loom.embedding %table, %ids offset %o {dist.strategy = #dist.strategy<@m, [[], [], [], ["tp"]]>} : (tensor<100x16xf32>, tensor<2x8xi64>, index) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

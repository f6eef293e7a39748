// Two row-parallel products added (each a partial sum over tp), for the
// plan of a partial strategy (plan-json.mlir).
dist.mesh @m shape [2] axes ["tp"]
func.func @forward(%x: tensor<4x8xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x8xf32>) -> tensor<4x6xf32> {
  %a = loom.matmul %x, %w1 {transpose_rhs, dist.strategy = #dist.strategy<@m, [[], [], ["tp"]]>} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %b = loom.matmul %x, %w2 {transpose_rhs, dist.strategy = #dist.strategy<@m, [[], [], ["tp"]]>} : (tensor<4x8xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %s = loom.add %a, %b : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %s : tensor<4x6xf32>
}

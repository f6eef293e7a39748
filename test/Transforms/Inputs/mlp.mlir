// A two-layer MLP step body on a dp x tp mesh, for the strategy-file cases
// of insert-reshards.mlir and insert-reshards-invalid.mlir.
dist.mesh @mesh shape [2, 4] axes ["dp", "tp"]
func.func @train_step(
    %x: tensor<4x8xf32> {loom.name = "x"},
    %w1: tensor<16x8xf32> {loom.param = #loom.param<"fc1.weight", init = zeros, decay = true>},
    %b1: tensor<16xf32> {loom.param = #loom.param<"fc1.bias", init = zeros, decay = false>},
    %w2: tensor<6x16xf32> {loom.param = #loom.param<"fc2.weight", init = zeros, decay = true>},
    %b2: tensor<6xf32> {loom.param = #loom.param<"fc2.bias", init = zeros, decay = false>})
    -> tensor<4x6xf32> {
  %h = loom.matmul %x, %w1 {transpose_rhs} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %hb = loom.add %h, %b1 : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = loom.relu %hb : tensor<4x16xf32>
  %y = loom.matmul %r, %w2 {transpose_rhs} : (tensor<4x16xf32>, tensor<6x16xf32>) -> tensor<4x6xf32>
  %z = loom.add %y, %b2 : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %z : tensor<4x6xf32>
}

// The single-device step that Inputs/pipeline-2x2.mlir pipelines: the same
// products on whole tensors, one device.
func.func @train_step(
    %x0: tensor<4x8xf32> {loom.name = "x0"},
    %x1: tensor<4x8xf32> {loom.name = "x1"},
    %w0: tensor<8x8xf32> {loom.name = "w0"},
    %w1: tensor<8x8xf32> {loom.name = "w1"})
    -> (tensor<4x8xf32> {loom.name = "out"}, tensor<8x8xf32> {loom.name = "w0"}) {
  %a0 = loom.matmul %x0, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a1 = loom.matmul %x1, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h0 = loom.matmul %a0, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h1 = loom.matmul %a1, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e0 = loom.matmul %h0, %w1 {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e1 = loom.matmul %h1, %w1 {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g0 = loom.matmul %x0, %e0 {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %g1 = loom.matmul %x1, %e1 {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %gs = loom.add %g0, %g1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %w0n = loom.sub %w0, %gs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %out = loom.add %h0, %h1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %out, %w0n : tensor<4x8xf32>, tensor<8x8xf32>
}


// Two steps of @train_step, the second from the first's w0 (the interpreter
// has no calls, so the step is written out twice).
func.func @two_steps(
    %x0: tensor<4x8xf32> {loom.name = "x0"},
    %x1: tensor<4x8xf32> {loom.name = "x1"},
    %w0: tensor<8x8xf32> {loom.name = "w0"},
    %w1: tensor<8x8xf32> {loom.name = "w1"})
    -> (tensor<4x8xf32> {loom.name = "out"}, tensor<8x8xf32> {loom.name = "w0"}) {
  %a0_1 = loom.matmul %x0, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a1_1 = loom.matmul %x1, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h0_1 = loom.matmul %a0_1, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h1_1 = loom.matmul %a1_1, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e0_1 = loom.matmul %h0_1, %w1 {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e1_1 = loom.matmul %h1_1, %w1 {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g0_1 = loom.matmul %x0, %e0_1 {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %g1_1 = loom.matmul %x1, %e1_1 {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %gs_1 = loom.add %g0_1, %g1_1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %w0n_1 = loom.sub %w0, %gs_1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %out_1 = loom.add %h0_1, %h1_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %a0_2 = loom.matmul %x0, %w0n_1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a1_2 = loom.matmul %x1, %w0n_1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h0_2 = loom.matmul %a0_2, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h1_2 = loom.matmul %a1_2, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e0_2 = loom.matmul %h0_2, %w1 {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e1_2 = loom.matmul %h1_2, %w1 {transpose_rhs} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g0_2 = loom.matmul %x0, %e0_2 {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %g1_2 = loom.matmul %x1, %e1_2 {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %gs_2 = loom.add %g0_2, %g1_2 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %w0n_2 = loom.sub %w0n_1, %gs_2 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %out_2 = loom.add %h0_2, %h1_2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %out_2, %w0n_2 : tensor<4x8xf32>, tensor<8x8xf32>
}

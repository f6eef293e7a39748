// The single-device step that pipeline-train.mlir pipelines.
func.func @train_step(
    %ids: tensor<4x8xi64> {loom.input = #loom.input<input_ids>},
    %labels: tensor<4x8xi64> {loom.input = #loom.input<labels>},
    %wte: tensor<256x8xf32> {loom.param = #loom.param<"wte", init = normal(0.5), decay = false>},
    %head: tensor<8x256xf32> {loom.param = #loom.param<"head", init = normal(0.5), decay = false>})
    -> (tensor<f32> {loom.name = "loss"},
        tensor<256x8xf32> {loom.name = "wte"},
        tensor<8x256xf32> {loom.name = "head"}) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %h = loom.embedding %wte, %ids : (tensor<256x8xf32>, tensor<4x8xi64>) -> tensor<4x8x8xf32>
  %logits = loom.matmul %h, %head : (tensor<4x8x8xf32>, tensor<8x256xf32>) -> tensor<4x8x256xf32>
  %loss = loom.cross_entropy %logits, %labels : (tensor<4x8x256xf32>, tensor<4x8xi64>) -> tensor<f32>
  %dlogits = loom.cross_entropy_grad %logits, %labels, %one : (tensor<4x8x256xf32>, tensor<4x8xi64>, tensor<f32>) -> tensor<4x8x256xf32>
  %dh = loom.matmul %dlogits, %head {transpose_rhs} : (tensor<4x8x256xf32>, tensor<8x256xf32>) -> tensor<4x8x8xf32>
  %dheadb = loom.matmul %h, %dlogits {transpose_lhs} : (tensor<4x8x8xf32>, tensor<4x8x256xf32>) -> tensor<4x8x256xf32>
  %dhead = loom.reduce_sum %dheadb {axes = array<i64: 0>} : (tensor<4x8x256xf32>) -> tensor<8x256xf32>
  %shead = loom.scale %dhead {factor = 0.5 : f64} : tensor<8x256xf32>
  %head2 = loom.sub %head, %shead : (tensor<8x256xf32>, tensor<8x256xf32>) -> tensor<8x256xf32>
  %dwte = loom.embedding_grad %dh, %ids {vocab_size = 256 : i64} : (tensor<4x8x8xf32>, tensor<4x8xi64>) -> tensor<256x8xf32>
  %swte = loom.scale %dwte {factor = 0.5 : f64} : tensor<256x8xf32>
  %wte2 = loom.sub %wte, %swte : (tensor<256x8xf32>, tensor<256x8xf32>) -> tensor<256x8xf32>
  return %loss, %wte2, %head2 : tensor<f32>, tensor<256x8xf32>, tensor<8x256xf32>
}
